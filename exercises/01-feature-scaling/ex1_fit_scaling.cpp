// Exercise 1.1 — fit_scaling
// Chapter 1: feature scaling.
//
// The chapter has five exercises, one per file (ex1_fit_scaling.cpp to ex5_knn_predict.cpp):
// saving one recompiles only that exercise. Run ./workbook check 1 (or keep ./workbook watch 1
// open) until the chapter's checks pass. Stuck? ./workbook hint 1.1 shows the first hint for 1.1.
//
// Shapes: a data matrix is (n, d), one example per row and one feature per column. The contract,
// with every function's exact promise, is chapters/01-feature-scaling/feature_scaling.hpp.
//
// Bad input must throw, never crash: the helpers in scalebook/core.hpp do the work and write the
// message for you, e.g. require_nonempty("fit_scaling", "train", train) throws a ShapeError
// naming the function and the shape; require_finite throws a ValueError for NaN or infinity.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Return, for each feature (column) c of the training rows: its mean, and its population
// standard deviation sqrt((1/n) * sum over rows of (x(i, c) - mean(c))^2) — divide by n, not
// n - 1. A feature whose standard deviation is 0 (constant) gets scale 1: it will become 0 after
// scaling instead of 0/0 = NaN. Compute the deviations from the mean (a second pass over the
// rows), not mean(x^2) - mean(x)^2.
// Throw ShapeError if train is empty, ValueError if it holds NaN or infinity.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "feature_scaling.hpp"

#include <cmath>

namespace scalebook::ch01 {

Scaling fit_scaling([[maybe_unused]] const Matrix& train) {
  scalebook::not_implemented("1.1", "fit_scaling");
}

}  // namespace scalebook::ch01
