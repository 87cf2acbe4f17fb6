// mistake: bottom-right alignment shifts the queries the wrong way (j <= i - (n_k - n_q))
// expect: bottom-right shift with the wrong sign
// Chapter 4 reference — causal masking: the future is not available.
//
// 4.1 causal_mask: which keys each query may see. Query i sees keys 0..i (top-left), or keys
//     0..i + (n_k − n_q) when the queries are the newest tokens after cached keys (bottom-right).
// 4.2 masked_softmax: −∞ on every disallowed score, then a stable softmax of each row. Masked
//     weights come out exactly 0; a row with nothing allowed is all zeros (the contract's policy).
// 4.3 causal_attention: softmax(mask(Q Kᵀ / √d_k)) V.
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  require_positive("causal_mask", "n_q", n_q);
  require_positive("causal_mask", "n_k", n_k);
  // Bottom-right shifts every query right so that the last query lines up with the last key.
  const Index offset = alignment == Alignment::BottomRight ? n_q - n_k : 0;
  BoolMatrix allowed(n_q, n_k);  // (n_q, n_k)
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) allowed(i, j) = j <= i + offset;
  return allowed;
}

Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  if (allowed.rows() != scores.rows() || allowed.cols() != scores.cols()) {
    throw ShapeError("masked_softmax: allowed " + shape_of(allowed) +
                     " must have the shape of scores " + shape_of(scores));
  }
  require_finite("masked_softmax", "scores", scores);

  constexpr double minus_inf = -std::numeric_limits<double>::infinity();
  Matrix weights(scores.rows(), scores.cols());  // (n_q, n_k)
  for (Index i = 0; i < scores.rows(); ++i) {
    double row_max = minus_inf;  // the maximum over the allowed entries only
    for (Index j = 0; j < scores.cols(); ++j) {
      weights(i, j) = allowed(i, j) ? scores(i, j) : minus_inf;
      row_max = std::max(row_max, weights(i, j));
    }
    if (row_max == minus_inf) {  // nothing allowed: the policy is a row of zeros, not 0/0 = NaN
      weights.row(i).setZero();
      continue;
    }
    double sum = 0.0;
    for (Index j = 0; j < scores.cols(); ++j) {
      weights(i, j) = std::exp(weights(i, j) - row_max);  // std::exp(−∞) is exactly 0
      sum += weights(i, j);
    }
    weights.row(i) /= sum;
  }
  return weights;
}

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
  const Matrix scores = matmul_transposed(q, k) / std::sqrt(d_k);                    // (n_q, n_k)
  const Matrix weights = masked_softmax(scores, causal_mask(q.rows(), k.rows(), alignment));
  return matmul(weights, v);                                                         // (n_q, d_v)
}

}  // namespace scalebook::ch04
