// Exercise 5.1 — linear
// Chapter 5: multi-head attention and concatenation.
//
// The chapter has six exercises, one per file (ex1_linear.cpp to ex6_multi_head_fused.cpp):
// saving one recompiles only that exercise. Run ./workbook check 5 (or keep ./workbook watch 5 open)
// until the chapter's checks pass. Stuck? ./workbook hint 5.1. The contract, with every
// function's exact promise and the parameters' layout, is chapters/05-multi-head/multi_head.hpp.
//
// Layout (PyTorch's nn.MultiheadAttention): in_proj_weight (3E, E) is W_q, W_k, W_v stacked by rows;
// a projection is y = x W^T + b; head h owns features h*head_dim .. (h+1)*head_dim - 1.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 5.1 — a linear layer in PyTorch's layout: y = x W^T + b.
// weight is (out, in): one output feature per ROW. Row i of the result is W x_i + b.
// Validate first: empty x or weight, x's width not weight's column count, or a bias that is not one
// entry per output feature are ShapeErrors (lib's require_nonempty, require_shape, shape_of); NaN or
// infinity anywhere is a ValueError (require_finite). Messages start with "linear: ".
// Products: scalebook::matmul_transposed(a, b) is a * b^T, compiled once in lib/.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix linear([[maybe_unused]] const Matrix& x, [[maybe_unused]] const Matrix& weight,
              [[maybe_unused]] const Vector& bias) {
  scalebook::not_implemented("5.1", "linear");
}

}  // namespace scalebook::ch05
