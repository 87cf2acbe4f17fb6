// Exercise 6.3 — extrapolate
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_power_law.cpp; the
// contract is chapters/06-scaling-laws/scaling_laws.hpp.
//
// What to write:
// Predict E + A N^(-alpha) at every size; the relative error of each prediction against the
// measured loss, (predicted - loss) / loss; and the worst |relative error|.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

Extrapolation extrapolate([[maybe_unused]] const SaturatingPowerLaw& law,
                          [[maybe_unused]] const std::vector<double>& sizes,
                          [[maybe_unused]] const std::vector<double>& losses) {
  scalebook::not_implemented("6.3", "extrapolate");
}

}  // namespace scalebook::ch06
