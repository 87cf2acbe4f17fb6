// Matrix products compiled once (see scalebook/linalg.hpp).
#include "scalebook/linalg.hpp"

namespace scalebook {

Matrix matmul(const Matrix& a, const Matrix& b) {
  if (a.cols() != b.rows()) {
    throw ShapeError("matmul: a " + shape_of(a) + " times b " + shape_of(b) +
                     ": a's columns must equal b's rows");
  }
  return a * b;
}

Matrix matmul_transposed(const Matrix& a, const Matrix& b) {
  require_same_cols("matmul_transposed", "a", a, "b", b);
  return a * b.transpose();
}

}  // namespace scalebook
