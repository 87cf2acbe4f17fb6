// Chapter 7 contract — under the hood: what attention costs, and exact tiled attention.
// Students implement these in exercises/07-under-the-hood/ex1_attention_flops.cpp to
// ex6_tiled_attention.cpp, one file per exercise (the instructor's copy of the workbook holds a
// reference implementation).
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
//
// Rules every function here follows (the checks rely on them):
// - Bad input throws scalebook::ShapeError (empty inputs, shapes that do not fit, sizes or block
//   sizes below 1) or scalebook::ValueError (NaN or infinity where it is not allowed), from
//   scalebook/core.hpp. Every message starts with the function's name and ": ", e.g.
//   "tiled_attention: block_q must be positive, got 0"; lib's require_* helpers write it so.
// - Nothing aborts and nothing returns garbage on bad input.
// - FLOPs are counted as floating-point operations: a multiply-add is TWO FLOPs (one multiply,
//   one add), as Kaplan et al. (2020) and Hoffmann et al. (2022) count them. Some tools count one
//   (fvcore 0.1.6's FlopCountAnalysis: "We count one fused multiply-add as one flop"), so published
//   figures can differ by a factor of 2. Counts are exact integers, and of one forward pass (the
//   outputs from the inputs); a training step's backward pass costs about twice as much again.
#pragma once

#include <cstdint>
#include <limits>

#include "scalebook/alignment.hpp"
#include "scalebook/core.hpp"

/// \file
/// \brief Chapter 7's exercise contract: FLOPs and memory of attention, online softmax, tiled
/// (FlashAttention-style) exact attention.

