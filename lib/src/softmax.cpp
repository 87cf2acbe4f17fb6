// The stable row softmax (see scalebook/softmax.hpp).
#include "scalebook/softmax.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace scalebook {

Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits) {
  require_nonempty("softmax_rows", "logits", logits);
  for (Index i = 0; i < logits.rows(); ++i) {
    for (Index j = 0; j < logits.cols(); ++j) {
      const double x = logits(i, j);
      if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
        std::ostringstream out;
        out << "softmax_rows: logits " << shape_of(logits) << " has " << x << " at (" << i << ", "
            << j << "); only finite values and -inf (masked) are allowed";
        throw ValueError(out.str());
      }
    }
  }
  Matrix weights(logits.rows(), logits.cols());
  for (Index i = 0; i < logits.rows(); ++i) {
    const double row_max = logits.row(i).maxCoeff();
    if (row_max == -std::numeric_limits<double>::infinity()) {
      weights.row(i).setZero();  // fully masked row: documented policy, all weights zero
      continue;
    }
    // Scalar exp, and exactly 0 for -inf: Eigen 3.4's vectorised exp(-inf) is a tiny denormal
    // (about 5.6e-309), not 0, and a masked weight must be exactly zero.
    double sum = 0.0;
    for (Index j = 0; j < logits.cols(); ++j) {
      const double x = logits(i, j);
      weights(i, j) = x == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(x - row_max);
      sum += weights(i, j);
    }
    weights.row(i) /= sum;
  }
  return weights;
}

}  // namespace scalebook
