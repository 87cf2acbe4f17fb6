// Exercise 7.6 — tiled_attention: exact attention, one tile at a time
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
//
// The chapter has six exercises, one per file (ex1_attention_flops.cpp to ex6_tiled_attention.cpp):
// saving one recompiles only that exercise. Run ./workbook check 7 (or keep ./workbook watch 7
// open) until the chapter's checks pass. Stuck? ./workbook hint 7.6. The contract, with every
// function's exact promise, is chapters/07-under-the-hood/under_the_hood.hpp.
//
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
// Bad input throws ShapeError or ValueError whose message starts with the function's name:
// require_positive("tiled_attention", "block_q", block_q) and the other
// require_* helpers of scalebook/core.hpp do it.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// What to write:
// Exercise 7.6 — FlashAttention's forward pass. For each block of queries, visit the key blocks
// in order, compute that tile's scores (a block of q times the transpose of a block of k), and
// fold them into each query's running maximum, running sum and output accumulator — rescaling the
// sum AND the accumulator whenever the maximum grows. Divide by the sum at the end. With a causal
// mask, skip the tiles in which every score is masked (count them in tiles_skipped) and mask the
// others entry by entry. Never allocate an (n_q, n_k) matrix.
// Products: #include "scalebook/linalg.hpp", whose products are compiled once in lib and take
// blocks as they are: matmul_transposed_into(k.middleRows(j0, bk), q.middleRows(i0, bq), tile)
// writes a tile's scores, transposed_matmul_into(v_block, weights, acc, Into::Add) adds to an
// accumulator. The same products written inline (a * b.transpose() on blocks) compute the same
// numbers but cost this file about two seconds of compile time at every save.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

TiledResult tiled_attention([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k,
                               [[maybe_unused]] const Matrix& v, [[maybe_unused]] Index block_q,
                               [[maybe_unused]] Index block_k, [[maybe_unused]] Masking masking) {
  scalebook::not_implemented("7.6", "tiled_attention");
}

}  // namespace scalebook::ch07
