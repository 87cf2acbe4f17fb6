// Exercise 1.3 — scale_train_test
// Chapter 1: feature scaling.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_scaling.cpp;
// the contract is chapters/01-feature-scaling/feature_scaling.hpp.
//
// What to write:
// Scale a train/test split without leakage: the statistics come from the training rows only,
// and the same scaling is applied to both. Return both scaled matrices and the scaling. You may
// call fit_scaling (1.1) and apply_scaling (1.2).
// Throw ShapeError if either matrix is empty or their columns differ; ValueError for NaN or
// infinity in either.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "feature_scaling.hpp"

namespace scalebook::ch01 {

ScaledSplit scale_train_test([[maybe_unused]] const Matrix& train, [[maybe_unused]] const Matrix& test) {
  scalebook::not_implemented("1.3", "scale_train_test");
}

}  // namespace scalebook::ch01
