// Variant of exercise 5.5 — multi_head_loop dividing each head's projected queries by
// sqrt(head_dim) before the product q kᵀ instead of dividing the scores after it: (q / s) kᵀ equals
// (q kᵀ) / s, so the same layer; the scores, and the output, may differ in the last bits.
#include "multi_head.hpp"

#include <cmath>

namespace scalebook::ch05 {

Matrix multi_head_loop(const Matrix& query, const Matrix& key, const Matrix& value,
                       const MultiHeadParams& params, Causal causal) {
  require_params("multi_head_loop", params);
  const Index e = params.embed_dim(), hd = params.head_dim();
  require_inputs("multi_head_loop", query, key, value, e);
  const Matrix& w = params.in_proj_weight;
  const Vector& b = params.in_proj_bias;
  const double scale = std::sqrt(static_cast<double>(hd));  // sqrt(head_dim), not sqrt(E)
  const BoolMatrix allowed = causal ? causal_mask(query.rows(), key.rows(), *causal)
                                    : BoolMatrix::Constant(query.rows(), key.rows(), true);

  Heads head_outputs;
  for (Index h = 0; h < params.num_heads; ++h) {
    // Head h's own projections of the layer's inputs; its queries divided by sqrt(head_dim).
    const Matrix q = linear(query, w.middleRows(h * hd, hd), b.segment(h * hd, hd)) / scale;
    const Matrix k = linear(key, w.middleRows(e + h * hd, hd), b.segment(e + h * hd, hd));
    const Matrix v = linear(value, w.middleRows(2 * e + h * hd, hd), b.segment(2 * e + h * hd, hd));
    head_outputs.push_back(matmul(masked_softmax(matmul_transposed(q, k), allowed), v));
  }
  return linear(concat_heads(head_outputs), params.out_proj_weight, params.out_proj_bias);
}

}  // namespace scalebook::ch05
