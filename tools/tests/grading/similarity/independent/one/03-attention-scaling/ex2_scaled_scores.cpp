// Exercise 3.2: the dot products over the square root of the key width.
#include "attention_scaling.hpp"

#include <cmath>

namespace scalebook::ch03 {

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("scaled_scores", q, k);
  Matrix s = dot_scores(q, k);
  s *= 1.0 / std::sqrt(static_cast<double>(k.cols()));
  return s;
}

}  // namespace scalebook::ch03
