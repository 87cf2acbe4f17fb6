// softmax_rows with Eigen's array expressions, row by row.
#include "attention_scaling.hpp"

namespace scalebook::ch03 {

Matrix softmax_rows(const Matrix& scores) {
  require_nonempty("softmax_rows", "scores", scores);
  require_finite("softmax_rows", "scores", scores);
  const Vector maxima = scores.rowwise().maxCoeff();
  Matrix e = (scores.colwise() - maxima).array().exp().matrix();
  const Vector sums = e.rowwise().sum();
  for (Index i = 0; i < e.rows(); ++i) e.row(i) /= sums(i);
  return e;
}

}  // namespace scalebook::ch03
