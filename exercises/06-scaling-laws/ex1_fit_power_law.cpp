// Exercise 6.1 — fit_power_law
// Chapter 6: scaling laws and their limits.
//
// One exercise per file: saving this file recompiles only this exercise. The contract is
// chapters/06-scaling-laws/scaling_laws.hpp. sizes[i] and losses[i] describe one run.
//
// Bad input: throw scalebook::ShapeError (lists of different lengths, too few points) or
// scalebook::ValueError (a size or loss that is not positive, NaN, infinity), with a message that
// starts with the function's name and ": ", e.g. "fit_power_law: 5 sizes but 4 losses". For
// matrices, scalebook/core.hpp's require_nonempty, require_finite and require_same_cols write such
// messages for you. Exercises may call earlier exercises of this chapter (6.2 calls 6.1).
//
// What to write:
// Fit ln L = ln a - alpha ln N by ordinary least squares on the points (ln N_i, ln L_i);
// return {a, alpha}.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

PowerLaw fit_power_law([[maybe_unused]] const std::vector<double>& sizes,
                       [[maybe_unused]] const std::vector<double>& losses) {
  scalebook::not_implemented("6.1", "fit_power_law");
}

}  // namespace scalebook::ch06
