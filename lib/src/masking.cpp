// The causal mask and the masked softmax (see scalebook/masking.hpp).
#include "scalebook/masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  require_positive("causal_mask", "n_q", n_q);
  require_positive("causal_mask", "n_k", n_k);
  const Index offset = alignment == Alignment::BottomRight ? n_k - n_q : 0;
  BoolMatrix allowed(n_q, n_k);
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) allowed(i, j) = j <= i + offset;
  return allowed;
}

Matrix masked_softmax(const Eigen::Ref<const Matrix>& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  if (allowed.rows() != scores.rows() || allowed.cols() != scores.cols()) {
    throw ShapeError("masked_softmax: allowed " + shape_of(allowed) +
                     " must have the shape of scores " + shape_of(scores));
  }
  require_finite("masked_softmax", "scores", scores);
  Matrix weights = Matrix::Zero(scores.rows(), scores.cols());
  for (Index i = 0; i < scores.rows(); ++i) {
    double row_max = -std::numeric_limits<double>::infinity();
    for (Index j = 0; j < scores.cols(); ++j)
      if (allowed(i, j)) row_max = std::max(row_max, scores(i, j));
    if (row_max == -std::numeric_limits<double>::infinity()) continue;  // nothing allowed: zeros
    double sum = 0.0;
    for (Index j = 0; j < scores.cols(); ++j) {
      if (!allowed(i, j)) continue;
      weights(i, j) = std::exp(scores(i, j) - row_max);
      sum += weights(i, j);
    }
    weights.row(i) /= sum;
  }
  return weights;
}

}  // namespace scalebook
