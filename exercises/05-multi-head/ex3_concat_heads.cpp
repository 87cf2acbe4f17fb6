// Exercise 5.3 — concat_heads
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.3. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.3 — put the heads side by side, in head order: heads[h] becomes columns
// h*head_dim .. (h+1)*head_dim - 1 of the result. concat_heads(split_heads(x, H)) is x again.
// Validate first: no heads, an empty head, or heads of different shapes are ShapeErrors whose
// messages start with "concat_heads: ".
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix concat_heads([[maybe_unused]] const std::vector<Matrix>& heads) {
  scalebook::not_implemented("5.3", "concat_heads");
}

}  // namespace scalebook::ch05
