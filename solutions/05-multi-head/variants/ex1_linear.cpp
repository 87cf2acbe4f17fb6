// Variant of exercise 5.1 — linear by loops: each output starts at its bias and adds the products
// x(i, j) W(r, j) one by one, instead of a matrix product with the bias added after it. The same
// y = x Wᵀ + b (one output feature per row of W); the sums round in another order.
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
  Matrix y(x.rows(), weight.rows());  // (n, out)
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index r = 0; r < weight.rows(); ++r) {
      double sum = bias(r);  // output feature r of row i: b(r) + row i of x times row r of W
      for (Index j = 0; j < x.cols(); ++j) sum += x(i, j) * weight(r, j);
      y(i, r) = sum;
    }
  }
  return y;
}

}  // namespace scalebook::ch05
