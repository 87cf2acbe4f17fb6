// Variant of exercise 3.3 — softmax_rows entry by entry with std::exp (the reference uses Eigen's
// vectorised exp, which rounds differently) and one multiplication by 1 / sum per entry instead of a
// division: sum >= 1 (the row's maximum gives exp(0) = 1), so 1 / sum is finite and positive.
#include "attention_scaling.hpp"

#include <algorithm>
#include <cmath>

namespace scalebook::ch03 {

Matrix softmax_rows(const Matrix& scores) {
  require_nonempty("softmax_rows", "scores", scores);
  require_finite("softmax_rows", "scores", scores);
  Matrix weights(scores.rows(), scores.cols());
  for (Index i = 0; i < scores.rows(); ++i) {
    double top = scores(i, 0);
    for (Index j = 1; j < scores.cols(); ++j) top = std::max(top, scores(i, j));
    double sum = 0.0;
    for (Index j = 0; j < scores.cols(); ++j) {
      weights(i, j) = std::exp(scores(i, j) - top);  // every exponent <= 0: no overflow
      sum += weights(i, j);
    }
    const double inverse = 1.0 / sum;
    for (Index j = 0; j < scores.cols(); ++j) weights(i, j) *= inverse;
  }
  return weights;
}

}  // namespace scalebook::ch03
