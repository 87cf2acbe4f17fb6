// Exercise 1.1, written from the contract alone: one pass for the sums, one for the spread.
#include "feature_scaling.hpp"

#include <cmath>

namespace scalebook::ch01 {

Scaling fit_scaling(const Matrix& train) {
  require_nonempty("fit_scaling", "train", train);
  require_finite("fit_scaling", "train", train);
  const auto rows = static_cast<double>(train.rows());
  Scaling fitted;
  fitted.mean = RowVector::Zero(train.cols());
  fitted.scale = RowVector::Ones(train.cols());
  for (Index col = 0; col < train.cols(); ++col) {
    const double centre = train.col(col).sum() / rows;
    fitted.mean(col) = centre;
    const double spread = std::sqrt((train.col(col).array() - centre).square().sum() / rows);
    if (spread > 0.0) fitted.scale(col) = spread;
  }
  return fitted;
}

}  // namespace scalebook::ch01
