// Exercise 4.1 — causal_mask
// Chapter 4: causal masking — the future is not available.
//
// The chapter has three exercises, one per file (ex1_causal_mask.cpp to ex3_causal_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 4 (or keep ./workbook watch 4 open)
// until the chapter's checks pass. Stuck? ./workbook hint 4.1. The contract, with every
// function's exact promise, is chapters/04-causal-masking/causal_masking.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 4.1 — the causal mask.
// Return an (n_q, n_k) matrix of bools: entry (i, j) is true when query i may attend to key j.
// A query may see its own position and everything before it, never anything after it.
// With Alignment::BottomRight the last query lines up with the last key (work out how far every
// query shifts when n_k and n_q differ). Reject n_q < 1 or n_k < 1 with a ShapeError; lib's
// require_positive() does that with a good message.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

BoolMatrix causal_mask([[maybe_unused]] Index n_q, [[maybe_unused]] Index n_k,
                       [[maybe_unused]] Alignment alignment) {
  scalebook::not_implemented("4.1", "causal_mask");
}

}  // namespace scalebook::ch04
