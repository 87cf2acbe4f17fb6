// Chapter 4 contract — causal masking: the future is not available.
// Students implement these in exercises/04-causal-masking/ex1_causal_mask.cpp to
// ex3_causal_attention.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation). Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and
// weights are (n_q, n_k).
#pragma once

#include "scalebook/alignment.hpp"
#include "scalebook/core.hpp"
#include "scalebook/linalg.hpp"  // matmul, matmul_transposed: products compiled once

/// \file
/// \brief Chapter 4's exercise contract: the causal mask, a masked softmax, causal attention.
///
/// Rules for every function here (the checks rely on them):
/// - Bad input throws scalebook::ShapeError (empty, shapes that do not fit, sizes below 1) or
///   scalebook::ValueError (NaN or infinity), exactly those types, and never aborts or returns
///   garbage.
/// - Every error message starts with the function's name and ": ", e.g.
///   "masked_softmax: allowed (4, 3) must have the shape of scores (3, 4)". lib's require_*
///   helpers (scalebook/core.hpp) write messages that way; an error from Eigen's own assertions
///   does not count as the function's check.

/// \brief Chapter 4's exercises: the functions and types of causal_masking.hpp.
namespace scalebook::ch04 {

/// \brief Where query i sits among the keys when n_q and n_k differ: TopLeft (query i is
/// position i) or BottomRight (the last query is the last key); see scalebook/alignment.hpp.
using scalebook::Alignment;

/// \brief Exercise 4.1: the causal mask; entry (i, j) is true when query i may attend to key j.
/// \param n_q,n_k the numbers of queries and keys (both at least 1)
/// \param alignment see Alignment; with n_q = n_k both give the same lower-triangular mask, the
///        diagonal included (every position sees itself). With BottomRight and n_q > n_k the first
///        n_q − n_k rows allow nothing: those queries come before every key.
/// \return an (n_q, n_k) matrix of bools
/// \throws ShapeError if n_q or n_k is less than 1
BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment = Alignment::TopLeft);

/// \brief Exercise 4.2: softmax of each row over the allowed entries only. Disallowed entries are
/// set to −∞ before the softmax, so their weights are exactly 0.
///
/// Policy for a fully masked row (no key allowed): its weights are all zero, so that query's
/// attention output is the zero vector. (An unguarded −∞ softmax would give 0/0 = NaN.)
/// \param scores (n_q, n_k) finite scores
/// \param allowed (n_q, n_k); true where the score takes part in its row's softmax
/// \return (n_q, n_k) weights: each row sums to 1 over its allowed entries (or is all zeros)
/// \throws ShapeError if scores is empty or allowed has another shape
/// \throws ValueError if scores holds NaN or infinity
Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed);

/// \brief Exercise 4.3: causal scaled dot-product attention,
/// \f$\mathrm{softmax}(\mathrm{mask}(QK^\top/\sqrt{d_k}))\,V\f$.
/// \param q,k,v queries (n_q, d_k), keys (n_k, d_k) and values (n_k, d_v), one per row
/// \param alignment which keys each query may see when n_q and n_k differ (see Alignment)
/// \return (n_q, d_v); row i depends only on the keys and values query i may see
/// \throws ShapeError if an input is empty, q and k differ in columns, or v and k differ in rows
/// \throws ValueError if an input holds NaN or infinity
Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v,
                        Alignment alignment = Alignment::TopLeft);

}  // namespace scalebook::ch04
