// Exercise 4.2 — masked_softmax
// Chapter 4: causal masking — the future is not available.
//
// The chapter has three exercises, one per file (ex1_causal_mask.cpp to ex3_causal_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 4 (or keep ./workbook watch 4 open)
// until the chapter's checks pass. Stuck? ./workbook hint 4.2. The contract, with every
// function's exact promise, is chapters/04-causal-masking/causal_masking.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 4.2 — softmax over the allowed entries of each row.
// Disallowed entries get −∞ before the softmax, so their weight must come out exactly 0.0 and the
// allowed weights of a row sum to 1. Subtract the maximum of the allowed entries, as chapter 3
// taught. A row with no allowed entry follows the contract's policy (all zeros), never NaN.
// Validate first: empty scores or a mask of another shape is a ShapeError, NaN or infinity in
// the scores a ValueError (lib's require_nonempty, require_finite and shape_of help).
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

Matrix masked_softmax([[maybe_unused]] const Matrix& scores,
                      [[maybe_unused]] const BoolMatrix& allowed) {
  scalebook::not_implemented("4.2", "masked_softmax");
}

}  // namespace scalebook::ch04
