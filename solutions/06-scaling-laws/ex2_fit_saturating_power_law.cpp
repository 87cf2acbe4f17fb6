// Reference for exercise 6.2 — fit_saturating_power_law.
// Chapter 6: scaling laws and their limits. A profile search over E; inside it, the log-log fit
// of exercise 6.1 on the losses above E.
#include "scaling_laws.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalebook::ch06 {

namespace {

// The sum of squared residuals, on linear axes, of the law whose A and alpha come from the
// log-log fit of the losses above e.
double residuals(const std::vector<double>& sizes, const std::vector<double>& losses, double e, PowerLaw& fit) {
  std::vector<double> above(losses.size());
  for (std::size_t i = 0; i < losses.size(); ++i) above[i] = losses[i] - e;  // > 0 while e < min L
  fit = fit_power_law(sizes, above);
  double s = 0.0;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const double r = losses[i] - e - fit.a * std::pow(sizes[i], -fit.alpha);
    s += r * r;
  }
  return s;
}

}  // namespace

SaturatingPowerLaw fit_saturating_power_law(const std::vector<double>& sizes, const std::vector<double>& losses) {
  const char* fn = "fit_saturating_power_law";
  if (sizes.size() != losses.size()) {
    throw ShapeError(std::string(fn) + ": " + std::to_string(sizes.size()) + " sizes but " +
                     std::to_string(losses.size()) + " losses");
  }
  if (sizes.size() < 3) {
    throw ShapeError(std::string(fn) + ": three parameters need at least 3 points, got " +
                     std::to_string(sizes.size()));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (!(sizes[i] > 0.0) || !std::isfinite(sizes[i]) || !(losses[i] > 0.0) || !std::isfinite(losses[i])) {
      throw ValueError(std::string(fn) + ": point " + std::to_string(i) + " has size " + std::to_string(sizes[i]) +
                       " and loss " + std::to_string(losses[i]) + "; both must be positive and finite");
    }
  }
  const double top = *std::min_element(losses.begin(), losses.end());  // E stays below every loss
  // The trial E_k = top (1 - 10^(-12 k / 256)), k = 0 .. 255 (E_256 only bounds the refinement):
  // E_0 = 0, then ever closer to the smallest loss, as finely near it (in L - E) as near 0.
  const int grid = 256;
  auto trial = [&](int k) { return top * (1.0 - std::pow(10.0, -12.0 * k / grid)); };
  PowerLaw fit;
  int best_k = 0;
  double best = residuals(sizes, losses, trial(0), fit);
  for (int k = 1; k < grid; ++k) {
    const double s = residuals(sizes, losses, trial(k), fit);
    if (s < best) {
      best = s;
      best_k = k;
    }
  }
  // Golden-section search on [E_(k-1), E_(k+1)], never reaching the smallest loss.
  double lo = trial(std::max(best_k - 1, 0)), hi = trial(best_k + 1);
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo);
  double f1 = residuals(sizes, losses, x1, fit), f2 = residuals(sizes, losses, x2, fit);
  while (hi - lo > 1e-12 * top) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - ratio * (hi - lo);
      f1 = residuals(sizes, losses, x1, fit);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + ratio * (hi - lo);
      f2 = residuals(sizes, losses, x2, fit);
    }
  }
  double e = (lo + hi) / 2.0;
  // The grid point wins when the refinement found nothing better (e.g. E = 0 exactly).
  if (residuals(sizes, losses, e, fit) > best) e = trial(best_k);
  residuals(sizes, losses, e, fit);
  return {e, fit.a, fit.alpha};
}

}  // namespace scalebook::ch06