/// \brief Chapter 7's exercises: the functions and types of under_the_hood.hpp.
namespace scalebook::ch07 {

/// A FLOP or byte count: exact for every size a machine can hold.
using Count = std::int64_t;

/// \brief The FLOPs of one forward pass of (non-causal) scaled dot-product attention,
/// \f$\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V\f$, split by stage.
struct StageFlops {
  Count scores = 0;        ///< \f$QK^\top\f$: n_q·n_k dot products of length d_k
  Count softmax = 0;       ///< scale, subtract the row maximum, exp, add to the row sum, divide
  Count weighted_sum = 0;  ///< weights times V: n_q·n_k·d_v multiply-adds
  /// \brief All three stages.
  Count total() const { return scores + softmax + weighted_sum; }
};

/// \brief Exercise 7.1: the FLOPs of attention with n_q queries, n_k keys, key width d_k and value
/// width d_v.
///
/// Convention: a multiply-add is 2 FLOPs, so a dot product of length d costs 2d FLOPs. The softmax
/// costs 5 FLOPs per score: the scaling by \f$1/\sqrt{d_k}\f$, the subtraction of the row maximum,
/// the exponential, the addition into the row sum and the division by it (comparisons that find
/// the maximum are not counted).
/// \throws ShapeError if a size is below 1
StageFlops attention_flops(Index n_q, Index n_k, Index d_k, Index d_v);

/// \brief The shape of one Transformer layer (an encoder block without its normalisations).
struct LayerShape {
  Index model_width = 0;  ///< \f$d_{model}\f$, the width of the residual stream
  Index heads = 0;        ///< attention heads; model_width must be a multiple of it (\f$d_k = d_v = d_{model}/h\f$)
  Index mlp_width = 0;    ///< \f$d_{ff}\f$, the hidden width of the MLP (4·model_width in most models)
};

/// \brief The FLOPs of one forward pass of a Transformer layer on a sequence of n tokens.
struct LayerFlops {
  Count projections = 0;  ///< the Q, K, V and output projections: four (n, d_model)·(d_model, d_model) products
  Count attention = 0;    ///< every head's attention_flops(n, n, d_k, d_k), summed over the heads
  Count mlp = 0;          ///< (n, d_model)·(d_model, d_ff), then (n, d_ff)·(d_ff, d_model)
  /// \brief The whole layer.
  Count total() const { return projections + attention + mlp; }
};

/// \brief Exercise 7.2: the FLOPs of a whole layer: projections and MLP grow like n, attention like
/// n². Biases, activations, normalisations and residual additions are left out (they are O(n·d)).
/// \throws ShapeError if n, a width or heads is below 1, or model_width is not a multiple of heads
LayerFlops layer_flops(Index n, const LayerShape& shape);

/// \brief Exercise 7.3: the shortest sequence length n at which attention's FLOPs reach the
/// projections' and the MLP's together: the smallest n ≥ 1 with
/// layer_flops(n).attention ≥ layer_flops(n).projections + layer_flops(n).mlp.
/// \throws ShapeError as layer_flops()
Index crossover_length(const LayerShape& shape);

/// \brief Extra memory of attention beyond its inputs and its output, in bytes.
struct MemoryUse {
  Count naive = 0;  ///< the (n_q, n_k) matrix of scores, overwritten in place by the weights
  Count tiled = 0;  ///< one score tile, and per query of one block: an accumulator row, a running max and sum
};

/// \brief Exercise 7.4: the working memory of naive and tiled attention, for numbers of
/// \p bytes_per_number bytes (8 for double, 4 for float).
///
/// Naive: n_q·n_k numbers. Tiled, with tiles of b_q = min(block_q, n_q) queries and
/// b_k = min(block_k, n_k) keys: b_q·b_k (a score tile) + b_q·d_v (the output accumulator of one
/// query block) + 2·b_q (its running maxima and sums) numbers. It does not grow with n.
/// \throws ShapeError if a size, a block size or bytes_per_number is below 1
MemoryUse attention_memory(Index n_q, Index n_k, Index d_v, Index block_q, Index block_k,
                                 Index bytes_per_number);

/// \brief The state of a softmax over a stream: the running maximum m and the running sum
/// \f$l = \sum_i e^{x_i - m}\f$ of the values seen so far. Nothing seen (or only −∞): m = −∞, l = 0.
struct SoftmaxState {
  double max = -std::numeric_limits<double>::infinity();  ///< the running maximum m
  double sum = 0.0;  ///< the running sum l, relative to m
};

/// \brief Exercise 7.5a: the softmax state of one row, in ONE pass: for each x, the maximum grows to
/// m' = max(m, x) and the sum is rescaled to the new maximum, \f$l' = l\,e^{m - m'} + e^{x - m'}\f$.
/// −∞ entries (masked scores) add nothing; a row of only −∞ gives {−∞, 0}. Any finite score counts,
/// however far below zero: the maximum starts at −∞, as no finite start is small enough.
/// \throws ShapeError if row is empty
/// \throws ValueError if row holds NaN or +∞
SoftmaxState softmax_state(const RowVector& row);

/// \brief Exercise 7.5b: the softmax of each row from its softmax_state(): weight
/// \f$e^{x - m}/l\f$. Equal to the two-pass stable softmax to 1e-15 relative. −∞ entries get weight
/// exactly 0, and a row of only −∞ gets all zeros (chapter 4's policy for fully masked rows).
/// \throws ShapeError if scores is empty
/// \throws ValueError if scores holds NaN or +∞
Matrix online_softmax(const Matrix& scores);

/// \brief Which scores take part: all of them, or a causal mask aligned as in chapter 4.
enum class Masking {
  None,               ///< every query sees every key
  CausalTopLeft,      ///< query i sees keys j ≤ i
  CausalBottomRight,  ///< query i sees keys j ≤ i + (n_k − n_q): the last query sees every key
};

/// \brief The result of tiled_attention(): the output and how many tiles were computed.
struct TiledResult {
  Matrix output;             ///< (n_q, d_v)
  Index tiles_computed = 0;  ///< (query block, key block) tiles whose scores were computed
  Index tiles_skipped = 0;   ///< tiles never touched: every score in them is masked
};

/// \brief Exercise 7.6: exact attention, \f$\mathrm{softmax}(\mathrm{mask}(QK^\top/\sqrt{d_k}))V\f$,
/// computed tile by tile (the forward pass of FlashAttention in FlashAttention-2's loop order, query
/// blocks outside; written for a CPU).
///
/// Queries are cut into blocks of block_q rows and keys/values into blocks of block_k rows (the
/// last block of each may be shorter; any block size from 1 up to the largest Index is valid, and a
/// block longer than its sequence is cut to it). For each query block, the key blocks are visited in order;
/// each query keeps a running maximum, a running sum and an output accumulator, rescaled by
/// \f$e^{m - m'}\f$ whenever its maximum grows, and divided by the sum at the end.
///
/// Promises: the output equals the naive attention to 1e-12 (relative to max(1, |entry|));
/// a tile in which every score is masked is skipped, never computed and masked, so
/// tiles_computed + tiles_skipped = ⌈n_q/block_q⌉·⌈n_k/block_k⌉ and tiles_computed counts exactly
/// the tiles holding at least one allowed score; a query that may see no key outputs zeros
/// (chapter 4's policy); no (n_q, n_k) matrix, or any buffer of that order, is ever allocated: the
/// extra memory is O(block_q·block_k + (n_q + n_k)·(d_k + d_v)).
/// \throws ShapeError if an input is empty, q and k differ in columns, v and k differ in rows, or
///         a block size is below 1
/// \throws ValueError if an input holds NaN or infinity
TiledResult tiled_attention(const Matrix& q, const Matrix& k, const Matrix& v, Index block_q,
                               Index block_k, Masking masking = Masking::None);

/// \cond
// Memory use of one call (for the checks' memory proof; not an exercise).
struct HeapUse {
  std::int64_t peak_bytes = 0;       ///< most bytes live at once during the call (the allocation meter's)
  std::int64_t largest_block = 0;    ///< the largest single allocation (the allocation meter's)
  std::int64_t resident_bytes = -1;  ///< when graded, the least memory the worker held at once (-1: not measured)
};

/// \brief Not an exercise: runs tiled_attention() and measures its memory. In the checks' own
/// process it counts every heap allocation (allocation_meter.hpp); when graded, the trusted checks
/// read the worker's memory from the kernel, outside the student's process (chapter 7's
/// remote.def; students write nothing for it).
HeapUse tiled_attention_heap_use(const Matrix& q, const Matrix& k, const Matrix& v, Index block_q,
                                 Index block_k, Masking masking);
/// \endcond

}  // namespace scalebook::ch07

// For grading, the chapter's structs travel between processes field by field
// (scalebook/remote.hpp, included before this header where it is needed).
#ifdef SCALEBOOK_REMOTE_FIELDS
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::StageFlops, scores, softmax, weighted_sum);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::LayerShape, model_width, heads, mlp_width);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::LayerFlops, projections, attention, mlp);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::MemoryUse, naive, tiled);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::SoftmaxState, max, sum);
SCALEBOOK_REMOTE_FIELDS(scalebook::ch07::TiledResult, output, tiles_computed, tiles_skipped);
#endif
