// Exercise 5.6 — multi_head_fused
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.6. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.6 — the same layer in fused form: project all heads at once with the (E, E) blocks
// of in_proj_weight (three products, not 3H), split Q, K and V into heads (5.2), attend per head,
// concatenate (5.3) and apply the output projection. Same numbers as 5.5, to 1e-12.
// Validate first with require_params and require_inputs.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix multi_head_fused([[maybe_unused]] const Matrix& query,
                                  [[maybe_unused]] const Matrix& key,
                                  [[maybe_unused]] const Matrix& value,
                                  [[maybe_unused]] const MultiHeadParams& params,
                                  [[maybe_unused]] Causal causal) {
  scalebook::not_implemented("5.6", "multi_head_fused");
}

}  // namespace scalebook::ch05
