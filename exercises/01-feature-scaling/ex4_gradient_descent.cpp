// Exercise 1.4 — gradient_descent
// Chapter 1: feature scaling.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_scaling.cpp;
// the contract is chapters/01-feature-scaling/feature_scaling.hpp.
//
// What to write:
// Least squares by gradient descent: minimise L(w, b) = (1/(2n)) * sum_i (x_i . w + b - y_i)^2,
// starting from w = 0 and b = 0. At every point: r = X w + b - y, g_w = X^T r / n,
// g_b = sum(r) / n; record the loss; stop (converged) when the norm of (g_w, g_b) is at most
// `tolerance`; stop (not converged) after `max_iterations` updates or when the loss is NaN or
// infinite; otherwise step: w -= learning_rate * g_w, b -= learning_rate * g_b.
// result.loss holds the loss at the start and after every update.
// Throw ShapeError if x is empty or y's length differs from x's rows; ValueError for NaN or
// infinity in x or y, a learning rate or tolerance that is not positive and finite, or
// max_iterations < 0.
// Products and the wait at each save: Eigen's x * w compiles its blocked product code into your
// file; x.lazyProduct(w) and x.transpose().lazyProduct(r) compute the same products entry by entry
// and compile in three quarters of the time.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "feature_scaling.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch01 {

DescentResult gradient_descent([[maybe_unused]] const Matrix& x, [[maybe_unused]] const Vector& y,
                               [[maybe_unused]] double learning_rate, [[maybe_unused]] double tolerance,
                               [[maybe_unused]] int max_iterations) {
  scalebook::not_implemented("1.4", "gradient_descent");
}

}  // namespace scalebook::ch01
