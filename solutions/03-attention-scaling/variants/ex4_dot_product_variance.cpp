// Variant of exercise 3.4 — dot_product_variance in one pass with Welford's update of the running
// mean and sum of squared deviations (M2 / (samples − 1) is the sample variance), with the dot
// products summed by std::inner_product; the draws are the contract's: q's d_k, then k's, per sample.
#include "attention_scaling.hpp"

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace scalebook::ch03 {

double dot_product_variance(int d_k, int samples, bool scaled, Rng& rng) {
  if (d_k < 1) throw ShapeError("dot_product_variance: d_k must be at least 1, got " + std::to_string(d_k));
  if (samples < 2) {
    throw ShapeError("dot_product_variance: samples must be at least 2 for a sample variance, got " +
                     std::to_string(samples));
  }
  const double root = std::sqrt(static_cast<double>(d_k));
  std::vector<double> q(static_cast<std::size_t>(d_k)), k(static_cast<std::size_t>(d_k));
  double mean = 0.0, m2 = 0.0;  // running mean and sum of squared deviations from it
  for (int s = 0; s < samples; ++s) {
    for (double& c : q) c = rng.normal();
    for (double& c : k) c = rng.normal();
    double z = std::inner_product(q.begin(), q.end(), k.begin(), 0.0);
    if (scaled) z /= root;  // each dot product, before the variance
    const double delta = z - mean;
    mean += delta / (s + 1.0);  // the mean of the s + 1 values so far
    m2 += delta * (z - mean);
  }
  return m2 / (samples - 1);
}

}  // namespace scalebook::ch03
