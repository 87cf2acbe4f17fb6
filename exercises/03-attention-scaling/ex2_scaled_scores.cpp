// Exercise 3.2 — the scaled scores
// Chapter 3: why attention scores are divided by sqrt(d_k).
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's
// guidance (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of
// ex1_dot_scores.cpp; the contract is chapters/03-attention-scaling/attention_scaling.hpp.
//
// What to write:
// Return the scores of 3.1 divided by the square root of d_k, where d_k = q.cols() is the
// length of each query and key vector (not the number of queries or keys).
// Same bad-input rules as 3.1.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix scaled_scores([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k) {
  scalebook::not_implemented("3.2", "scaled_scores");
}

}  // namespace scalebook::ch03
