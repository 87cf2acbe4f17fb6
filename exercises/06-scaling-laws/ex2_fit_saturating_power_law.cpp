// Exercise 6.2 — fit_saturating_power_law
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_power_law.cpp; the
// contract is chapters/06-scaling-laws/scaling_laws.hpp.
//
// What to write:
// Fit L = E + A N^(-alpha): scan E over [0, min L) (E_k = min L (1 - 10^(-12 k / 256))), fit A
// and alpha with fit_power_law on the losses above E, score each E by the squared residuals on
// linear axes, then refine around the best E by golden-section search. Return {E, A, alpha}.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

SaturatingPowerLaw fit_saturating_power_law([[maybe_unused]] const std::vector<double>& sizes,
                                            [[maybe_unused]] const std::vector<double>& losses) {
  scalebook::not_implemented("6.2", "fit_saturating_power_law");
}

}  // namespace scalebook::ch06
