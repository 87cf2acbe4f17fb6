// Variant of exercise 2.5 — smooth_curve checks every value first, then takes each step as
// std::lerp(v_t, s_(t-1), f) = v_t + f (s_(t-1) − v_t) for values of one sign: the contract's
// f s + (1 − f) v rearranged (rounded differently), exact for f = 0 and for a constant curve.
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

Curve smooth_curve(const Curve& values, double factor) {
  if (values.empty()) throw ShapeError("smooth_curve: values is empty");
  if (!(factor >= 0.0 && factor < 1.0)) {
    throw ValueError("smooth_curve: factor must be in [0, 1), got " + std::to_string(factor));
  }
  for (std::size_t t = 0; t < values.size(); ++t) {
    if (!std::isfinite(values[t])) {
      throw ValueError("smooth_curve: values[" + std::to_string(t) + "] = " + std::to_string(values[t]) +
                       " is not finite");
    }
  }
  Curve smoothed(values.size());
  smoothed[0] = values[0];
  for (std::size_t t = 1; t < values.size(); ++t) smoothed[t] = std::lerp(values[t], smoothed[t - 1], factor);
  return smoothed;
}

}  // namespace scalebook::ch02
