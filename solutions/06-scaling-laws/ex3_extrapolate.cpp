// Reference for exercise 6.3 — extrapolate.
// Chapter 6: scaling laws and their limits.
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

Extrapolation extrapolate(const SaturatingPowerLaw& law, const std::vector<double>& sizes,
                          const std::vector<double>& losses) {
  const char* fn = "extrapolate";
  if (sizes.size() != losses.size()) {
    throw ShapeError(std::string(fn) + ": " + std::to_string(sizes.size()) + " sizes but " +
                     std::to_string(losses.size()) + " losses");
  }
  if (sizes.empty()) throw ShapeError(std::string(fn) + ": no sizes to predict at");
  if (!std::isfinite(law.e) || !std::isfinite(law.a) || !std::isfinite(law.alpha) || law.e < 0.0 || law.a < 0.0 ||
      law.alpha < 0.0) {
    throw ValueError(std::string(fn) + ": the law needs finite e >= 0, a >= 0 and alpha >= 0, got e = " +
                     std::to_string(law.e) + ", a = " + std::to_string(law.a) + ", alpha = " + std::to_string(law.alpha));
  }
  Extrapolation out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (!(sizes[i] > 0.0) || !std::isfinite(sizes[i]) || !(losses[i] > 0.0) || !std::isfinite(losses[i])) {
      throw ValueError(std::string(fn) + ": point " + std::to_string(i) + " has size " + std::to_string(sizes[i]) +
                       " and loss " + std::to_string(losses[i]) + "; both must be positive and finite");
    }
    const double predicted = law.e + law.a * std::pow(sizes[i], -law.alpha);  // falls as N grows
    const double error = (predicted - losses[i]) / losses[i];
    out.predicted.push_back(predicted);
    out.relative_error.push_back(error);
    out.worst = std::max(out.worst, std::abs(error));
  }
  return out;
}

}  // namespace scalebook::ch06
