// Variant of exercise 6.3 — extrapolate with N^(−alpha) computed as exp(−alpha ln N) and the
// relative error as predicted / measured − 1 instead of (predicted − measured) / measured: the same
// quantities, which may differ in the last bits.
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
  for (std::size_t i = 0; i < sizes.size(); ++i) {  // every point checked before any is predicted
    if (!(sizes[i] > 0.0) || !std::isfinite(sizes[i]) || !(losses[i] > 0.0) || !std::isfinite(losses[i])) {
      throw ValueError(std::string(fn) + ": point " + std::to_string(i) + " has size " + std::to_string(sizes[i]) +
                       " and loss " + std::to_string(losses[i]) + "; both must be positive and finite");
    }
  }
  Extrapolation out;
  out.predicted.resize(sizes.size());
  out.relative_error.resize(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out.predicted[i] = law.e + law.a * std::exp(-law.alpha * std::log(sizes[i]));  // E + A N^-alpha
    out.relative_error[i] = out.predicted[i] / losses[i] - 1.0;                    // signed
  }
  for (double error : out.relative_error) out.worst = std::max(out.worst, std::abs(error));
  return out;
}

}  // namespace scalebook::ch06
