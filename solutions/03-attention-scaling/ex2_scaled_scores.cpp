// Reference for exercise 3.2 — scaled_scores.
// Chapter 3: why attention scores are divided by sqrt(d_k).
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("scaled_scores", q, k);
  const double d_k = static_cast<double>(q.cols());
  return dot_scores(q, k) / std::sqrt(d_k);  // (n, m), divided by sqrt(d_k), not by d_k
}

}  // namespace scalebook::ch03
