// Exercise 8.3 — LayerNorm's backward pass
// Chapter 8: normalisation, what keeps activations at the scale attention assumes.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_layer_norm.cpp; the
// contract is chapters/08-normalisation/normalisation.hpp.
//
// What to write:
// The gradients of layer_norm(x, gamma, beta, eps), given grad_out = dL/dy, (n, d). For each row
// i, with x_hat(i, j) = (x(i, j) - mu) / s and s = sqrt(var + eps) as in 8.1, and
// g(i, j) = grad_out(i, j) * gamma(j):
//   dx(i, j) = (g(i, j) - mean over k of g(i, k) - x_hat(i, j) * mean over k of g(i, k) x_hat(i, k)) / s
//   dgamma(j) = sum over i of grad_out(i, j) * x_hat(i, j)       (1, d)
//   dbeta(j)  = sum over i of grad_out(i, j)                      (1, d)
// Entries of x beyond 1e154 are valid, as in 8.1.
// Throw ShapeError if x is empty, gamma is not (1, d) or grad_out is not (n, d); ValueError if x,
// gamma or grad_out holds NaN or infinity, or eps is not a finite number above 0.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch08 {

LayerNormGrads layer_norm_backward([[maybe_unused]] const Matrix& x, [[maybe_unused]] const RowVector& gamma,
                                   [[maybe_unused]] double eps, [[maybe_unused]] const Matrix& grad_out) {
  scalebook::not_implemented("8.3", "layer_norm_backward");
}

}  // namespace scalebook::ch08
