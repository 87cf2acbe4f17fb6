// Exercise 3.5 — how concentrated is attention?
// Chapter 3: why attention scores are divided by sqrt(d_k).
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's
// guidance (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of
// ex1_dot_scores.cpp; the contract is chapters/03-attention-scaling/attention_scaling.hpp.
//
// What to write:
// Return one number per row of weights: its entropy in nats (natural logarithm),
// H = - sum over j of w(i, j) ln w(i, j), where a weight of exactly 0 contributes 0.
// Spread-out rows have high entropy (ln m at most), a row with all weight on one key has 0.
// Throw ShapeError if weights is empty; ValueError if an entry is negative, NaN or infinite, or if
// a row does not sum to 1 within 1e-9.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Vector row_entropy([[maybe_unused]] const Matrix& weights) {
  scalebook::not_implemented("3.5", "row_entropy");
}

}  // namespace scalebook::ch03
