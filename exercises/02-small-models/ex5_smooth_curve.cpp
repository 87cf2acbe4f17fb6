// Exercise 2.5 — smooth_curve
// Chapter 2: small models on scarce data.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_dense_forward.cpp;
// the contract is chapters/02-small-models/small_models.hpp.
//
// What to write:
// DLwP's smoothing: the first smoothed value is the first value; each next one is
// factor * (previous smoothed value) + (1 - factor) * (this value).
// Throw ShapeError if values is empty; ValueError for a NaN or infinite value, or a factor
// outside [0, 1).
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

Curve smooth_curve([[maybe_unused]] const Curve& values,
                                 [[maybe_unused]] double factor) {
  scalebook::not_implemented("2.5", "smooth_curve");
}

}  // namespace scalebook::ch02
