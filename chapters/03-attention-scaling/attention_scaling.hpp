// Chapter 3 contract — why attention scores are divided by sqrt(d_k).
// Students implement these in exercises/03-attention-scaling/ex1_dot_scores.cpp to
// ex5_row_entropy.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// Shapes: q is (n, d_k), k is (m, d_k).
#pragma once

#include <cstdint>

#include "scalebook/core.hpp"
#include "scalebook/random.hpp"

/// \file
/// \brief Chapter 3's exercise contract: dot-product scores, their scaling, a stable softmax, and
/// two measurements that show why the scaling matters.
///
/// Rules for every function here (the checks rely on them):
/// - Bad input throws scalebook::ShapeError (empty, shapes that do not fit, sizes below their
///   minimum) or scalebook::ValueError (NaN, infinity, values out of range), exactly those types,
///   never a bare std::exception, and never aborts or returns garbage.
/// - Every error message starts with the function's name and ": ", e.g.
///   "dot_scores: q is empty (0, 3)". lib's require_* helpers (scalebook/core.hpp) write messages
///   that way; an error from Eigen's own assertions does not count as the function's check.

/// \brief Chapter 3's exercises: the functions and types of attention_scaling.hpp.
namespace scalebook::ch03 {

/// \brief Exercise 3.1: every query's dot product with every key, \f$S = QK^\top\f$.
/// \param q queries, one per row, (n, d_k)
/// \param k keys, one per row, (m, d_k)
/// \return the (n, m) matrix with entry (i, j) = q.row(i) · k.row(j)
/// \throws ShapeError if q or k is empty or their column counts differ
/// \throws ValueError if q or k holds NaN or infinity
Matrix dot_scores(const Matrix& q, const Matrix& k);

/// \brief Exercise 3.2: the scaled scores \f$S = QK^\top / \sqrt{d_k}\f$, with d_k = q.cols().
/// \throws ShapeError, ValueError as dot_scores()
Matrix scaled_scores(const Matrix& q, const Matrix& k);

/// \brief Exercise 3.3: softmax of each row, stable for large logits (subtract the row's maximum).
/// \param scores any (n, m) matrix of finite values
/// \return (n, m) weights; each row is non-negative and sums to 1
/// \throws ShapeError if scores is empty
/// \throws ValueError if scores holds NaN or infinity
Matrix softmax_rows(const Matrix& scores);

/// \brief Exercise 3.4: the sample variance of the dot product q·k (divided by sqrt(d_k) when
/// \p scaled) over \p samples pairs of vectors with iid standard normal components.
///
/// Draw order (so that results are reproducible): for each sample, first the d_k components of q
/// with rng.normal(), then the d_k components of k. The variance uses the sample mean and divides
/// by samples − 1.
/// \throws ShapeError if d_k < 1 or samples < 2
double dot_product_variance(int d_k, int samples, bool scaled, Rng& rng);

/// \brief Exercise 3.5: the entropy of each row of attention weights, in nats:
/// \f$H_i = -\sum_j w_{ij} \ln w_{ij}\f$, with \f$0 \ln 0 = 0\f$. High entropy: attention spread out;
/// zero: all weight on one key. Only a weight of exactly 0 adds nothing: every positive weight
/// counts, however small (1e-13 adds 3e-12).
/// \param weights (n, m), each row non-negative and summing to 1 (within 1e-9)
/// \return an (n) vector of entropies, each between 0 and ln(m)
/// \throws ShapeError if weights is empty
/// \throws ValueError if an entry is negative or non-finite, or a row does not sum to 1
Vector row_entropy(const Matrix& weights);

}  // namespace scalebook::ch03
