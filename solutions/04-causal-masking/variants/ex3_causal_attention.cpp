// Variant of exercise 4.3 — causal_attention scaling the queries by 1/sqrt(d_k) before the product
// instead of the scores after it, and summing each output row over the allowed keys by a loop: the
// same softmax(mask(Q Kᵀ / sqrt(d_k))) V up to rounding, masked keys weighing exactly 0.
#include "causal_masking.hpp"

#include <cmath>

namespace scalebook::ch04 {

Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v, Alignment alignment) {
  require_nonempty("causal_attention", "q", q);
  require_nonempty("causal_attention", "k", k);
  require_nonempty("causal_attention", "v", v);
  require_same_cols("causal_attention", "q", q, "k", k);
  if (v.rows() != k.rows()) {
    throw ShapeError("causal_attention: v " + shape_of(v) + " must have one row per key, k is " +
                     shape_of(k));
  }
  require_finite("causal_attention", "q", q);
  require_finite("causal_attention", "k", k);
  require_finite("causal_attention", "v", v);

  const Matrix scaled_q = q * (1.0 / std::sqrt(static_cast<double>(q.cols())));  // (n_q, d_k)
  const Matrix scores = matmul_transposed(scaled_q, k);                          // (n_q, n_k)
  const BoolMatrix allowed = causal_mask(q.rows(), k.rows(), alignment);
  const Matrix weights = masked_softmax(scores, allowed);
  Matrix out = Matrix::Zero(q.rows(), v.cols());  // (n_q, d_v); a query seeing no key stays 0
  for (Index i = 0; i < q.rows(); ++i) {
    for (Index j = 0; j < k.rows(); ++j) {
      if (allowed(i, j)) out.row(i) += weights(i, j) * v.row(j);
    }
  }
  return out;
}

}  // namespace scalebook::ch04
