// Exercise 4.3: scores, the causal mask, the masked softmax, then the weighted values.
#include "causal_masking.hpp"

#include <cmath>

namespace scalebook::ch04 {

Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v, Alignment alignment) {
  require_nonempty("causal_attention", "q", q);
  require_nonempty("causal_attention", "k", k);
  require_nonempty("causal_attention", "v", v);
  require_same_cols("causal_attention", "q", q, "k", k);
  if (k.rows() != v.rows())
    throw ShapeError("causal_attention: k " + shape_of(k) + " and v " + shape_of(v) + " differ in rows");
  require_finite("causal_attention", "q", q);
  require_finite("causal_attention", "k", k);
  require_finite("causal_attention", "v", v);
  Matrix logits(q.rows(), k.rows());
  const double root = std::sqrt(static_cast<double>(k.cols()));
  for (Index i = 0; i < q.rows(); ++i)
    for (Index j = 0; j < k.rows(); ++j) logits(i, j) = q.row(i).dot(k.row(j)) / root;
  const BoolMatrix visible = causal_mask(q.rows(), k.rows(), alignment);
  return matmul(masked_softmax(logits, visible), v);
}

}  // namespace scalebook::ch04
