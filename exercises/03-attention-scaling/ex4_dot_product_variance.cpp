// Exercise 3.4 — where sqrt(d_k) comes from, measured
// Chapter 3: why attention scores are divided by sqrt(d_k).
//
// One exercise per file: saving this file recompiles only this exercise. The chapter's
// guidance (shapes, bad input, the helpers in scalebook/core.hpp) is at the top of
// ex1_dot_scores.cpp; the contract is chapters/03-attention-scaling/attention_scaling.hpp.
//
// What to write:
// Draw `samples` pairs of vectors q and k of length d_k with standard normal components and
// return the sample variance of their dot products z = q·k (of z / sqrt(d_k) when `scaled`).
// Draw in exactly this order, so that everyone's numbers agree: for each sample, first the d_k
// components of q with rng.normal(), then the d_k components of k.
// "Sample variance": subtract the mean of the z values, and divide the sum of squares by
// samples - 1.
// Throw ShapeError if d_k < 1 or samples < 2.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

double dot_product_variance([[maybe_unused]] int d_k, [[maybe_unused]] int samples,
                            [[maybe_unused]] bool scaled, [[maybe_unused]] Rng& rng) {
  scalebook::not_implemented("3.4", "dot_product_variance");
}

}  // namespace scalebook::ch03
