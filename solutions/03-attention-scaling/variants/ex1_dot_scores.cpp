// Variant of exercise 3.1 — dot_scores transposes q and k once, so that every dot product reads two
// contiguous columns: Eigen then sums each one in vectorised partial sums, another order than the
// reference's row-by-row dot products (the last bits may differ); entry (i, j) is still q_i · k_j.
#include "attention_scaling.hpp"

namespace scalebook::ch03 {

Matrix dot_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("dot_scores", q, k);
  const Matrix q_columns = q.transpose(), k_columns = k.transpose();  // (d_k, n) and (d_k, m)
  Matrix scores(q.rows(), k.rows());
  for (Index j = 0; j < k.rows(); ++j)
    for (Index i = 0; i < q.rows(); ++i) scores(i, j) = q_columns.col(i).dot(k_columns.col(j));
  return scores;
}

}  // namespace scalebook::ch03
