// Variant of exercise 7.6 — tiled attention with a row per query (tile (b_q, b_k), accumulator
// (b_q, d_v)), the scores scaled by 1/sqrt(d_k) as soon as a tile is computed (the running maximum
// is of scaled scores), scalar std::exp, and the mask tested query by query in every causal tile.
#include "under_the_hood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace scalebook::ch07 {

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

  const Index n_q = q.rows(), n_k = k.rows(), d_v = v.cols();
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.cols()));
  const bool causal = masking != Masking::None;
  // Query i sees keys j <= i + shift (chapter 4's alignments).
  const Index shift = masking == Masking::CausalBottomRight ? n_k - n_q : 0;
  const Index bq_max = std::min(block_q, n_q), bk_max = std::min(block_k, n_k);

  TiledResult result;
  result.output.resize(n_q, d_v);
  Matrix tile(bq_max, bk_max);  // scaled scores, then weights, of one tile: row r is query i0 + r
  Matrix acc(bq_max, d_v);      // the output accumulators of one query block
  Vector row_max(bq_max), row_sum(bq_max);  // per query: running maximum m and sum l
  for (Index i0 = 0; i0 < n_q; i0 += bq_max) {
    const Index bq = std::min(bq_max, n_q - i0);
    acc.topRows(bq).setZero();
    row_max.head(bq).setConstant(-std::numeric_limits<double>::infinity());
    row_sum.head(bq).setZero();
    for (Index j0 = 0; j0 < n_k; j0 += bk_max) {
      const Index bk = std::min(bk_max, n_k - j0);
      if (causal && j0 > i0 + bq - 1 + shift) {  // even the block's last query sees no key here
        ++result.tiles_skipped;
        continue;
      }
      ++result.tiles_computed;
      auto s = tile.topLeftCorner(bq, bk);
      s.noalias() = q.middleRows(i0, bq) * k.middleRows(j0, bk).transpose();
      s *= scale;
      for (Index r = 0; r < bq; ++r) {
        // Query i0 + r sees the tile's first `visible` keys (all of them without a mask).
        const Index visible = causal ? std::clamp<Index>(i0 + r + shift - j0 + 1, 0, bk) : bk;
        if (visible == 0) {  // nothing here for this query: the tile adds nothing to it
          s.row(r).setZero();
          continue;
        }
        const double new_max = std::max(row_max(r), s.row(r).head(visible).maxCoeff());
        const double rescale = std::exp(row_max(r) - new_max);  // e^(−∞) = 0 before the first key
        double tile_sum = 0.0;
        for (Index c = 0; c < bk; ++c) {
          s(r, c) = c < visible ? std::exp(s(r, c) - new_max) : 0.0;  // masked keys weigh exactly 0
          tile_sum += s(r, c);
        }
        row_sum(r) = rescale * row_sum(r) + tile_sum;
        acc.row(r) *= rescale;
        row_max(r) = new_max;
      }
      acc.topRows(bq).noalias() += s * v.middleRows(j0, bk);  // (bq, bk)·(bk, d_v)
    }
    for (Index r = 0; r < bq; ++r) {  // a query that saw no key keeps l = 0 and outputs zeros
      if (row_sum(r) == 0.0) result.output.row(i0 + r).setZero();
      else result.output.row(i0 + r) = acc.row(r) / row_sum(r);
    }
  }
  return result;
}

}  // namespace scalebook::ch07
