// Reference for exercise 3.5 — row_entropy.
// Chapter 3: why attention scores are divided by sqrt(d_k).
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Vector row_entropy(const Matrix& weights) {
  require_nonempty("row_entropy", "weights", weights);
  require_finite("row_entropy", "weights", weights);
  Vector entropy(weights.rows());  // (n): one entropy per row, in nats
  for (Index i = 0; i < weights.rows(); ++i) {
    double sum = 0.0, h = 0.0;
    for (Index j = 0; j < weights.cols(); ++j) {
      const double w = weights(i, j);
      if (w < 0.0) {
        std::ostringstream out;
        out << "row_entropy: weights " << shape_of(weights) << " has a negative weight " << w
            << " at (" << i << ", " << j << ')';
        throw ValueError(out.str());
      }
      sum += w;
      if (w > 0.0) h -= w * std::log(w);  // 0 ln 0 = 0: a key with no weight adds nothing
    }
    if (std::abs(sum - 1.0) > 1e-9) {
      std::ostringstream out;
      out.precision(17);
      out << "row_entropy: row " << i << " of weights " << shape_of(weights) << " sums to " << sum
          << ", not 1";
      throw ValueError(out.str());
    }
    entropy(i) = h;
  }
  return entropy;
}

}  // namespace scalebook::ch03
