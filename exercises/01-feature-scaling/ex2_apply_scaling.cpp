// Exercise 1.2 — apply_scaling
// Chapter 1: feature scaling.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_scaling.cpp;
// the contract is chapters/01-feature-scaling/feature_scaling.hpp.
//
// What to write:
// Return x with every entry (i, c) replaced by (x(i, c) - mean(c)) / scale(c): the same
// statistics for every row, whichever rows they were fitted on.
// Throw ShapeError if x is empty, if its number of columns differs from the scaling's length, or
// if the scaling's mean and scale differ in length; ValueError for NaN or infinity in x or the
// scaling, or a scale that is not positive.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "feature_scaling.hpp"

#include <string>

namespace scalebook::ch01 {

Matrix apply_scaling([[maybe_unused]] const Matrix& x, [[maybe_unused]] const Scaling& scaling) {
  scalebook::not_implemented("1.2", "apply_scaling");
}

}  // namespace scalebook::ch01
