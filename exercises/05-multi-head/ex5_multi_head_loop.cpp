// Exercise 5.5 — multi_head_loop
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.5. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.5 — the whole layer, in the loop form of the book's listing, with its bugs fixed.
// For each head h: its own projections of the LAYER'S inputs (do not overwrite query, key, value:
// the next head needs them unprojected), its scaled scores from the PROJECTED query and key, its
// weights applied to the PROJECTED values. Concatenate the head outputs in head order (5.3) and
// apply the output projection (out_proj_weight, out_proj_bias) with your linear (5.1).
// You may call your head_attention (5.4) for each head, or write the loop out as the listing does.
// Validate first with require_params and require_inputs.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix multi_head_loop([[maybe_unused]] const Matrix& query,
                                 [[maybe_unused]] const Matrix& key,
                                 [[maybe_unused]] const Matrix& value,
                                 [[maybe_unused]] const MultiHeadParams& params,
                                 [[maybe_unused]] Causal causal) {
  scalebook::not_implemented("5.5", "multi_head_loop");
}

}  // namespace scalebook::ch05
