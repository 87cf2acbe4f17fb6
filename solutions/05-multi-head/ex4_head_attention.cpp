// Reference for exercise 5.4 — head_attention.
// Chapter 5: multi-head attention and concatenation.
// Shapes: query (n_q, E), key and value (n_k, E); head h's q, k, v are (n_q or n_k, head_dim).
#include "multi_head.hpp"

#include <cmath>

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
  // Head h's own rows of each projection block: W_q is rows 0..E-1, W_k rows E..2E-1, W_v 2E..3E-1.
  const auto project = [&](const Matrix& x, Projection p) {
    const Index first = static_cast<Index>(p) * e + head * hd;
    return linear(x, params.in_proj_weight.middleRows(first, hd), params.in_proj_bias.segment(first, hd));
  };
  const Matrix q = project(query, Projection::Query);  // (n_q, hd)
  const Matrix k = project(key, Projection::Key);      // (n_k, hd)
  const Matrix v = project(value, Projection::Value);  // (n_k, hd)

  const Matrix scores = matmul_transposed(q, k) / std::sqrt(static_cast<double>(hd));  // sqrt(head_dim), not sqrt(E)
  const BoolMatrix allowed = causal ? causal_mask(q.rows(), k.rows(), *causal)
                                    : BoolMatrix::Constant(q.rows(), k.rows(), true);
  return matmul(masked_softmax(scores, allowed), v);  // (n_q, hd)
}

}  // namespace scalebook::ch05
