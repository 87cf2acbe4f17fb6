// Exercise 7.2 — layer_flops: a whole Transformer layer
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.2. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_positive("layer_flops", "n", n) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.2 — the FLOPs of one layer on n tokens: the four projections, attention in every
// head (d_k = d_v = d_model / n_heads), and the MLP's two products. A product of an (a, b) matrix
// by a (b, c) matrix costs 2·a·b·c FLOPs. Validate n and every width; shape.model_width must be a multiple
// of shape.heads (ShapeError otherwise).
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

LayerFlops layer_flops([[maybe_unused]] Index n, [[maybe_unused]] const LayerShape& shape) {
  scalebook::not_implemented("7.2", "layer_flops");
}

}  // namespace scalebook::ch07
