// Variant of exercise 6.4 — compute_optimal evaluating the contract's two closed forms each on its
// own, N_opt = G (C/6)^(beta/(alpha+beta)) and D_opt = G^-1 (C/6)^(alpha/(alpha+beta)), instead of
// D_opt = (C/6) / N_opt: N_opt D_opt = C/6 up to rounding, the last bits of D_opt may differ.
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

Allocation compute_optimal(const ComputeLaw& law, double compute) {
  const char* fn = "compute_optimal";
  if (!(compute > 0.0) || !std::isfinite(compute)) {
    throw ValueError(std::string(fn) + ": compute must be positive and finite, got " + std::to_string(compute));
  }
  for (double v : {law.e, law.a, law.b, law.alpha, law.beta}) {
    if (!std::isfinite(v)) throw ValueError(std::string(fn) + ": the law has a non-finite parameter");
  }
  if (law.e < 0.0 || !(law.a > 0.0) || !(law.b > 0.0) || !(law.alpha > 0.0) || !(law.beta > 0.0)) {
    throw ValueError(std::string(fn) + ": need e >= 0 and a, b, alpha, beta > 0");
  }
  const double nd = compute / 6.0;  // C = 6 N D
  const double sum = law.alpha + law.beta;
  const double g = std::pow(law.alpha * law.a / (law.beta * law.b), 1.0 / sum);
  Allocation out;
  out.params = g * std::pow(nd, law.beta / sum);
  out.tokens = std::pow(nd, law.alpha / sum) / g;
  out.loss = law.e + law.a * std::pow(out.params, -law.alpha) + law.b * std::pow(out.tokens, -law.beta);
  return out;
}

}  // namespace scalebook::ch06
