// Reference for exercise 5.6 — multi_head_fused.
// Chapter 5: multi-head attention and concatenation.
// Three (E, E) projections instead of 3H (head_dim, E) ones; then the heads are column blocks.
// Shapes: query (n_q, E), key and value (n_k, E); Q (n_q, E), K and V (n_k, E); result (n_q, E).
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix multi_head_fused(const Matrix& query, const Matrix& key, const Matrix& value,
                                  const MultiHeadParams& params, Causal causal) {
  require_params("multi_head_fused", params);
  const Index e = params.embed_dim(), hd = params.head_dim(), heads = params.num_heads;
  require_inputs("multi_head_fused", query, key, value, e);
  const Matrix& w = params.in_proj_weight;
  const Vector& b = params.in_proj_bias;

  // One product per projection, all heads at once; head h is then columns h*hd..(h+1)*hd-1.
  const std::vector<Matrix> q = split_heads(linear(query, w.middleRows(0 * e, e), b.segment(0 * e, e)), heads);
  const std::vector<Matrix> k = split_heads(linear(key, w.middleRows(1 * e, e), b.segment(1 * e, e)), heads);
  const std::vector<Matrix> v = split_heads(linear(value, w.middleRows(2 * e, e), b.segment(2 * e, e)), heads);
  const BoolMatrix allowed = causal ? causal_mask(query.rows(), key.rows(), *causal)
                                    : BoolMatrix::Constant(query.rows(), key.rows(), true);

  std::vector<Matrix> head_outputs;
  for (Index h = 0; h < heads; ++h) {
    const Matrix scores = matmul_transposed(q[h], k[h]) / std::sqrt(static_cast<double>(hd));  // not sqrt(E)
    head_outputs.push_back(matmul(masked_softmax(scores, allowed), v[h]));  // (n_q, hd)
  }
  return linear(concat_heads(head_outputs), params.out_proj_weight, params.out_proj_bias);
}

}  // namespace scalebook::ch05
