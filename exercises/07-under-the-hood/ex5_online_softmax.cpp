// Exercise 7.5 — softmax_state and online_softmax
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.5. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_nonempty("online_softmax", "scores", scores) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.5a — the running maximum and the rescaled running sum of one row, in ONE pass.
// −∞ is a masked score (it adds nothing); NaN and +∞ are ValueErrors; an empty row a ShapeError.
//
// Exercise 7.5b — each row's weights exp(x − m) / l from its state. A row of only −∞ is all
// zeros (chapter 4's policy).
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

SoftmaxState softmax_state([[maybe_unused]] const RowVector& row) {
  scalebook::not_implemented("7.5", "softmax_state");
}

Matrix online_softmax([[maybe_unused]] const Matrix& scores) {
  scalebook::not_implemented("7.5", "online_softmax");
}

}  // namespace scalebook::ch07
