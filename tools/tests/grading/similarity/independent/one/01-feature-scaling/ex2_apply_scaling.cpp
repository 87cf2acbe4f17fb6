// Exercise 1.2: every entry minus its feature's mean, over its feature's scale.
#include "feature_scaling.hpp"

#include <string>

namespace scalebook::ch01 {

Matrix apply_scaling(const Matrix& x, const Scaling& scaling) {
  require_nonempty("apply_scaling", "x", x);
  const Index features = scaling.mean.cols();
  if (scaling.scale.cols() != features)
    throw ShapeError("apply_scaling: mean " + shape_of(scaling.mean) + " and scale " + shape_of(scaling.scale) +
                     " must have the same length");
  if (x.cols() != features)
    throw ShapeError("apply_scaling: x " + shape_of(x) + " does not have the scaling's " +
                     std::to_string(features) + " features");
  require_finite("apply_scaling", "x", x);
  require_finite("apply_scaling", "mean", scaling.mean);
  require_finite("apply_scaling", "scale", scaling.scale);
  if (scaling.scale.minCoeff() <= 0.0) throw ValueError("apply_scaling: a scale is not positive");
  Matrix scaled = x;
  scaled.rowwise() -= scaling.mean;
  for (Index r = 0; r < scaled.rows(); ++r) {
    for (Index c = 0; c < features; ++c) scaled(r, c) /= scaling.scale(c);
  }
  return scaled;
}

}  // namespace scalebook::ch01
