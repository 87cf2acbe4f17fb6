// Exercise 2.2 — dense_backward
// Chapter 2: small models on scarce data.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_dense_forward.cpp;
// the contract is chapters/02-small-models/small_models.hpp.
//
// What to write:
// The backward pass of dense_forward(x, w, b, relu). grad_out is dL/dy, (n, out).
// With z = x w + b: dz = grad_out where z > 0 and 0 where z <= 0 when `relu` (just grad_out
// otherwise); then dw = x^T dz (in, out), db = the sum of dz's rows (1, out), dx = dz w^T (n, in).
// Throw as dense_forward does, and ShapeError if grad_out is not (n, out). Products compile
// fastest as lazyProduct (see ex1_dense_forward.cpp).
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

DenseGradients dense_backward([[maybe_unused]] const Matrix& x, [[maybe_unused]] const Matrix& w,
                              [[maybe_unused]] const RowVector& b, [[maybe_unused]] bool relu,
                              [[maybe_unused]] const Matrix& grad_out) {
  scalebook::not_implemented("2.2", "dense_backward");
}

}  // namespace scalebook::ch02
