// Variant of exercise 5.4 — head_attention that multiplies the scores by 1/sqrt(head_dim) and, with
// no mask, takes the plain row softmax (lib's chapter 3 softmax_rows) instead of a softmax under an
// all-true mask: every key allowed, so the same weights, and the same head output up to rounding.
#include "multi_head.hpp"

#include <cmath>

#include "scalebook/softmax.hpp"  // softmax_rows: lib's copy of chapter 3

namespace scalebook::ch05 {

Matrix head_attention(const Matrix& query, const Matrix& key, const Matrix& value,
                      const MultiHeadParams& params, Index head, Causal causal) {
  require_params("head_attention", params);
  const Index e = params.embed_dim(), hd = params.head_dim();
  require_inputs("head_attention", query, key, value, e);
  if (head < 0 || head >= params.num_heads) {
    throw ShapeError("head_attention: head " + std::to_string(head) + " is not one of 0.." +
                     std::to_string(params.num_heads - 1));
  }
  const Matrix& w = params.in_proj_weight;
  const Vector& b = params.in_proj_bias;
  const Index rows = head * hd;  // head h's rows within each block of E rows: W_q, then W_k, W_v
  const Matrix q = linear(query, w.middleRows(rows, hd), b.segment(rows, hd));             // (n_q, hd)
  const Matrix k = linear(key, w.middleRows(e + rows, hd), b.segment(e + rows, hd));       // (n_k, hd)
  const Matrix v = linear(value, w.middleRows(2 * e + rows, hd), b.segment(2 * e + rows, hd));

  const Matrix scores = matmul_transposed(q, k) * (1.0 / std::sqrt(static_cast<double>(hd)));
  const Matrix weights = causal ? masked_softmax(scores, causal_mask(q.rows(), k.rows(), *causal))
                                : softmax_rows(scores);  // no mask: every key takes part
  return matmul(weights, v);  // (n_q, hd)
}

}  // namespace scalebook::ch05
