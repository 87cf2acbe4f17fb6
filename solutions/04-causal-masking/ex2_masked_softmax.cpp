// Reference for exercise 4.2 — masked_softmax.
// Chapter 4: causal masking — the future is not available.
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

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

}  // namespace scalebook::ch04
