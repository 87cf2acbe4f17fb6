// Chapter 5 contract — multi-head attention and concatenation.
// Students implement these in exercises/05-multi-head/ex1_linear.cpp to ex6_multi_head_fused.cpp,
// one file per exercise (the instructor's copy of the workbook holds a reference implementation).
//
// Layout: the one of PyTorch's nn.MultiheadAttention, so that every number can be checked against
// PyTorch (the checks do, with fixtures written by tools/maintainer/fixtures/ch05_torch_fixtures.py).
//   E = embed_dim, H = num_heads, head_dim = E / H.
//   query (n_q, E); key and value (n_k, E): one token per row.
//   in_proj_weight (3E, E): rows 0..E-1 are W_q, rows E..2E-1 W_k, rows 2E..3E-1 W_v; in_proj_bias
//   (3E) likewise. A projection is y = x Wᵀ + b (one output feature per ROW of W).
//   Head h owns features h·head_dim .. (h+1)·head_dim − 1 of each projection: rows
//   h·head_dim .. of W_q (and of W_k, W_v), columns h·head_dim .. of the projected Q, K, V, and
//   columns h·head_dim .. of the concatenation of the head outputs.
//   out_proj_weight (E, E), out_proj_bias (E): output = concat(heads) W_outᵀ + b_out.
//
// Rules every function follows (the checks rely on them):
//   - Bad input throws scalebook::ShapeError (empty inputs, shapes or widths that do not fit, E not
//     divisible by H, a head index out of range) or scalebook::ValueError (NaN or ±inf in an input or
//     a parameter), and every message starts with the function's name and ": ", e.g.
//     "split_heads: E = 12 columns do not split into 5 heads". The helpers require_params and
//     require_inputs below do that for the parameters and the three inputs.
//   - Nothing aborts; nothing returns garbage on bad input.
//   - Masks are chapter 4's: a query that may see no key (bottom-right alignment, n_q > n_k) gets
//     all-zero weights, so its head outputs are zero (PyTorch gives NaN there).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalebook/alignment.hpp"
#include "scalebook/core.hpp"
#include "scalebook/linalg.hpp"   // matmul, matmul_transposed: products compiled once
#include "scalebook/masking.hpp"  // causal_mask, masked_softmax: lib's copies of chapter 4

/// \file
/// \brief Chapter 5's exercise contract: projections, heads, concatenation, multi-head attention.

/// \brief Chapter 5's exercises: the functions and types of multi_head.hpp.
namespace scalebook::ch05 {

/// \brief Where query i sits among the keys when n_q and n_k differ (chapter 4).
using scalebook::Alignment;

/// \brief No mask (`std::nullopt`, every query sees every key) or a causal mask with the given
/// alignment (chapter 4's `causal_mask`).
using Causal = std::optional<Alignment>;

/// \brief The parameters of one multi-head attention layer, laid out as PyTorch's
/// `nn.MultiheadAttention` (`in_proj_weight`, `in_proj_bias`, `out_proj.weight`, `out_proj.bias`).
struct MultiHeadParams {
  Index num_heads = 1;     ///< H; must divide E
  Matrix in_proj_weight;   ///< (3E, E): W_q, W_k, W_v stacked by rows, in that order
  Vector in_proj_bias;     ///< (3E): b_q, b_k, b_v
  Matrix out_proj_weight;  ///< (E, E)
  Vector out_proj_bias;    ///< (E)

