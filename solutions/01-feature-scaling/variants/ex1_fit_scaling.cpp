// Variant of exercise 1.1 — fit_scaling summed row by row into (1, d) accumulators instead of by
// Eigen's column reductions: another summation order, so the last bits may differ; still two passes
// (the deviations from the mean are squared), in double, with scale 1 only for a spread of exactly 0.
#include "feature_scaling.hpp"

namespace scalebook::ch01 {

Scaling fit_scaling(const Matrix& train) {
  require_nonempty("fit_scaling", "train", train);
  require_finite("fit_scaling", "train", train);
  const double n = static_cast<double>(train.rows());
  RowVector sum = RowVector::Zero(train.cols());
  for (Index i = 0; i < train.rows(); ++i) sum += train.row(i);  // first pass: every feature at once
  Scaling s;
  s.mean = sum / n;
  RowVector squares = RowVector::Zero(train.cols());
  for (Index i = 0; i < train.rows(); ++i) {  // second pass: deviations from the mean, squared
    const RowVector deviation = train.row(i) - s.mean;
    squares += deviation.cwiseProduct(deviation);
  }
  s.scale = (squares / n).cwiseSqrt();  // population standard deviation (ddof = 0)
  for (Index c = 0; c < s.scale.cols(); ++c) {
    if (s.scale(c) == 0.0) s.scale(c) = 1.0;  // a constant feature: it becomes 0 after scaling
  }
  return s;
}

}  // namespace scalebook::ch01
