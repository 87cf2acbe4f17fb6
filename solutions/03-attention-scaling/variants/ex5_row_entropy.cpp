// Variant of exercise 3.5 — row_entropy with std::reduce and std::transform_reduce over each row:
// libstdc++ adds four terms at a time, ((a + b) + (c + d)), another order than the reference's loop,
// so the last bits may differ; a weight of exactly 0 adds 0, every positive weight adds −w ln w.
#include "attention_scaling.hpp"

#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>

namespace scalebook::ch03 {

Vector row_entropy(const Matrix& weights) {
  require_nonempty("row_entropy", "weights", weights);
  require_finite("row_entropy", "weights", weights);
  const auto term = [](double w) { return w > 0.0 ? -w * std::log(w) : 0.0; };  // 0 ln 0 = 0
  Vector entropy(weights.rows());
  for (Index i = 0; i < weights.rows(); ++i) {
    const RowVector row = weights.row(i);  // contiguous: the algorithms below may regroup the sums
    Index j = 0;
    if (row.minCoeff(&j) < 0.0) {
      std::ostringstream out;
      out << "row_entropy: weights " << shape_of(weights) << " has the negative weight " << row(j) << " at (" << i
          << ", " << j << ')';
      throw ValueError(out.str());
    }
    const double sum = std::reduce(row.begin(), row.end());
    if (!(std::abs(sum - 1.0) <= 1e-9)) {
      std::ostringstream out;
      out.precision(17);
      out << "row_entropy: row " << i << " of weights " << shape_of(weights) << " sums to " << sum << ", not 1";
      throw ValueError(out.str());
    }
    entropy(i) = std::transform_reduce(row.begin(), row.end(), 0.0, std::plus<>(), term);
  }
  return entropy;
}

}  // namespace scalebook::ch03
