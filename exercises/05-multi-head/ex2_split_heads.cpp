// Exercise 5.2 — split_heads
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.2. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.2 — split the E columns of x into num_heads heads of E / H columns each.
// Head h gets columns h*head_dim .. (h+1)*head_dim - 1, in that order: a contiguous block, never
// every H-th column. Return the heads in head order.
// Validate first: an empty x (n x 0 or 0 x E), num_heads < 1, or E not divisible by num_heads are
// ShapeErrors whose messages start with "split_heads: ". Values are moved, not inspected.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

std::vector<Matrix> split_heads([[maybe_unused]] const Matrix& x,
                                [[maybe_unused]] Index num_heads) {
  scalebook::not_implemented("5.2", "split_heads");
}

}  // namespace scalebook::ch05
