// Reference for exercise 5.5 — multi_head_loop.
// Chapter 5: multi-head attention and concatenation.
// The book's listing (DLwP 15.3.1), fixed: each head projects the layer's own inputs with its own
// weights, its scores compare the projected query and key, and it mixes its projected values.
// Shapes: query (n_q, E), key and value (n_k, E); each head output (n_q, head_dim); result (n_q, E).
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
  const BoolMatrix allowed = causal ? causal_mask(query.rows(), key.rows(), *causal)
                                    : BoolMatrix::Constant(query.rows(), key.rows(), true);

  std::vector<Matrix> head_outputs;
  for (Index h = 0; h < params.num_heads; ++h) {
    // Head h's own projections of the layer's inputs (the listing reassigned query, key, value).
    const Matrix q = linear(query, w.middleRows(0 * e + h * hd, hd), b.segment(0 * e + h * hd, hd));
    const Matrix k = linear(key, w.middleRows(1 * e + h * hd, hd), b.segment(1 * e + h * hd, hd));
    const Matrix v = linear(value, w.middleRows(2 * e + h * hd, hd), b.segment(2 * e + h * hd, hd));
    // Scores of the projected query and key (the listing used target and source).
    const Matrix scores = matmul_transposed(q, k) / std::sqrt(static_cast<double>(hd));
    const Matrix weights = masked_softmax(scores, allowed);
    head_outputs.push_back(matmul(weights, v));  // the projected values (the listing used source)
  }
  return linear(concat_heads(head_outputs), params.out_proj_weight, params.out_proj_bias);
}

}  // namespace scalebook::ch05
