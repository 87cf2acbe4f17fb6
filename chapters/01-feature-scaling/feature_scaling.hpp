// Chapter 1 contract — feature scaling.
// Students implement these in exercises/01-feature-scaling/ex1_fit_scaling.cpp to
// ex5_knn_predict.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// Shapes: a data matrix is (n, d), one example per row and one feature per column.
//
// Bad input throws, never aborts and never returns garbage: scalebook::ShapeError for empty
// matrices, shapes that do not fit and impossible sizes; scalebook::ValueError for NaN, infinity
// and values out of range. Every message starts with the function's name and ": ", e.g.
// "fit_scaling: train is empty (0, 3)"; the require_* helpers of scalebook/core.hpp write such
// messages, and the checks rely on that prefix.
#pragma once

#include <vector>

#include "scalebook/core.hpp"

/// \file
/// \brief Chapter 1's exercise contract: standardisation fitted on training rows, applied to
/// any rows, without leakage; and two measurements of why it matters (gradient descent, kNN).

/// \brief Chapter 1's exercises: the functions and types of feature_scaling.hpp.
namespace scalebook::ch01 {

/// Per-feature statistics of the training rows: a row x becomes (x - mean) / scale.
struct Scaling {
  RowVector mean;   ///< (1, d) mean of each feature over the training rows
  RowVector scale;  ///< (1, d) population standard deviation (ddof = 0), or 1 for a constant feature
};

/// \brief Exercise 1.1: fit the scaling on training rows, feature by feature (column by column).
///
/// mean(c) = (1/n) Σ_i x(i, c); scale(c) = sqrt((1/n) Σ_i (x(i, c) - mean(c))²), the population
/// standard deviation (divide by n, not n − 1, as numpy and Keras do). A constant feature has
/// standard deviation 0: its scale is 1 instead (policy: it becomes 0 after scaling, never NaN);
/// a spread however small but not 0 is kept.
/// Compute the deviations from the mean (two passes), so that features like 1e9 + small
/// differences keep their digits, and sum in double precision (to 1e-12 relative; a float keeps
/// about 7 digits).
/// \throws ShapeError if train is empty (no rows or no columns)
/// \throws ValueError if train holds NaN or infinity
Scaling fit_scaling(const Matrix& train);

/// \brief Exercise 1.2: apply a fitted scaling to any rows: (x(i, c) − mean(c)) / scale(c).
/// \throws ShapeError if x is empty, if x's columns differ from the scaling's length, or if the
///   scaling's mean and scale differ in length
/// \throws ValueError if x or the scaling holds NaN or infinity, or a scale is not positive (any
///   scale above 0 is valid, however small)
Matrix apply_scaling(const Matrix& x, const Scaling& scaling);

/// Training and test rows scaled with the training rows' statistics.
struct ScaledSplit {
  Matrix train;     ///< (n_train, d)
  Matrix test;      ///< (n_test, d)
  Scaling scaling;  ///< fitted on the training rows only
};

/// \brief Exercise 1.3: scale a train/test split without leakage: fit on the training rows only,
/// apply the same scaling to both. The test rows must not influence the statistics.
/// \throws ShapeError if either is empty or their columns differ
/// \throws ValueError if either holds NaN or infinity
ScaledSplit scale_train_test(const Matrix& train, const Matrix& test);

/// What gradient descent did.
struct DescentResult {
  Vector weights;             ///< (d) the last w
  double bias = 0.0;          ///< the last b
  int iterations = 0;         ///< updates made
  bool converged = false;     ///< the gradient norm reached the tolerance
  std::vector<double> loss;   ///< the loss at the start and after every update: iterations + 1 values
};

/// \brief Exercise 1.4: gradient descent on least squares,
/// \f$L(w, b) = \frac{1}{2n} \sum_i (x_i \cdot w + b - y_i)^2\f$, from w = 0, b = 0.
///
/// At each point: r = Xw + b − y, g_w = Xᵀr / n, g_b = Σ r / n. If the Euclidean norm of
/// (g_w, g_b) is at most \p tolerance, stop with converged = true. Otherwise, if
/// \p max_iterations updates were made, stop with converged = false; else update
/// w −= learning_rate g_w, b −= learning_rate g_b. If the loss becomes NaN or infinite (a learning
/// rate too large), stop with converged = false.
/// \throws ShapeError if x is empty or y's length differs from x's rows
/// \throws ValueError if x or y holds NaN or infinity, learning_rate or tolerance is not positive
///   and finite (any value above 0 is valid, however small), or max_iterations is negative
DescentResult gradient_descent(const Matrix& x, const Vector& y, double learning_rate,
                               double tolerance, int max_iterations);

/// \brief Exercise 1.5: k-nearest-neighbour classification with Euclidean distance.
///
/// For each test row, take the k training rows nearest to it (on equal distances, the lower
/// training row index first) and predict the class most of them have (on a tie between classes,
/// the smallest class). Classes are the values of train_y: whole numbers 0, 1, 2, ...
/// \return (n_test) predicted classes
/// \throws ShapeError if train_x or test_x is empty, their columns differ, train_y's length
///   differs from train_x's rows, or k < 1 or k > n_train
/// \throws ValueError if any input holds NaN or infinity, or a class is negative or not whole
Vector knn_predict(const Matrix& train_x, const Vector& train_y, const Matrix& test_x, int k);

}  // namespace scalebook::ch01

// The structs above cross the grader's process boundary field by field (remote.def). Only the
// grader's targets have scalebook/remote.hpp on their include path.
#if __has_include("scalebook/remote.hpp")
#include "scalebook/remote.hpp"
SCALEBOOK_REMOTE_FIELDS(scalebook::ch01::Scaling, mean, scale);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch01::ScaledSplit, train, test, scaling);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch01::DescentResult, weights, bias, iterations, converged, loss);
#endif
