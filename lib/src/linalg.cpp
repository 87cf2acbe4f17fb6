// Matrix products compiled once (see scalebook/linalg.hpp).
#include "scalebook/linalg.hpp"

#include <string>

namespace scalebook {

namespace {

// "matmul_into: a (2, 3) times b (4, 5): a's columns must equal b's rows"
template <class A, class B>
void require_inner(const char* function, const A& a, Index a_inner, const B& b, Index b_inner, const char* rule) {
  if (a_inner != b_inner) {
    throw ShapeError(std::string(function) + ": a " + shape_of(a) + " times b " + shape_of(b) + ": " + rule);
  }
}

template <class A, class B, class Out>
void require_out(const char* function, const A& a, const B& b, const Out& out, Index rows, Index cols) {
  if (out.rows() != rows || out.cols() != cols) {
    throw ShapeError(std::string(function) + ": out " + shape_of(out) + " must be (" + std::to_string(rows) + ", " +
                     std::to_string(cols) + ") for a " + shape_of(a) + " and b " + shape_of(b));
  }
}

template <class Product, class Out>
void write(Out& out, const Product& product, Into how) {
  if (how == Into::Add) out.noalias() += product;
  else out.noalias() = product;
}

template <class Scalar>
using Dense = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

template <class Scalar>
void product_into(const Eigen::Ref<const Dense<Scalar>>& a, const Eigen::Ref<const Dense<Scalar>>& b,
                  Eigen::Ref<Dense<Scalar>> out, Into how) {
  require_inner("matmul_into", a, a.cols(), b, b.rows(), "a's columns must equal b's rows");
  require_out("matmul_into", a, b, out, a.rows(), b.cols());
  write(out, a * b, how);
}

template <class Scalar>
void product_transposed_into(const Eigen::Ref<const Dense<Scalar>>& a, const Eigen::Ref<const Dense<Scalar>>& b,
                             Eigen::Ref<Dense<Scalar>> out, Into how) {
  require_inner("matmul_transposed_into", a, a.cols(), b, b.cols(), "a and b must have the same number of columns");
  require_out("matmul_transposed_into", a, b, out, a.rows(), b.rows());
  write(out, a * b.transpose(), how);
}

template <class Scalar>
void transposed_product_into(const Eigen::Ref<const Dense<Scalar>>& a, const Eigen::Ref<const Dense<Scalar>>& b,
                             Eigen::Ref<Dense<Scalar>> out, Into how) {
  require_inner("transposed_matmul_into", a, a.rows(), b, b.rows(), "a and b must have the same number of rows");
  require_out("transposed_matmul_into", a, b, out, a.cols(), b.cols());
  write(out, a.transpose() * b, how);
}

}  // namespace

Matrix matmul(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b) {
  require_inner("matmul", a, a.cols(), b, b.rows(), "a's columns must equal b's rows");
  return a * b;
}

Matrix matmul_transposed(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b) {
  require_same_cols("matmul_transposed", "a", a, "b", b);
  return a * b.transpose();
}

void matmul_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Eigen::Ref<Matrix> out,
                 Into how) {
  product_into<double>(a, b, out, how);
}

void matmul_transposed_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                            Eigen::Ref<Matrix> out, Into how) {
  product_transposed_into<double>(a, b, out, how);
}

void transposed_matmul_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                            Eigen::Ref<Matrix> out, Into how) {
  transposed_product_into<double>(a, b, out, how);
}

void matmul_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                 Eigen::Ref<Eigen::MatrixXf> out, Into how) {
  product_into<float>(a, b, out, how);
}

void matmul_transposed_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, Into how) {
  product_transposed_into<float>(a, b, out, how);
}

void transposed_matmul_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, Into how) {
  transposed_product_into<float>(a, b, out, how);
}

}  // namespace scalebook
