// scalebook/core.hpp — what every chapter builds on: Eigen aliases, the workbook's typed errors,
// shape and value checks whose messages name the function and the shapes, and the error that an
// exercise stub throws until a student implements it.
//
// Include this header before any Eigen header: it turns Eigen's internal assertions into a
// scalebook::ShapeError instead of an abort, so a slip with shapes never kills the process.
/// \file
/// \brief What every chapter builds on: Eigen aliases, the workbook's errors, shape and value
/// checks, and the error an exercise stub throws.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace scalebook::detail {
[[noreturn]] void eigen_assert_failed(const char* condition, const char* file, int line);
}  // namespace scalebook::detail

#ifndef eigen_assert
#define eigen_assert(x)                                                           \
  do {                                                                            \
    if (!static_cast<bool>(x))                                                    \
      ::scalebook::detail::eigen_assert_failed(#x, __FILE__, __LINE__);           \
  } while (false)
#endif

#include <Eigen/Core>

/// \brief lib: what the chapters share (scalebook/*.hpp) — data sets, random numbers, a small-MLP
/// trainer, matrix products, and lib's copies of what earlier chapters teach, for the chapters
/// after them.
namespace scalebook {

using Index = Eigen::Index;                                       ///< sizes and positions (signed)
using Matrix = Eigen::MatrixXd;                                   ///< column-major doubles
using Vector = Eigen::VectorXd;                                   ///< a column of doubles
using RowVector = Eigen::RowVectorXd;                             ///< a row of doubles
using BoolMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>;  ///< e.g. a mask

/// Base of every error the workbook throws on a user's mistake.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Matrices whose shapes do not fit together, empty inputs, negative or zero sizes.
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// Values that make no sense for the operation: NaN or infinity, probabilities that do not sum to one.
class ValueError : public Error {
 public:
  using Error::Error;
};

/// Thrown by an exercise stub: names the exercise and the command that shows its hint.
class NotImplemented : public Error {
 public:
  /// "exercise 3.1 (dot_scores) is not implemented yet; stuck? run ./workbook hint 3.1".
  NotImplemented(std::string exercise_id, std::string function);
  /// The exercise's number, e.g. "3.1".
  const std::string& exercise_id() const noexcept { return exercise_id_; }

 private:
  std::string exercise_id_;
};

/// Called by every exercise stub; never returns.
[[noreturn]] void not_implemented(std::string_view exercise_id, std::string_view function);

/// "(3, 4)" — how shapes appear in every message.
template <class Derived>
std::string shape_of(const Eigen::EigenBase<Derived>& m) {
  return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")";
}

namespace detail {
// What the shape checks below compute, compiled once in lib: they read a matrix's rows and
// columns only, so the calling file instantiates nothing of Eigen for them.
void require_nonempty(std::string_view function, std::string_view name, Index rows, Index cols);
void require_shape(std::string_view function, std::string_view name, Index rows, Index cols,
                   Index want_rows, Index want_cols);
void require_same_cols(std::string_view function, std::string_view a_name, Index a_rows, Index a_cols,
                       std::string_view b_name, Index b_rows, Index b_cols);
}  // namespace detail

/// Throws ShapeError "function: name is empty (0, 3)" when m has no entries.
template <class Derived>
void require_nonempty(std::string_view function, std::string_view name, const Eigen::EigenBase<Derived>& m) {
  detail::require_nonempty(function, name, m.rows(), m.cols());
}

// require_finite takes a Matrix, a Vector or a RowVector as it is, by overloads compiled once in
// lib (binding the argument to an Eigen::Ref costs the calling file a few hundredths of a second of
// compile time, at every save). Any other matrix of doubles (a block, a map, an expression) goes
// through the template, which views it as an Eigen::Ref<const Matrix>.

/// Throws ValueError naming the first non-finite entry (NaN or ±inf) and its position.
void require_finite(std::string_view function, std::string_view name,
                    const Eigen::Ref<const Matrix>& m);
/// require_finite for a Matrix, compiled once.
void require_finite(std::string_view function, std::string_view name, const Matrix& m);
/// require_finite for a Vector, compiled once.
void require_finite(std::string_view function, std::string_view name, const Vector& m);
/// require_finite for a RowVector, compiled once.
void require_finite(std::string_view function, std::string_view name, const RowVector& m);
/// require_finite for a block or any other matrix expression of doubles.
template <class Derived>
void require_finite(std::string_view function, std::string_view name, const Eigen::MatrixBase<Derived>& m) {
  require_finite(function, name, Eigen::Ref<const Matrix>(m));
}

/// Throws ShapeError unless m is rows × cols.
template <class Derived>
void require_shape(std::string_view function, std::string_view name, const Eigen::EigenBase<Derived>& m,
                   Index rows, Index cols) {
  detail::require_shape(function, name, m.rows(), m.cols(), rows, cols);
}

/// Throws ShapeError unless a and b have the same number of columns (e.g. queries and keys share d_k).
template <class A, class B>
void require_same_cols(std::string_view function, std::string_view a_name, const Eigen::EigenBase<A>& a,
                       std::string_view b_name, const Eigen::EigenBase<B>& b) {
  detail::require_same_cols(function, a_name, a.rows(), a.cols(), b_name, b.rows(), b.cols());
}

/// The checks every attention function makes of its queries (n, d_k) and keys (m, d_k): neither
/// empty (ShapeError), the same d_k (ShapeError), only finite values (ValueError).
template <class Q, class K>
void require_queries_keys(std::string_view function, const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<K>& k) {
  require_nonempty(function, "q", q);
  require_nonempty(function, "k", k);
  require_same_cols(function, "q", q, "k", k);
  require_finite(function, "q", q.derived());
  require_finite(function, "k", k.derived());
}

/// Throws ShapeError unless value > 0, e.g. "attention: d_k must be positive, got 0".
void require_positive(std::string_view function, std::string_view name, long long value);

}  // namespace scalebook