  /// E, the model width (the out-projection's number of rows).
  Index embed_dim() const { return out_proj_weight.rows(); }
  /// E / H, the width of one head (0 if num_heads is not positive).
  Index head_dim() const { return num_heads > 0 ? embed_dim() / num_heads : 0; }
};

/// \brief A list of head matrices, head 0 first (what split_heads returns, concat_heads takes).
using Heads = std::vector<Matrix>;

/// \brief Which of the three packed in-projections: block p of `in_proj_weight` is rows
/// p·E .. (p+1)·E − 1.
enum class Projection : int {
  Query = 0,  ///< W_q: rows 0 .. E − 1 of in_proj_weight
  Key = 1,    ///< W_k: rows E .. 2E − 1
  Value = 2,  ///< W_v: rows 2E .. 3E − 1
};

/// \brief Given (not an exercise): throws unless params describe a layer. ShapeError if H < 1,
/// E < 1, E not divisible by H or a parameter has the wrong shape; ValueError if a parameter holds
/// NaN or infinity. Messages start with `function`.
inline void require_params(std::string_view function, const MultiHeadParams& params) {
  const std::string f(function);
  const Index e = params.embed_dim(), h = params.num_heads;
  require_positive(function, "num_heads", h);
  require_positive(function, "E (out_proj_weight's rows)", e);
  if (e % h != 0) {
    throw ShapeError(f + ": E = " + std::to_string(e) + " is not divisible by num_heads = " +
                     std::to_string(h) + " (every head must get E / H features)");
  }
  require_shape(function, "out_proj_weight", params.out_proj_weight, e, e);
  require_shape(function, "in_proj_weight", params.in_proj_weight, 3 * e, e);
  require_shape(function, "in_proj_bias", params.in_proj_bias, 3 * e, 1);
  require_shape(function, "out_proj_bias", params.out_proj_bias, e, 1);
  require_finite(function, "in_proj_weight", params.in_proj_weight);
  require_finite(function, "in_proj_bias", params.in_proj_bias);
  require_finite(function, "out_proj_weight", params.out_proj_weight);
  require_finite(function, "out_proj_bias", params.out_proj_bias);
}

/// \brief Given (not an exercise): throws unless query (n_q, e), key (n_k, e) and value (n_k, e)
/// fit a layer of width e: ShapeError for an empty input, another width or key and value of
/// different lengths; ValueError for NaN or infinity. Messages start with `function`.
inline void require_inputs(std::string_view function, const Matrix& query,
                                     const Matrix& key, const Matrix& value, Index e) {
  require_nonempty(function, "query", query);
  require_nonempty(function, "key", key);
  require_nonempty(function, "value", value);
  require_shape(function, "query", query, query.rows(), e);
  require_shape(function, "key", key, key.rows(), e);
  require_shape(function, "value", value, key.rows(), e);
  require_finite(function, "query", query);
  require_finite(function, "key", key);
  require_finite(function, "value", value);
}

/// \brief Exercise 5.1: a linear layer in PyTorch's layout, \f$y = x W^\top + b\f$.
/// \param x (n, in) inputs, one per row
/// \param weight (out, in): one output feature per row (PyTorch's `Linear.weight`)
/// \param bias (out)
/// \return (n, out); row i is \f$W x_i + b\f$
/// \throws ShapeError if x or weight is empty, x.cols() != weight.cols() or bias.size() != weight.rows()
/// \throws ValueError if any input holds NaN or infinity
Matrix linear(const Matrix& x, const Matrix& weight, const Vector& bias);

/// \brief Exercise 5.2: split the columns of x into num_heads heads, in head order.
/// \param x (n, E), e.g. a projected Q
/// \param num_heads H, which must divide E
/// \return H matrices (n, E / H); head h holds columns h·(E/H) .. (h+1)·(E/H) − 1 of x, unchanged
///         (values are moved, not inspected: NaN passes through)
/// \throws ShapeError if x is empty (n × 0 or 0 × E), num_heads < 1 or E is not divisible by H
Heads split_heads(const Matrix& x, Index num_heads);

/// \brief Exercise 5.3: concatenate head outputs side by side, in head order (split_heads undone).
/// \param heads H ≥ 1 matrices, all (n, head_dim)
/// \return (n, H·head_dim); columns h·head_dim .. (h+1)·head_dim − 1 are heads[h]
/// \throws ShapeError if heads is empty, a head is empty, or the heads differ in shape
Matrix concat_heads(const Heads& heads);

/// \brief Exercise 5.4: one head's scaled dot-product attention with its own projections.
///
/// With hd = head_dim and rows r = h·hd .. (h+1)·hd − 1 of each projection block:
/// \f$q = \text{query}\,W_{q,r}^\top + b_{q,r}\f$ (and k, v likewise from key and value),
/// \f$\text{out} = \mathrm{softmax}(\mathrm{mask}(q k^\top / \sqrt{hd}))\, v\f$ — scaled by
/// \f$\sqrt{\text{head\_dim}}\f$, the width of the vectors compared, not by \f$\sqrt{E}\f$.
/// \param query,key,value (n_q, E), (n_k, E), (n_k, E)
/// \param params the layer (see MultiHeadParams)
/// \param head h, 0 ≤ h < H
/// \param causal no mask, or a causal mask with this alignment (chapter 4)
/// \return (n_q, head_dim)
/// \throws ShapeError for bad params or inputs (see require_params, require_inputs) or
///         a head outside 0 .. H − 1
/// \throws ValueError if an input or a parameter holds NaN or infinity
Matrix head_attention(const Matrix& query, const Matrix& key, const Matrix& value,
                      const MultiHeadParams& params, Index head, Causal causal = std::nullopt);

/// \brief Exercise 5.5: the whole layer in the loop form of the book's listing, fixed: for each
/// head, its own projections of the layer's inputs (never of another head's output) and its
/// attention; the head outputs concatenated in head order; the output projection.
/// \return (n_q, E) = concat_heads(head 0, ..., head H−1) W_outᵀ + b_out
/// \throws ShapeError, ValueError as head_attention (apart from the head index)
Matrix multi_head_loop(const Matrix& query, const Matrix& key, const Matrix& value,
                                 const MultiHeadParams& params, Causal causal = std::nullopt);

/// \brief Exercise 5.6: the same layer in fused form: one (E, E) projection each for Q, K and V
/// (three products instead of 3H), then split_heads, attention per head, concat_heads, output
/// projection. Equal to the loop form up to rounding (the checks allow 1e-12).
/// \return (n_q, E)
/// \throws ShapeError, ValueError as multi_head_loop
Matrix multi_head_fused(const Matrix& query, const Matrix& key, const Matrix& value,
                                  const MultiHeadParams& params, Causal causal = std::nullopt);

}  // namespace scalebook::ch05

// For grading (scalebook/remote.hpp, included first by the generated remote_*.cpp): how the
// parameters and the optional mask travel to the worker process and back.
#ifdef SCALEBOOK_REMOTE_FIELDS
template <class T>
struct scalebook::remote::Codec<std::optional<T>, void> {
  static void put(Writer& out, const std::optional<T>& value) {
    out.raw<std::uint8_t>(value ? 1 : 0);
    if (value) Codec<T>::put(out, *value);
  }
  static std::optional<T> get(Reader& in) {
    const auto present = in.raw<std::uint8_t>();
    if (present > 1) throw CallFailed("an optional value in the reply is neither present nor absent");
    if (present == 0) return std::nullopt;
    return Codec<T>::get(in);
  }
};
SCALEBOOK_REMOTE_FIELDS(scalebook::ch05::MultiHeadParams, num_heads, in_proj_weight, in_proj_bias,
                        out_proj_weight, out_proj_bias);
#endif
