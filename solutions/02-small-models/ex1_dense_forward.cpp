// Reference for exercise 2.1 — dense_forward.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

Matrix dense_forward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu) {
  const char* fn = "dense_forward";
  require_nonempty(fn, "x", x);
  require_nonempty(fn, "w", w);
  if (x.cols() != w.rows()) {
    throw ShapeError(std::string(fn) + ": x " + shape_of(x) + " has " + std::to_string(x.cols()) +
                     " columns, w " + shape_of(w) + " expects " + std::to_string(w.rows()) + " inputs");
  }
  require_shape(fn, "b", b, 1, w.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "w", w);
  require_finite(fn, "b", b);
  Matrix y = x.lazyProduct(w);  // (n, out); lazyProduct compiles in a third of x * w's time
  y.rowwise() += b;             // the same bias for every row
  if (relu) y = y.cwiseMax(0.0);
  return y;
}

}  // namespace scalebook::ch02
