// Exercise 3.5: validate a row, then add up -w ln w over its positive weights.
#include "attention_scaling.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch03 {

Vector row_entropy(const Matrix& weights) {
  require_nonempty("row_entropy", "weights", weights);
  require_finite("row_entropy", "weights", weights);
  if ((weights.array() < 0.0).any()) throw ValueError("row_entropy: weights " + shape_of(weights) + " has a negative entry");
  Vector h = Vector::Zero(weights.rows());
  for (Index r = 0; r < weights.rows(); ++r) {
    const double total = weights.row(r).sum();
    if (!(std::abs(total - 1.0) <= 1e-9))
      throw ValueError("row_entropy: row " + std::to_string(r) + " sums to " + std::to_string(total) + ", not 1");
    for (const double p : weights.row(r)) {
      if (p != 0.0) h(r) += -p * std::log(p);
    }
  }
  return h;
}

}  // namespace scalebook::ch03
