// Variant of exercise 6.2 — fit_saturating_power_law whose golden-section search places both inner
// points afresh from the interval at every step (two scores a step, none carried over) and whose
// residuals take N^(−alpha) as exp(−alpha ln N): the contract's scan and refinement, other rounding.
#include "scaling_laws.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalebook::ch06 {

namespace {

// S(E): the sum of squared residuals, on linear axes, of E + A N^-alpha with A and alpha from the
// log-log fit (6.1) of the losses above E; the fit itself is left in `fit`.
double profile_score(const std::vector<double>& sizes, const std::vector<double>& losses, double e, PowerLaw& fit) {
  std::vector<double> above;
  for (double loss : losses) above.push_back(loss - e);  // positive while e < min L
  fit = fit_power_law(sizes, above);
  double score = 0.0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double residual = above[i] - fit.a * std::exp(-fit.alpha * std::log(sizes[i]));
    score += residual * residual;
  }
  return score;
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
  const double smallest = *std::min_element(losses.begin(), losses.end());
  // E_k = min L (1 - 10^(-12 k / 256)): E_0 = 0, then ever closer to the smallest loss.
  const auto trial = [&](int k) { return smallest * (1.0 - std::pow(10.0, -12.0 * k / 256.0)); };
  PowerLaw fit;
  std::vector<double> scores;
  for (int k = 0; k < 256; ++k) scores.push_back(profile_score(sizes, losses, trial(k), fit));
  const auto best = std::min_element(scores.begin(), scores.end());  // the first k of least score
  const int best_k = static_cast<int>(best - scores.begin());

  // Golden-section search on [E_max(k-1, 0), E_k+1], below the smallest loss throughout.
  const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = trial(std::max(best_k - 1, 0)), hi = trial(best_k + 1);
  while (hi - lo > 1e-12 * smallest) {
    const double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    if (profile_score(sizes, losses, x1, fit) <= profile_score(sizes, losses, x2, fit)) {
      hi = x2;  // the minimum lies in [lo, x2]
    } else {
      lo = x1;  // in [x1, hi]
    }
  }
  double e = (lo + hi) / 2.0;
  if (profile_score(sizes, losses, e, fit) > *best) e = trial(best_k);  // refinement found nothing better
  profile_score(sizes, losses, e, fit);
  return {e, fit.a, fit.alpha};
}

}  // namespace scalebook::ch06
