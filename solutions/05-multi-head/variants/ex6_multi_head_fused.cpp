// Variant of exercise 5.6 — multi_head_fused scaling the keys, not the scores: the whole projected
// K is multiplied by 1/sqrt(head_dim) once, before it is split, so every head's q (k / s)ᵀ is its
// q kᵀ / s. The same layer; its numbers may differ from the loop form's in the last bits.
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
  const double inverse_scale = 1.0 / std::sqrt(static_cast<double>(hd));  // 1/sqrt(head_dim)

  // Three (E, E) projections, all heads at once; head h is then columns h*hd .. (h+1)*hd - 1.
  const Heads q = split_heads(linear(query, w.topRows(e), b.head(e)), heads);
  const Heads k = split_heads(linear(key, w.middleRows(e, e), b.segment(e, e)) * inverse_scale, heads);
  const Heads v = split_heads(linear(value, w.bottomRows(e), b.tail(e)), heads);
  const BoolMatrix allowed = causal ? causal_mask(query.rows(), key.rows(), *causal)
                                    : BoolMatrix::Constant(query.rows(), key.rows(), true);

  Heads head_outputs;
  for (Index h = 0; h < heads; ++h) {
    const Matrix weights = masked_softmax(matmul_transposed(q[h], k[h]), allowed);  // (n_q, n_k)
    head_outputs.push_back(matmul(weights, v[h]));                                  // (n_q, hd)
  }
  return linear(concat_heads(head_outputs), params.out_proj_weight, params.out_proj_bias);
}

}  // namespace scalebook::ch05
