// Exercise 4.2: the allowed scores of a row gathered first, then a softmax over them only.
#include "causal_masking.hpp"

#include <cmath>
#include <vector>

namespace scalebook::ch04 {

Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  if (allowed.rows() != scores.rows() || allowed.cols() != scores.cols())
    throw ShapeError("masked_softmax: allowed " + shape_of(allowed) + " must have the shape of scores " +
                     shape_of(scores));
  require_finite("masked_softmax", "scores", scores);
  Matrix result = Matrix::Zero(scores.rows(), scores.cols());
  std::vector<Index> keys;
  for (Index r = 0; r < scores.rows(); ++r) {
    keys.clear();
    for (Index c = 0; c < scores.cols(); ++c)
      if (allowed(r, c)) keys.push_back(c);
    if (keys.empty()) continue;
    double peak = scores(r, keys.front());
    for (const Index c : keys) peak = std::max(peak, scores(r, c));
    double norm = 0.0;
    for (const Index c : keys) norm += std::exp(scores(r, c) - peak);
    for (const Index c : keys) result(r, c) = std::exp(scores(r, c) - peak) / norm;
  }
  return result;
}

}  // namespace scalebook::ch04
