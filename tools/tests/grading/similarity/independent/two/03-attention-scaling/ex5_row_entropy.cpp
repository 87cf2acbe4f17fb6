// row_entropy: the checks first, over the whole matrix, then one entropy per row.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>

namespace scalebook::ch03 {

namespace {

double entropy_of(const Matrix& w, Index row) {
  double h = 0.0;
  for (Index j = 0; j < w.cols(); ++j) {
    const double p = w(row, j);
    h -= p > 0.0 ? p * std::log(p) : 0.0;
  }
  return h;
}

}  // namespace

Vector row_entropy(const Matrix& weights) {
  require_nonempty("row_entropy", "weights", weights);
  require_finite("row_entropy", "weights", weights);
  if (weights.minCoeff() < 0.0) {
    std::ostringstream message;
    message << "row_entropy: weights " << shape_of(weights) << " holds " << weights.minCoeff() << ", below 0";
    throw ValueError(message.str());
  }
  const Vector totals = weights.rowwise().sum();
  for (Index i = 0; i < totals.size(); ++i) {
    if (std::fabs(totals(i) - 1.0) > 1e-9) {
      std::ostringstream message;
      message << "row_entropy: row " << i << " sums to " << totals(i) << " instead of 1";
      throw ValueError(message.str());
    }
  }
  Vector result(weights.rows());
  for (Index i = 0; i < weights.rows(); ++i) result(i) = entropy_of(weights, i);
  return result;
}

}  // namespace scalebook::ch03
