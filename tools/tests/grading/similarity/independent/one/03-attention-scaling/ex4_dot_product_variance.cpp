// Exercise 3.4: Welford's running mean and variance of the sampled dot products.
#include "attention_scaling.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace scalebook::ch03 {

double dot_product_variance(int d_k, int samples, bool scaled, Rng& rng) {
  require_positive("dot_product_variance", "d_k", d_k);
  if (samples < 2)
    throw ShapeError("dot_product_variance: need samples >= 2, got " + std::to_string(samples));
  const double divisor = scaled ? std::sqrt(static_cast<double>(d_k)) : 1.0;
  std::vector<double> first(static_cast<std::size_t>(d_k));
  double mean = 0.0, m2 = 0.0;
  for (int n = 1; n <= samples; ++n) {
    for (auto& value : first) value = rng.normal();
    double dot = 0.0;
    for (int c = 0; c < d_k; ++c) dot += first[static_cast<std::size_t>(c)] * rng.normal();
    dot /= divisor;
    const double delta = dot - mean;
    mean += delta / n;
    m2 += delta * (dot - mean);
  }
  return m2 / (samples - 1);
}

}  // namespace scalebook::ch03
