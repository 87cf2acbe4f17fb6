// Variant of exercise 2.2 — dense_backward reuses dense_forward (2.1) for ReLU's mask: relu(z) > 0
// exactly where z > 0; dw = xᵀ dz, db = the column sums of dz and dx = dz wᵀ are explicit loops over
// the examples (db's sums then run in another order than Eigen's vectorised colwise().sum()).
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

DenseGradients dense_backward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu,
                              const Matrix& grad_out) {
  const std::string fn = "dense_backward";
  require_nonempty(fn, "x", x);
  require_nonempty(fn, "w", w);
  if (x.cols() != w.rows()) {
    throw ShapeError(fn + ": x " + shape_of(x) + " has " + std::to_string(x.cols()) + " columns but w " + shape_of(w) +
                     " has " + std::to_string(w.rows()) + " rows");
  }
  require_shape(fn, "b", b, 1, w.cols());
  require_shape(fn, "grad_out", grad_out, x.rows(), w.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "w", w);
  require_finite(fn, "b", b);
  require_finite(fn, "grad_out", grad_out);
  const Index n = x.rows(), in = x.cols(), out = w.cols();
  Matrix dz = grad_out;  // the gradient at z = x w + b
  if (relu) {
    const Matrix y = dense_forward(x, w, b, true);  // max(0, z): positive exactly where z > 0
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < out; ++j)
        if (y(i, j) <= 0.0) dz(i, j) = 0.0;
  }
  DenseGradients g;
  g.dw = Matrix::Zero(in, out);
  g.db = RowVector::Zero(out);
  g.dx = Matrix::Zero(n, in);
  for (Index i = 0; i < n; ++i) {  // one example at a time: its share of every gradient
    for (Index j = 0; j < out; ++j) {
      const double d = dz(i, j);
      g.db(j) += d;  // summed over the rows, not averaged
      for (Index c = 0; c < in; ++c) {
        g.dw(c, j) += x(i, c) * d;
        g.dx(i, c) += d * w(c, j);
      }
    }
  }
  return g;
}

}  // namespace scalebook::ch02
