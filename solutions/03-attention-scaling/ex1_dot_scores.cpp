// Reference for exercise 3.1 — dot_scores.
// Chapter 3: why attention scores are divided by sqrt(d_k).
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix dot_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("dot_scores", q, k);
  Matrix scores(q.rows(), k.rows());  // (n, m): n·m dot products of length d_k
  for (Index i = 0; i < q.rows(); ++i)
    for (Index j = 0; j < k.rows(); ++j) scores(i, j) = q.row(i).dot(k.row(j));
  return scores;
}

}  // namespace scalebook::ch03
