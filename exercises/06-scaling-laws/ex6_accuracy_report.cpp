// Exercise 6.6 — accuracy_report
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_power_law.cpp; the
// contract is chapters/06-scaling-laws/scaling_laws.hpp.
//
// What to write:
// Accuracy (the largest logit's column, the first on a tie, equals the label) and the mean
// cross-entropy ln sum_j exp(z_j) - z_label, computed stably, on the training and the test rows.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

AccuracyReport accuracy_report([[maybe_unused]] const Matrix& train_logits,
                               [[maybe_unused]] const std::vector<int>& train_labels,
                               [[maybe_unused]] const Matrix& test_logits,
                               [[maybe_unused]] const std::vector<int>& test_labels) {
  scalebook::not_implemented("6.6", "accuracy_report");
}

}  // namespace scalebook::ch06
