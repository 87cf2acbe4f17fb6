// Chapter 2 contract — small models on scarce data.
// Students implement these in exercises/02-small-models/ex1_dense_forward.cpp to
// ex6_best_epoch.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// Shapes: a batch x is (n, in), one example per row; a Dense layer's weights w are (in, out) and
// its bias b is (1, out); its output is (n, out).
//
// Bad input throws, never aborts and never returns garbage: scalebook::ShapeError for empty
// matrices, shapes that do not fit and impossible sizes; scalebook::ValueError for NaN, infinity
// and values out of range. Every message starts with the function's name and ": ", e.g.
// "dense_forward: x is empty (0, 3)"; the require_* helpers of scalebook/core.hpp write such
// messages, and the checks rely on that prefix.
#pragma once

#include <vector>

#include "scalebook/core.hpp"

/// \file
/// \brief Chapter 2's exercise contract: a Dense layer forward and backward, the RMSprop step,
/// K-fold splits, and the smoothed validation curve with its best epoch — the pieces of the
/// trainer in scalebook/mlp.hpp.

/// \brief Chapter 2's exercises: the functions and types of small_models.hpp.
namespace scalebook::ch02 {

/// \brief Exercise 2.1: a Dense layer, \f$y = xw + b\f$, followed by ReLU
/// (\f$\max(0, \cdot)\f$ entry by entry) when \p relu is true.
/// \param x (n, in) inputs
/// \param w (in, out) weights
/// \param b (1, out) bias, added to every row
/// \param relu whether to apply ReLU after the affine map
/// \return (n, out)
/// \throws ShapeError if x or w is empty, x's columns differ from w's rows, or b's length
///   differs from w's columns
/// \throws ValueError if x, w or b holds NaN or infinity
Matrix dense_forward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu);

/// Gradients of a loss L with respect to a Dense layer's weights, bias and inputs.
struct DenseGradients {
  Matrix dw;     ///< (in, out) ∂L/∂w
  RowVector db;  ///< (1, out) ∂L/∂b
  Matrix dx;     ///< (n, in) ∂L/∂x, passed on to the layer below
};

/// \brief Exercise 2.2: the backward pass of dense_forward(x, w, b, relu).
///
/// Given \p grad_out = ∂L/∂y (n, out): with z = xw + b, the gradient at z is
/// dz = grad_out where z > 0, however small, and 0 elsewhere (ReLU; at z = 0 exactly the gradient
/// is 0, as in Keras and PyTorch), or dz = grad_out without ReLU. Then dw = xᵀ dz, db = the sum of dz's rows,
/// dx = dz wᵀ.
/// \throws ShapeError, ValueError as dense_forward(), and ShapeError if grad_out is not (n, out)
DenseGradients dense_backward(const Matrix& x, const Matrix& w, const RowVector& b, bool relu,
                              const Matrix& grad_out);

/// \brief Exercise 2.3: one RMSprop step, in place, entry by entry (Keras's form):
/// \f$v \leftarrow \rho v + (1 - \rho) g^2\f$, then
/// \f$p \leftarrow p - \eta\, g / \sqrt{v + \epsilon}\f$.
/// \param param the parameters p, updated
/// \param grad their gradient g, same shape
/// \param velocity the running mean square v, same shape, updated (starts at 0)
/// \param learning_rate the step size \f$\eta\f$
/// \param rho the decay \f$\rho\f$ of the running mean square
/// \param epsilon \f$\epsilon\f$, keeps the divisor away from 0
/// \throws ShapeError if any is empty or the shapes differ
/// \throws ValueError for NaN or infinity, a negative velocity, learning_rate <= 0, rho outside
///   [0, 1) or epsilon <= 0 (rho = 0 is valid, and so is any learning_rate or epsilon above 0,
///   however small)
void rmsprop_step(Matrix& param, const Matrix& grad, Matrix& velocity, double learning_rate = 1e-3,
                  double rho = 0.9, double epsilon = 1e-7);

/// One fold of K-fold validation: the rows that train and the rows that validate.
struct Fold {
  std::vector<Index> train;       ///< increasing row indices
  std::vector<Index> validation;  ///< increasing row indices
};

/// The k folds of K-fold validation, fold 0 first.
using Folds = std::vector<Fold>;

/// A curve: one value per epoch, epoch 1 first.
using Curve = std::vector<double>;

/// \brief Exercise 2.4: DLwP's K-fold splits of n rows into k folds.
///
/// With s = ⌊n / k⌋, fold i (0-based) validates the contiguous rows [i s, (i + 1) s) and trains
/// on every other row, in increasing order. So every row validates at most once, train and
/// validation are disjoint, and the last n − k s rows always train.
/// \throws ShapeError if k < 2 or k > n
Folds kfold_splits(Index n, int k);

/// \brief Exercise 2.5: the smoothing of a curve by an exponential moving average, as
/// `smooth_curve` in the first edition of DLwP (Chollet 2017, section 3.6):
/// s₀ = v₀ and \f$s_t = f\, s_{t-1} + (1 - f)\, v_t\f$ for the \p factor f.
/// \throws ShapeError if values is empty
/// \throws ValueError if a value is NaN or infinite, or factor is outside [0, 1)
Curve smooth_curve(const Curve& values, double factor);

/// \brief Exercise 2.6: the index of the smallest value (0-based; the first one on a tie): the
/// epoch after which validation stops improving, when \p values is a validation curve.
/// \throws ShapeError if values is empty
/// \throws ValueError if a value is NaN
Index best_epoch(const Curve& values);

}  // namespace scalebook::ch02

// The structs above cross the grader's process boundary field by field (remote.def). Only the
// grader's targets have scalebook/remote.hpp on their include path.
#if __has_include("scalebook/remote.hpp")
#include "scalebook/remote.hpp"
SCALEBOOK_REMOTE_FIELDS(scalebook::ch02::DenseGradients, dw, db, dx);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch02::Fold, train, validation);
#endif
