// Variant of exercise 2.1 — dense_forward with explicit loops instead of an Eigen product: each
// output sums x(i, c) w(c, j) over c in order, then adds b(j) (the contract's x w + b); ReLU is
// max(0, z). Eigen's product sums over c in order too here (no FMA): the bits agree in this build.
#include "small_models.hpp"

#include <algorithm>
#include <string>

namespace scalebook::ch02 {

Matrix dense_forward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu) {
  const std::string fn = "dense_forward";
  require_nonempty(fn, "x", x);
  require_nonempty(fn, "w", w);
  if (x.cols() != w.rows()) {
    throw ShapeError(fn + ": x " + shape_of(x) + " has " + std::to_string(x.cols()) + " columns but w " + shape_of(w) +
                     " has " + std::to_string(w.rows()) + " rows");
  }
  require_shape(fn, "b", b, 1, w.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "w", w);
  require_finite(fn, "b", b);
  Matrix y(x.rows(), w.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < w.cols(); ++j) {
      double z = 0.0;
      for (Index c = 0; c < x.cols(); ++c) z += x(i, c) * w(c, j);
      z += b(j);  // after the product: x w + b
      y(i, j) = relu ? std::max(z, 0.0) : z;
    }
  }
  return y;
}

}  // namespace scalebook::ch02
