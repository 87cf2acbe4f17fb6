// The stable row softmax (see scalebook/softmax.hpp).
#include "scalebook/softmax.hpp"

#include <cmath>

namespace scalebook {

Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits) {
  require_nonempty("softmax_rows", "logits", logits);
  require_finite("softmax_rows", "logits", logits);
  Matrix weights(logits.rows(), logits.cols());
  for (Index i = 0; i < logits.rows(); ++i) {
    const double row_max = logits.row(i).maxCoeff();
    double sum = 0.0;
    // Scalar exp: the same bits on every machine, whatever Eigen vectorises.
    for (Index j = 0; j < logits.cols(); ++j) {
      weights(i, j) = std::exp(logits(i, j) - row_max);
      sum += weights(i, j);
    }
    weights.row(i) /= sum;
  }
  return weights;
}

}  // namespace scalebook
