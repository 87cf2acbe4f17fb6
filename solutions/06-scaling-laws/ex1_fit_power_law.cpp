// Reference for exercise 6.1 — fit_power_law.
// Chapter 6: scaling laws and their limits. sizes[i] and losses[i] describe one run.
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
  const double n = static_cast<double>(sizes.size());
  double mean_x = 0.0, mean_y = 0.0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    mean_x += std::log(sizes[i]) / n;   // log-log axes: x = ln N,
    mean_y += std::log(losses[i]) / n;  // y = ln L
  }
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double dx = std::log(sizes[i]) - mean_x, dy = std::log(losses[i]) - mean_y;
    sxy += dx * dy;
    sxx += dx * dx;
  }
  const double slope = sxy / sxx;
  return {std::exp(mean_y - slope * mean_x), -slope};  // ln L = ln a - alpha ln N
}

}  // namespace scalebook::ch06
