// scalebook/linalg.hpp — matrix products compiled once, in lib/.
//
// Eigen's `a * b` instantiates its whole blocked matrix-product machinery in every file that uses
// it: about 2 s of compile time per file on a 2-core machine. These functions give the same
// results with that cost paid once, so an exercise file that uses them recompiles quickly.
/// \file
/// \brief Matrix products compiled once, in lib/.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER == 3
#error "scalebook/linalg.hpp computes Q Kᵀ, which exercise 3.1 teaches: chapter 3's exercises write their own products"
#endif

#include "scalebook/core.hpp"

namespace scalebook {

/// a * b. Throws ShapeError unless a.cols() == b.rows().
Matrix matmul(const Matrix& a, const Matrix& b);

/// a * bᵀ: entry (i, j) is row i of a dotted with row j of b — attention's \f$QK^\top\f$.
/// Throws ShapeError unless a and b have the same number of columns.
Matrix matmul_transposed(const Matrix& a, const Matrix& b);

}  // namespace scalebook
