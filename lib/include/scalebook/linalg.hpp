// scalebook/linalg.hpp — matrix products compiled once, in lib/.
//
// Eigen's `a * b` instantiates its whole blocked matrix-product machinery in every file that uses
// it: a second or more of compile time per file, paid again at every save. These functions give
// the same results (the same Eigen code, the same order of operations) with that cost paid once,
// so an exercise file that uses them recompiles quickly. They take Eigen::Ref: a whole matrix or a
// block of one (m.middleRows(i, n), m.topLeftCorner(r, c), ...) binds without a copy.
/// \file
/// \brief Matrix products compiled once, in lib/: whole matrices or blocks of them.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER == 3
#error "scalebook/linalg.hpp computes Q Kᵀ, which exercise 3.1 teaches: chapter 3's exercises write their own products"
#endif

#include "scalebook/core.hpp"

namespace scalebook {

/// a * b. Throws ShapeError unless a.cols() == b.rows().
Matrix matmul(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b);

/// a * bᵀ: entry (i, j) is row i of a dotted with row j of b — attention's \f$QK^\top\f$.
/// Throws ShapeError unless a and b have the same number of columns.
Matrix matmul_transposed(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b);

/// Whether a product written into `out` replaces what `out` holds or is added to it.
enum class Into {
  Assign,  ///< out = product
  Add      ///< out += product (an accumulator)
};

/// out = a * b, or out += a * b with Into::Add; out may be a block of a larger matrix, and must not
/// overlap a or b. Throws ShapeError unless a.cols() == b.rows() and out is (a.rows(), b.cols()).
void matmul_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b, Eigen::Ref<Matrix> out,
                 Into how = Into::Assign);

/// out = a * bᵀ (or +=): as matmul_transposed, into out of shape (a.rows(), b.rows()).
void matmul_transposed_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                            Eigen::Ref<Matrix> out, Into how = Into::Assign);

/// out = aᵀ * b (or +=): a and b have the same number of rows; out is (a.cols(), b.cols()).
void transposed_matmul_into(const Eigen::Ref<const Matrix>& a, const Eigen::Ref<const Matrix>& b,
                            Eigen::Ref<Matrix> out, Into how = Into::Assign);

/// The same three in single precision (chapter 7's benchmark runs its tiled attention in float).
void matmul_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                 Eigen::Ref<Eigen::MatrixXf> out, Into how = Into::Assign);
/// a * bᵀ in single precision (see the double version).
void matmul_transposed_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, Into how = Into::Assign);
/// aᵀ * b in single precision (see the double version).
void transposed_matmul_into(const Eigen::Ref<const Eigen::MatrixXf>& a, const Eigen::Ref<const Eigen::MatrixXf>& b,
                            Eigen::Ref<Eigen::MatrixXf> out, Into how = Into::Assign);

}  // namespace scalebook
