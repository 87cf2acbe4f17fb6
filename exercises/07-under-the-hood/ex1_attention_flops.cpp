// Exercise 7.1 — attention_flops: what one attention costs
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.1. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_positive("attention_flops", "n_q", n_q) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.1 — the FLOPs of softmax(Q Kᵀ / sqrt(d_k)) V, stage by stage.
// Count with the contract's convention: a multiply-add is TWO FLOPs, so one dot product of
// length d costs 2·d; the softmax costs 5 FLOPs per score. Use Count (64-bit) arithmetic: at
// n = 2^20 the counts overflow an int.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

StageFlops attention_flops([[maybe_unused]] Index n_q, [[maybe_unused]] Index n_k,
                               [[maybe_unused]] Index d_k, [[maybe_unused]] Index d_v) {
  scalebook::not_implemented("7.1", "attention_flops");
}

}  // namespace scalebook::ch07
