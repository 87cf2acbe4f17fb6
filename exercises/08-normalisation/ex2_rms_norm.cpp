// Exercise 8.2 — RMSNorm, the same without the centring
// Chapter 8: normalisation, what keeps activations at the scale attention assumes.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_layer_norm.cpp; the
// contract is chapters/08-normalisation/normalisation.hpp.
//
// What to write:
// For each ROW i of x: its mean square ms = the mean of x(i, j)^2 over its d entries (no mean
// subtracted), and then
//   y(i, j) = x(i, j) / sqrt(ms + eps) * gamma(j).
// There is no beta. Entries beyond 1e154 are valid, and their squares overflow a double: the
// result must still be right and finite.
// Throw ShapeError if x is empty or gamma is not (1, d); ValueError if x or gamma holds NaN or
// infinity, or eps is not a finite number above 0.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch08 {

Matrix rms_norm([[maybe_unused]] const Matrix& x, [[maybe_unused]] const RowVector& gamma,
                [[maybe_unused]] double eps) {
  scalebook::not_implemented("8.2", "rms_norm");
}

}  // namespace scalebook::ch08
