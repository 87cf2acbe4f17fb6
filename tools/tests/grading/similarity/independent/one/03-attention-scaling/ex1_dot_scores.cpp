// Exercise 3.1: all the dot products, one product of matrices.
#include "attention_scaling.hpp"

namespace scalebook::ch03 {

Matrix dot_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("dot_scores", q, k);
  Matrix result = Matrix::Zero(q.rows(), k.rows());
  for (Index c = 0; c < q.cols(); ++c) result += q.col(c) * k.col(c).transpose();
  return result;
}

}  // namespace scalebook::ch03
