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
    weights.row(i) = (logits.row(i).array() - row_max).exp().matrix();
    weights.row(i) /= weights.row(i).sum();
  }
  return weights;
}

}  // namespace scalebook
