// Exercise 2.6 — best_epoch
// Chapter 2: small models on scarce data.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_dense_forward.cpp;
// the contract is chapters/02-small-models/small_models.hpp.
//
// What to write:
// Return the index (0-based) of the smallest value; on a tie, the first one.
// Throw ShapeError if values is empty; ValueError if a value is NaN.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

Index best_epoch([[maybe_unused]] const Curve& values) {
  scalebook::not_implemented("2.6", "best_epoch");
}

}  // namespace scalebook::ch02
