// Reference for exercise 1.1 — fit_scaling.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

#include <algorithm>
#include <cmath>

namespace scalebook::ch01 {

Scaling fit_scaling(const Matrix& train) {
  require_nonempty("fit_scaling", "train", train);
  require_finite("fit_scaling", "train", train);
  const Index n = train.rows(), d = train.cols();
  Scaling s;
  s.mean = train.colwise().mean();  // (1, d): one mean per feature, over the rows
  for (Index c = 0; c < d; ++c) {
    // A sum past the largest double (two values of 1e308): each value divided by n first.
    if (!std::isfinite(s.mean(c))) s.mean(c) = (train.col(c) / static_cast<double>(n)).sum();
  }
  s.scale.resize(d);
  for (Index c = 0; c < d; ++c) {
    // Second pass: deviations from the mean keep their digits. Scaled by the largest before they
    // are squared: squares of 1e-300 underflow to 0 and of 1e200 overflow, while the spread itself
    // is a double like any other, and only a spread of exactly 0 is constant.
    double largest = 0.0;
    for (Index i = 0; i < n; ++i) largest = std::max(largest, std::abs(train(i, c) - s.mean(c)));
    double sum_of_squares = 0.0;
    for (Index i = 0; largest > 0.0 && i < n; ++i) {
      const double r = (train(i, c) - s.mean(c)) / largest;
      sum_of_squares += r * r;
    }
    const double sd = largest * std::sqrt(sum_of_squares / static_cast<double>(n));  // ddof = 0
    s.scale(c) = sd > 0.0 ? sd : 1.0;  // a constant feature: divide by 1, it becomes 0
  }
  return s;
}

}  // namespace scalebook::ch01
