// Reference for exercise 1.1 — fit_scaling.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

#include <cmath>

namespace scalebook::ch01 {

Scaling fit_scaling(const Matrix& train) {
  require_nonempty("fit_scaling", "train", train);
  require_finite("fit_scaling", "train", train);
  const Index n = train.rows(), d = train.cols();
  Scaling s;
  s.mean = train.colwise().mean();  // (1, d): one mean per feature, over the rows
  s.scale.resize(d);
  for (Index c = 0; c < d; ++c) {
    double sum_of_squares = 0.0;  // second pass: deviations from the mean keep their digits
    for (Index i = 0; i < n; ++i) sum_of_squares += (train(i, c) - s.mean(c)) * (train(i, c) - s.mean(c));
    const double sd = std::sqrt(sum_of_squares / static_cast<double>(n));  // ddof = 0
    s.scale(c) = sd > 0.0 ? sd : 1.0;  // a constant feature: divide by 1, it becomes 0
  }
  return s;
}

}  // namespace scalebook::ch01
