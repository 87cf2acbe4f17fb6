// Exercise 7.3 — crossover_length: where n² overtakes n
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.3. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_positive("crossover_length", "d_model", shape.model_width) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.3 — the smallest n at which attention's FLOPs reach those of the projections and
// the MLP together. Write both as functions of n (one grows like n², the other like n), solve the
// inequality, and round the right way. Validate as layer_flops does.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

Index crossover_length([[maybe_unused]] const LayerShape& shape) {
  scalebook::not_implemented("7.3", "crossover_length");
}

}  // namespace scalebook::ch07
