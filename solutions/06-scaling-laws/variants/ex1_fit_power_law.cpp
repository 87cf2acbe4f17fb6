// Variant of exercise 6.1 — fit_power_law by the textbook closed form of the least-squares line,
// slope = (n Σxy − Σx Σy) / (n Σx² − (Σx)²), from raw sums in one pass, instead of the sums of
// products of deviations from the means: the same line, rounded differently.
#include "scaling_laws.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalebook::ch06 {

PowerLaw fit_power_law(const std::vector<double>& sizes, const std::vector<double>& losses) {
  const char* fn = "fit_power_law";
  if (sizes.size() != losses.size()) {
    throw ShapeError(std::string(fn) + ": " + std::to_string(sizes.size()) + " sizes but " +
                     std::to_string(losses.size()) + " losses");
  }
  if (sizes.size() < 2) {
    throw ShapeError(std::string(fn) + ": a line needs at least 2 points, got " + std::to_string(sizes.size()));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (!(sizes[i] > 0.0) || !std::isfinite(sizes[i]) || !(losses[i] > 0.0) || !std::isfinite(losses[i])) {
      throw ValueError(std::string(fn) + ": point " + std::to_string(i) + " has size " + std::to_string(sizes[i]) +
                       " and loss " + std::to_string(losses[i]) + "; both must be positive and finite");
    }
  }
  if (std::all_of(sizes.begin(), sizes.end(), [&](double x) { return x == sizes[0]; })) {
    throw ValueError(std::string(fn) + ": all sizes are equal; the slope is undefined");
  }
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double x = std::log(sizes[i]), y = std::log(losses[i]);  // log-log axes
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = static_cast<double>(sizes.size());
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;  // ln a
  return {std::exp(intercept), -slope};             // ln L = ln a - alpha ln N
}

}  // namespace scalebook::ch06
