// Exercise 8.1 — LayerNorm, each token scaled by its own statistics
// Chapter 8: normalisation, what keeps activations at the scale attention assumes.
//
// The chapter has three exercises, one per file (ex1_layer_norm.cpp to
// ex3_layer_norm_backward.cpp): saving one recompiles only that exercise. Run ./workbook check 8
// (or keep ./workbook watch 8 open) until the chapter's checks pass. Stuck? ./workbook hint 8.1
// shows the first hint for 8.1.
//
// Shapes: x is (n, d) with one token per row and d features per token; gamma and beta are (1, d),
// one entry per feature. The contract, with every function's exact promise, is
// chapters/08-normalisation/normalisation.hpp.
//
// Bad input must throw, never crash: the helpers in scalebook/core.hpp do the work and write the
// message for you, e.g. require_nonempty("layer_norm", "x", x) throws a ShapeError naming the
// function and the shape; require_shape and require_finite work alike. eps is yours to check.
//
// What to write:
// For each ROW i of x: its mean mu over its d entries, its variance var = the mean of
// (x(i, j) - mu)^2 (divided by d, not d - 1), and then
//   y(i, j) = (x(i, j) - mu) / sqrt(var + eps) * gamma(j) + beta(j).
// Take the mean first, then the squares of the deviations (two passes). Entries beyond 1e154 are
// valid too, and their squares overflow a double: the result must still be right and finite.
// Throw ShapeError if x is empty or gamma or beta is not (1, d); ValueError if x, gamma or beta
// holds NaN or infinity, or eps is not a finite number above 0.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch08 {

Matrix layer_norm([[maybe_unused]] const Matrix& x, [[maybe_unused]] const RowVector& gamma,
                  [[maybe_unused]] const RowVector& beta, [[maybe_unused]] double eps) {
  scalebook::not_implemented("8.1", "layer_norm");
}

}  // namespace scalebook::ch08
