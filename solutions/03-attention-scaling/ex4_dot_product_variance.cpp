// Reference for exercise 3.4 — dot_product_variance.
// Chapter 3: why attention scores are divided by sqrt(d_k).
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

double dot_product_variance(int d_k, int samples, bool scaled, Rng& rng) {
  require_positive("dot_product_variance", "d_k", d_k);
  if (samples < 2) {
    throw ShapeError("dot_product_variance: samples must be at least 2 (a sample variance needs "
                     "two values), got " + std::to_string(samples));
  }
  const double scale = scaled ? std::sqrt(static_cast<double>(d_k)) : 1.0;
  Vector q(d_k), k(d_k), z(samples);  // z holds one dot product per sample
  for (int s = 0; s < samples; ++s) {
    for (int c = 0; c < d_k; ++c) q(c) = rng.normal();  // first the d_k components of q,
    for (int c = 0; c < d_k; ++c) k(c) = rng.normal();  // then the d_k components of k
    z(s) = q.dot(k) / scale;
  }
  const double mean = z.mean();
  return (z.array() - mean).square().sum() / (samples - 1);  // the sample variance
}

}  // namespace scalebook::ch03
