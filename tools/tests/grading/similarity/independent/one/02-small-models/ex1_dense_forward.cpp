// Exercise 2.1: the affine map entry by entry, then ReLU where asked.
#include "small_models.hpp"

#include <algorithm>
#include <string>

namespace scalebook::ch02 {

Matrix dense_forward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu) {
  require_nonempty("dense_forward", "x", x);
  require_nonempty("dense_forward", "w", w);
  if (w.rows() != x.cols())
    throw ShapeError("dense_forward: x " + shape_of(x) + " and w " + shape_of(w) + " do not fit");
  require_shape("dense_forward", "b", b, 1, w.cols());
  require_finite("dense_forward", "x", x);
  require_finite("dense_forward", "w", w);
  require_finite("dense_forward", "b", b);
  Matrix out(x.rows(), w.cols());
  for (Index n = 0; n < x.rows(); ++n) {
    for (Index o = 0; o < w.cols(); ++o) {
      double total = b(o);
      for (Index i = 0; i < x.cols(); ++i) total += x(n, i) * w(i, o);
      out(n, o) = relu ? std::max(total, 0.0) : total;
    }
  }
  return out;
}

}  // namespace scalebook::ch02
