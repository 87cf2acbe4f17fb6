// Reference for exercise 1.2 — apply_scaling.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

#include <string>

namespace scalebook::ch01 {

Matrix apply_scaling(const Matrix& x, const Scaling& scaling) {
  require_nonempty("apply_scaling", "x", x);
  if (scaling.mean.cols() != scaling.scale.cols()) {
    throw ShapeError("apply_scaling: the scaling's mean " + shape_of(scaling.mean) + " and scale " +
                     shape_of(scaling.scale) + " differ in length");
  }
  if (x.cols() != scaling.mean.cols()) {
    throw ShapeError("apply_scaling: x " + shape_of(x) + " has " + std::to_string(x.cols()) +
                     " features, the scaling " + std::to_string(scaling.mean.cols()));
  }
  require_finite("apply_scaling", "x", x);
  require_finite("apply_scaling", "mean", scaling.mean);
  require_finite("apply_scaling", "scale", scaling.scale);
  if ((scaling.scale.array() <= 0.0).any()) {
    throw ValueError("apply_scaling: every scale must be positive (a constant feature has scale 1)");
  }
  Matrix out(x.rows(), x.cols());
  for (Index c = 0; c < x.cols(); ++c) {
    out.col(c) = (x.col(c).array() - scaling.mean(c)) / scaling.scale(c);
  }
  return out;
}

}  // namespace scalebook::ch01
