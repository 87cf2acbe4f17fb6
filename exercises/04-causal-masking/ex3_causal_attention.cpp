// Exercise 4.3 — causal_attention
// Chapter 4: causal masking — the future is not available.
//
// The chapter has three exercises, one per file (ex1_causal_mask.cpp to ex3_causal_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 4 (or keep ./workbook watch 4 open)
// until the chapter's checks pass. Stuck? ./workbook hint 4.3. The contract, with every
// function's exact promise, is chapters/04-causal-masking/causal_masking.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 4.3 — causal scaled dot-product attention.
// Scores of every query against every key, scaled as in chapter 3; mask them causally with the
// given alignment and turn them into weights with your 4.1 and 4.2; mix the value rows with
// those weights. The result is (n_q, d_v).
// Validate first: empty inputs, q and k with different column counts, or v without one row per
// key are ShapeErrors; NaN or infinity in any input is a ValueError.
// Products: q * k.transpose() works, but scalebook::matmul_transposed(q, k) and
// scalebook::matmul(w, v) give the same numbers and keep this file ~2 s faster to recompile.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

Matrix causal_attention([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k,
                        [[maybe_unused]] const Matrix& v, [[maybe_unused]] Alignment alignment) {
  scalebook::not_implemented("4.3", "causal_attention");
}

}  // namespace scalebook::ch04
