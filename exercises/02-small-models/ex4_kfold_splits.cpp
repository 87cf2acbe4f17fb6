// Exercise 2.4 — kfold_splits
// Chapter 2: small models on scarce data.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of ex1_dense_forward.cpp;
// the contract is chapters/02-small-models/small_models.hpp.
//
// What to write:
// Split rows 0..n-1 into k folds as DLwP does: s = n / k rows (rounded down) per fold; fold i
// validates rows i*s up to (but not including) (i+1)*s and trains on all the other rows, both
// lists in increasing order.
// Throw ShapeError if k < 2 or k > n.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

Folds kfold_splits([[maybe_unused]] Index n, [[maybe_unused]] int k) {
  scalebook::not_implemented("2.4", "kfold_splits");
}

}  // namespace scalebook::ch02
