// causal_attention, one query at a time: its visible keys' weights, then their values.
#include "causal_masking.hpp"

#include <cmath>

namespace scalebook::ch04 {

Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v, Alignment alignment) {
  for (const auto& [name, m] : {std::pair{"q", &q}, std::pair{"k", &k}, std::pair{"v", &v}})
    require_nonempty("causal_attention", name, *m);
  require_same_cols("causal_attention", "q", q, "k", k);
  require_shape("causal_attention", "v", v, k.rows(), v.cols());
  for (const auto& [name, m] : {std::pair{"q", &q}, std::pair{"k", &k}, std::pair{"v", &v}})
    require_finite("causal_attention", name, *m);
  const BoolMatrix mask = causal_mask(q.rows(), k.rows(), alignment);
  const Matrix scores = matmul_transposed(q, k) * (1.0 / std::sqrt(double(q.cols())));
  const Matrix weights = masked_softmax(scores, mask);
  Matrix out(q.rows(), v.cols());
  for (Index i = 0; i < q.rows(); ++i) out.row(i) = weights.row(i) * v;
  return out;
}

}  // namespace scalebook::ch04
