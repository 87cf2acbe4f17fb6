// Exercise 6.5 — shuffle_train_labels
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_power_law.cpp; the
// contract is chapters/06-scaling-laws/scaling_laws.hpp.
//
// What to write:
// Shuffle the training labels with Fisher-Yates from the back (Rng(seed), j = next_u64() % (i + 1));
// the test labels stay as they are.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

#include "scalebook/random.hpp"

namespace scalebook::ch06 {

LabelSplit shuffle_train_labels([[maybe_unused]] const std::vector<int>& train,
                                [[maybe_unused]] const std::vector<int>& test,
                                [[maybe_unused]] std::uint64_t seed) {
  scalebook::not_implemented("6.5", "shuffle_train_labels");
}

}  // namespace scalebook::ch06
