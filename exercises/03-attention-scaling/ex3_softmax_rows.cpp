// Exercise 3.3 — a softmax that survives large scores
// Chapter 3: why attention scores are divided by sqrt(d_k).
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's
// guidance (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of
// ex1_dot_scores.cpp; the contract is chapters/03-attention-scaling/attention_scaling.hpp.
//
// What to write:
// Turn each ROW of scores into weights: w(i, j) = exp(s(i, j)) / sum over j' of exp(s(i, j')).
// Each row of the result is non-negative and sums to 1. Scores like 1000 or -1000 must give
// correct weights, not NaN or infinity: exp(1000) does not fit in a double.
// Throw ShapeError if scores is empty, ValueError if it holds NaN or infinity.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix softmax_rows([[maybe_unused]] const Matrix& scores) {
  scalebook::not_implemented("3.3", "softmax_rows");
}

}  // namespace scalebook::ch03
