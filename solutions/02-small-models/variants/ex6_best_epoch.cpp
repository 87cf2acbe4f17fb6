// Variant of exercise 2.6 — best_epoch rejects NaN in a first pass, then lets std::min_element find
// the smallest value: it returns the first of equal smallest values, as the contract asks.
#include "small_models.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace scalebook::ch02 {

Index best_epoch(const Curve& values) {
  if (values.empty()) throw ShapeError("best_epoch: values is empty");
  const auto nan = std::find_if(values.begin(), values.end(), [](double v) { return std::isnan(v); });
  if (nan != values.end()) {
    throw ValueError("best_epoch: values[" + std::to_string(nan - values.begin()) + "] is NaN");
  }
  return static_cast<Index>(std::min_element(values.begin(), values.end()) - values.begin());
}

}  // namespace scalebook::ch02
