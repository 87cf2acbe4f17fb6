// Reference for exercise 6.4 — compute_optimal.
// Chapter 6: scaling laws and their limits. L(N, D) = E + A / N^alpha + B / D^beta with C = 6 N D.
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

Allocation compute_optimal(const ComputeLaw& law, double compute) {
  const char* fn = "compute_optimal";
  if (!(compute > 0.0) || !std::isfinite(compute)) {
    throw ValueError(std::string(fn) + ": compute must be positive and finite, got " + std::to_string(compute));
  }
  const double values[5] = {law.e, law.a, law.b, law.alpha, law.beta};
  for (double v : values) {
    if (!std::isfinite(v)) throw ValueError(std::string(fn) + ": the law has a non-finite parameter");
  }
  if (law.e < 0.0 || !(law.a > 0.0) || !(law.b > 0.0) || !(law.alpha > 0.0) || !(law.beta > 0.0)) {
    throw ValueError(std::string(fn) + ": need e >= 0 and a, b, alpha, beta > 0");
  }
  const double nd = compute / 6.0;  // C = 6 N D: the product N D the budget buys
  const double g = std::pow(law.alpha * law.a / (law.beta * law.b), 1.0 / (law.alpha + law.beta));
  Allocation out;
  out.params = g * std::pow(nd, law.beta / (law.alpha + law.beta));
  out.tokens = nd / out.params;
  out.loss = law.e + law.a / std::pow(out.params, law.alpha) + law.b / std::pow(out.tokens, law.beta);
  return out;
}

}  // namespace scalebook::ch06
