// Reference for exercise 3.3 — softmax_rows.
// Chapter 3: why attention scores are divided by sqrt(d_k).
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix softmax_rows(const Matrix& scores) {
  require_nonempty("softmax_rows", "scores", scores);
  require_finite("softmax_rows", "scores", scores);
  Matrix weights(scores.rows(), scores.cols());  // (n, m), each row sums to 1
  for (Index i = 0; i < scores.rows(); ++i) {
    // Subtracting the row's maximum changes nothing mathematically (it cancels in the ratio) but
    // keeps every exponent <= 0: no overflow, and the largest term is exactly exp(0) = 1.
    const double row_max = scores.row(i).maxCoeff();
    weights.row(i) = (scores.row(i).array() - row_max).exp().matrix();
    weights.row(i) /= weights.row(i).sum();
  }
  return weights;
}

}  // namespace scalebook::ch03
