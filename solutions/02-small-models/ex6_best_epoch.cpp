// Reference for exercise 2.6 — best_epoch.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

Index best_epoch(const Curve& values) {
  if (values.empty()) throw ShapeError("best_epoch: values is empty");
  Index best = 0;
  for (std::size_t t = 0; t < values.size(); ++t) {
    if (std::isnan(values[t])) throw ValueError("best_epoch: values[" + std::to_string(t) + "] is NaN");
    if (values[t] < values[static_cast<std::size_t>(best)]) best = static_cast<Index>(t);  // strictly: the first minimum stays
  }
  return best;
}

}  // namespace scalebook::ch02
