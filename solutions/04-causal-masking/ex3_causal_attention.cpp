// Reference for exercise 4.3 — causal_attention.
// Chapter 4: causal masking — the future is not available.
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

  const double d_k = static_cast<double>(q.cols());
  // matmul* (scalebook/linalg.hpp) are Eigen's products compiled once in lib/: the same numbers
  // as q * k.transpose(), without recompiling Eigen's product code in this file.
  const Matrix scores = matmul_transposed(q, k) / std::sqrt(d_k);                // (n_q, n_k)
  const Matrix weights = masked_softmax(scores, causal_mask(q.rows(), k.rows(), alignment));
  return matmul(weights, v);                                                     // (n_q, d_v)
}

}  // namespace scalebook::ch04
