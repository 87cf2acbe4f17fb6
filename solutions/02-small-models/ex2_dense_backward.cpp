// Reference for exercise 2.2 — dense_backward.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

DenseGradients dense_backward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu,
                              const Matrix& grad_out) {
  const char* fn = "dense_backward";
  require_nonempty(fn, "x", x);
  require_nonempty(fn, "w", w);
  if (x.cols() != w.rows()) {
    throw ShapeError(std::string(fn) + ": x " + shape_of(x) + " has " + std::to_string(x.cols()) +
                     " columns, w " + shape_of(w) + " expects " + std::to_string(w.rows()) + " inputs");
  }
  require_shape(fn, "b", b, 1, w.cols());
  require_shape(fn, "grad_out", grad_out, x.rows(), w.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "w", w);
  require_finite(fn, "b", b);
  require_finite(fn, "grad_out", grad_out);
  Matrix dz = grad_out;  // (n, out): the gradient at z = x w + b
  if (relu) {
    Matrix z = x.lazyProduct(w);
    z.rowwise() += b;
    for (Index i = 0; i < z.rows(); ++i)
      for (Index j = 0; j < z.cols(); ++j)
        if (!(z(i, j) > 0.0)) dz(i, j) = 0.0;  // ReLU passes the gradient only where z > 0
  }
  DenseGradients g;
  g.dw = x.transpose().lazyProduct(dz);  // (in, out)
  g.db = dz.colwise().sum();    // (1, out): summed over the rows, not averaged
  g.dx = dz.lazyProduct(w.transpose());  // (n, in)
  return g;
}

}  // namespace scalebook::ch02
