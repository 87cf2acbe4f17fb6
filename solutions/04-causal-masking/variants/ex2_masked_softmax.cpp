// Variant of exercise 4.2 — masked_softmax without −∞: the row starts as zeros and exp is taken of
// the allowed entries only (masked weights stay exactly 0.0); the row is then multiplied by the
// reciprocal of its sum instead of divided by it, which may move a weight's last bit.
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>

namespace scalebook::ch04 {

Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  if (allowed.rows() != scores.rows() || allowed.cols() != scores.cols()) {
    throw ShapeError("masked_softmax: allowed " + shape_of(allowed) +
                     " must have the shape of scores " + shape_of(scores));
  }
  require_finite("masked_softmax", "scores", scores);

  Matrix weights = Matrix::Zero(scores.rows(), scores.cols());  // (n_q, n_k); masked entries stay 0
  for (Index i = 0; i < scores.rows(); ++i) {
    bool any_allowed = false;
    double row_max = 0.0;  // the maximum over the allowed entries only
    for (Index j = 0; j < scores.cols(); ++j) {
      if (!allowed(i, j)) continue;
      row_max = any_allowed ? std::max(row_max, scores(i, j)) : scores(i, j);
      any_allowed = true;
    }
    if (!any_allowed) continue;  // nothing allowed: the policy is a row of zeros, not 0/0 = NaN
    double sum = 0.0;
    for (Index j = 0; j < scores.cols(); ++j) {
      if (!allowed(i, j)) continue;
      weights(i, j) = std::exp(scores(i, j) - row_max);
      sum += weights(i, j);
    }
    weights.row(i) *= 1.0 / sum;  // sum >= 1: the largest allowed entry contributes exp(0)
  }
  return weights;
}

}  // namespace scalebook::ch04
