// Reference for exercise 5.1 — linear.
// Chapter 5: multi-head attention and concatenation.
// Shapes: x is (n, in), weight is (out, in) as PyTorch stores it, bias is (out); y is (n, out).
#include "multi_head.hpp"

namespace scalebook::ch05 {

Matrix linear(const Matrix& x, const Matrix& weight, const Vector& bias) {
  require_nonempty("linear", "x", x);
  require_nonempty("linear", "weight", weight);
  if (x.cols() != weight.cols()) {
    throw ShapeError("linear: x " + shape_of(x) + " has " + std::to_string(x.cols()) +
                     " features, weight " + shape_of(weight) + " expects " +
                     std::to_string(weight.cols()) + " (one output feature per row of weight)");
  }
  require_shape("linear", "bias", bias, weight.rows(), 1);
  require_finite("linear", "x", x);
  require_finite("linear", "weight", weight);
  require_finite("linear", "bias", bias);
  // y = x Wᵀ + b: weight holds one output feature per ROW, so x is multiplied by its transpose.
  Matrix y = matmul_transposed(x, weight);  // (n, out)
  y.rowwise() += bias.transpose();
  return y;
}

}  // namespace scalebook::ch05
