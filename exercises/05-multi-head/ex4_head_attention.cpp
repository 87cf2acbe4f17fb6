// Exercise 5.4 — head_attention
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.4. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.4 — one head's attention with its own projections.
// Head h uses rows h*head_dim .. (h+1)*head_dim - 1 of W_q (and the same rows of the W_k and W_v
// blocks, which start at rows E and 2E of in_proj_weight), and the matching entries of the bias.
// Project query, key and value with your linear (5.1), compare the projected query and key, scale
// by the square root of the width of the vectors compared, mask (if causal), softmax, and mix the
// head's projected values. The result is (n_q, head_dim).
// Validate first with the contract's require_params and require_inputs, and reject a head
// outside 0 .. H-1 (ShapeError). Chapter 4's causal_mask and masked_softmax are in lib.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix head_attention([[maybe_unused]] const Matrix& query, [[maybe_unused]] const Matrix& key,
                      [[maybe_unused]] const Matrix& value,
                      [[maybe_unused]] const MultiHeadParams& params, [[maybe_unused]] Index head,
                      [[maybe_unused]] Causal causal) {
  scalebook::not_implemented("5.4", "head_attention");
}

}  // namespace scalebook::ch05
