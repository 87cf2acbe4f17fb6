// Exercise 7.4 — attention_memory: naive versus tiled
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.4. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_positive("attention_memory", "n_q", n_q) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.4 — the working memory, in bytes, of naive attention (the whole score matrix) and
// of tiled attention (one tile, and the running state of one query block), as the contract
// defines them. A block is never longer than its sequence.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

MemoryUse attention_memory([[maybe_unused]] Index n_q, [[maybe_unused]] Index n_k,
                                 [[maybe_unused]] Index d_v, [[maybe_unused]] Index block_q,
                                 [[maybe_unused]] Index block_k,
                                 [[maybe_unused]] Index bytes_per_number) {
  scalebook::not_implemented("7.4", "attention_memory");
}

}  // namespace scalebook::ch07
