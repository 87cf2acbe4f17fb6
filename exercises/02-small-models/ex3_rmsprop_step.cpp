// Exercise 2.3 — rmsprop_step
// Chapter 2: small models on scarce data.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_dense_forward.cpp;
// the contract is chapters/02-small-models/small_models.hpp.
//
// What to write:
// One RMSprop step, entry by entry, in place: first the running mean square
// v = rho * v + (1 - rho) * g^2, then p = p - learning_rate * g / sqrt(v + epsilon).
// Throw ShapeError if param is empty or grad or velocity has another shape; ValueError for NaN
// or infinity, a negative velocity, learning_rate <= 0, rho outside [0, 1) or epsilon <= 0.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

void rmsprop_step([[maybe_unused]] Matrix& param, [[maybe_unused]] const Matrix& grad,
                  [[maybe_unused]] Matrix& velocity, [[maybe_unused]] double learning_rate,
                  [[maybe_unused]] double rho, [[maybe_unused]] double epsilon) {
  scalebook::not_implemented("2.3", "rmsprop_step");
}

}  // namespace scalebook::ch02
