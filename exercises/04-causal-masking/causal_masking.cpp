// Chapter 4 exercises — causal masking: the future is not available.
//
// Implement the three functions below until the chapter's checks pass (`./workbook` shows your
// progress). The contract (what each function must do, what it throws) is in
// chapters/04-causal-masking/causal_masking.hpp; the chapter page explains why.
// Stuck? `./workbook hint 4.1` (or 4.2, 4.3).
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
// Remove [[maybe_unused]] from a parameter once you use it.
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

// Exercise 4.1 — the causal mask.
// Return an (n_q, n_k) matrix of bools: entry (i, j) is true when query i may attend to key j.
// A query may see its own position and everything before it, never anything after it.
// With Alignment::BottomRight the last query lines up with the last key (work out how far every
// query shifts when n_k and n_q differ). Reject n_q < 1 or n_k < 1 with a ShapeError; lib's
// require_positive() does that with a good message.
BoolMatrix causal_mask([[maybe_unused]] Index n_q, [[maybe_unused]] Index n_k,
                       [[maybe_unused]] Alignment alignment) {
  scalebook::not_implemented("4.1", "causal_mask");
}

// Exercise 4.2 — softmax over the allowed entries of each row.
// Disallowed entries get −∞ before the softmax, so their weight must come out exactly 0.0 and the
// allowed weights of a row sum to 1. Subtract the maximum of the allowed entries, as chapter 3
// taught. A row with no allowed entry follows the contract's policy (all zeros), never NaN.
// Validate first: empty scores or a mask of another shape is a ShapeError, NaN or infinity in
// the scores a ValueError (lib's require_nonempty, require_finite and shape_of help).
Matrix masked_softmax([[maybe_unused]] const Matrix& scores,
                      [[maybe_unused]] const BoolMatrix& allowed) {
  scalebook::not_implemented("4.2", "masked_softmax");
}

// Exercise 4.3 — causal scaled dot-product attention.
// Scores of every query against every key, scaled as in chapter 3; mask them causally with the
// given alignment and turn them into weights with your 4.1 and 4.2; mix the value rows with
// those weights. The result is (n_q, d_v).
// Validate first: empty inputs, q and k with different column counts, or v without one row per
// key are ShapeErrors; NaN or infinity in any input is a ValueError.
// Products: q * k.transpose() works, but scalebook::matmul_transposed(q, k) and
// scalebook::matmul(w, v) give the same numbers and keep this file ~2 s faster to recompile.
Matrix causal_attention([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k,
                        [[maybe_unused]] const Matrix& v, [[maybe_unused]] Alignment alignment) {
  scalebook::not_implemented("4.3", "causal_attention");
}

}  // namespace scalebook::ch04
