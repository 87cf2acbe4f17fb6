// Exercise 6.4 — compute_optimal
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's guidance
// (bad input, the helpers in scalebook/core.hpp) is at the top of ex1_fit_power_law.cpp; the
// contract is chapters/06-scaling-laws/scaling_laws.hpp.
//
// What to write:
// Split the budget C = 6 N D between N and D to minimise E + A / N^alpha + B / D^beta (the
// closed form is in the contract); return N, D and the loss there.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

Allocation compute_optimal([[maybe_unused]] const ComputeLaw& law, [[maybe_unused]] double compute) {
  scalebook::not_implemented("6.4", "compute_optimal");
}

}  // namespace scalebook::ch06
