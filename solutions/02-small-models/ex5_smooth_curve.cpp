// Reference for exercise 2.5 — smooth_curve.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

Curve smooth_curve(const Curve& values, double factor) {
  if (values.empty()) throw ShapeError("smooth_curve: values is empty");
  if (!(factor >= 0.0 && factor < 1.0)) {
    throw ValueError("smooth_curve: factor must be in [0, 1), got " + std::to_string(factor));
  }
  Curve smoothed;
  smoothed.reserve(values.size());
  for (std::size_t t = 0; t < values.size(); ++t) {
    const double v = values[t];
    if (!std::isfinite(v)) throw ValueError("smooth_curve: values[" + std::to_string(t) + "] is not finite");
    if (t == 0) smoothed.push_back(v);  // the curve starts at its first value
    else smoothed.push_back(factor * smoothed.back() + (1.0 - factor) * v);
  }
  return smoothed;
}

}  // namespace scalebook::ch02
