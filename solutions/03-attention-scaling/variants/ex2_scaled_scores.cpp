// Variant of exercise 3.2 — scaled_scores divides the n·d_k queries by sqrt(d_k) before the dot
// products instead of the n·m scores after them: (q / sqrt(d_k)) kᵀ = q kᵀ / sqrt(d_k), rounded in
// another place. Its own checks come first, so its errors name scaled_scores.
#include "attention_scaling.hpp"

#include <cmath>

namespace scalebook::ch03 {

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("scaled_scores", q, k);
  const Matrix scaled_queries = q / std::sqrt(static_cast<double>(q.cols()));
  return dot_scores(scaled_queries, k);
}

}  // namespace scalebook::ch03
