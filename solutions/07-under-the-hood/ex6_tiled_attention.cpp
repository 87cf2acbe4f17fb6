// Reference for exercise 7.6 — tiled_attention.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); the output is (n_q, d_v).
//
// FlashAttention's forward pass on a CPU. For each block of queries, visit the key blocks in
// order; per query keep a running maximum m, a running sum l and an output accumulator; when a
// tile raises m to m', multiply l and the accumulator by exp(m − m') before adding the tile's
// share. The (n_q, n_k) score matrix never exists: one tile of scores at a time does.
//
// Written for speed as well as for reading (the benchmark runs this file at -O3): the tiles are
// lib's matrix products (compiled once), stored transposed — a column per query — so that the
// maximum, the exponentials and the sums of one query run over contiguous memory.
#include "under_the_hood.hpp"
#include "scalebook/linalg.hpp"  // Eigen's products on blocks, compiled once: 2 s less per compile
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

namespace {

// Blocks of `block` rows covering n rows, the last one maybe shorter (n + block - 1 could overflow).
Index block_count(Index n, Index block) { return n / block + (n % block != 0 ? 1 : 0); }

// The algorithm for any floating-point type: double for the exercise, float for the benchmark.
// Inputs are assumed valid (tiled_attention below validates them).
template <class Scalar>
void tiled_attention_core(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& q,
                          const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& k,
                          const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& v,
                          Index block_q, Index block_k, Masking masking,
                          Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& output,
                          Index& tiles_computed, Index& tiles_skipped) {
  using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  constexpr Scalar minus_inf = -std::numeric_limits<Scalar>::infinity();
  const Index n_q = q.rows(), n_k = k.rows(), d_v = v.cols();
  const Scalar scale = Scalar(1) / std::sqrt(static_cast<Scalar>(q.cols()));
  const bool causal = masking != Masking::None;
  // Query i sees keys j <= i + shift (chapter 4's alignments).
  const Index shift = masking == Masking::CausalBottomRight ? n_k - n_q : 0;
  const Index q_blocks = block_count(n_q, block_q), k_blocks = block_count(n_k, block_k);
  const Index bq_max = std::min(block_q, n_q), bk_max = std::min(block_k, n_k);

  output.resize(n_q, d_v);
  Mat tile(bk_max, bq_max);  // scores, then weights, of one tile, transposed: column c is query i0 + c
  Mat acc(d_v, bq_max);      // output accumulator of one query block, transposed likewise
  Array row_max(bq_max), row_sum(bq_max);  // per query of the block: running m (raw score) and l
  tiles_computed = 0;
  tiles_skipped = 0;

  for (Index qb = 0; qb < q_blocks; ++qb) {
    const Index i0 = qb * block_q, bq = std::min(block_q, n_q - i0);
    acc.leftCols(bq).setZero();
    row_max.head(bq).setConstant(minus_inf);
    row_sum.head(bq).setZero();

    // Causal: the block's last query sees keys up to last_key; later key blocks are all masked.
    Index visible_blocks = k_blocks;
    if (causal) {
      const Index last_key = i0 + bq - 1 + shift;
      visible_blocks = last_key < 0 ? 0 : std::min(k_blocks, last_key / block_k + 1);
    }
    tiles_computed += visible_blocks;
    tiles_skipped += k_blocks - visible_blocks;

    for (Index kb = 0; kb < visible_blocks; ++kb) {
      const Index j0 = kb * block_k, bk = std::min(block_k, n_k - j0);
      auto s = tile.topLeftCorner(bk, bq);
      matmul_transposed_into(k.middleRows(j0, bk), q.middleRows(i0, bq), s);  // raw q·k, (bk, bq)
      // Only a tile that reaches past the first query's last key needs the mask.
      const bool straddles = causal && j0 + bk - 1 > i0 + shift;
      for (Index c = 0; c < bq; ++c) {
        auto column = s.col(c);
        Index allowed = bk;  // keys j0 .. j0 + allowed − 1 are visible to query i0 + c
        if (straddles) allowed = std::clamp<Index>(i0 + c + shift - j0 + 1, 0, bk);
        if (allowed == 0) {  // this query sees nothing here: the tile adds nothing
          column.setZero();
          continue;
        }
        const Scalar tile_max = column.head(allowed).maxCoeff();
        const Scalar new_max = std::max(row_max(c), tile_max);
        const Scalar alpha = std::exp((row_max(c) - new_max) * scale);  // 0 when m was −∞
        // Weights relative to the new maximum; masked keys get exactly 0, not exp(−∞).
        column.head(allowed) = ((column.head(allowed).array() - new_max) * scale).exp().matrix();
        column.tail(bk - allowed).setZero();
        row_sum(c) = alpha * row_sum(c) + column.head(allowed).sum();
        acc.col(c) *= alpha;
        row_max(c) = new_max;
      }
      transposed_matmul_into(v.middleRows(j0, bk), s, acc.leftCols(bq), Into::Add);  // (d_v, bk)·(bk, bq)
    }

    // Divide by the sums; a query that saw no key keeps l = 0 and outputs zeros (chapter 4).
    for (Index c = 0; c < bq; ++c) {
      if (row_sum(c) == Scalar(0)) output.row(i0 + c).setZero();
      else output.row(i0 + c) = acc.col(c).transpose() / row_sum(c);
    }
  }
}

}  // namespace

TiledResult tiled_attention(const Matrix& q, const Matrix& k, const Matrix& v, Index block_q,
                               Index block_k, Masking masking) {
  require_nonempty("tiled_attention", "q", q);
  require_nonempty("tiled_attention", "k", k);
  require_nonempty("tiled_attention", "v", v);
  require_same_cols("tiled_attention", "q", q, "k", k);
  if (v.rows() != k.rows()) {
    throw ShapeError("tiled_attention: v " + shape_of(v) + " must have one row per key, k is " +
                     shape_of(k));
  }
  require_positive("tiled_attention", "block_q", block_q);
  require_positive("tiled_attention", "block_k", block_k);
  require_finite("tiled_attention", "q", q);
  require_finite("tiled_attention", "k", k);
  require_finite("tiled_attention", "v", v);

  TiledResult result;
  tiled_attention_core<double>(q, k, v, block_q, block_k, masking, result.output,
                               result.tiles_computed, result.tiles_skipped);
  return result;
}

}  // namespace scalebook::ch07
