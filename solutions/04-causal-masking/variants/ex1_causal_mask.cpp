// Variant of exercise 4.1 — causal_mask built row by row: query i sees a prefix of the keys, the
// first clamp(i + shift + 1, 0, n_k), set by one block assignment per row instead of a test per
// entry. Entry (i, j) is true exactly when j <= i + shift, as the contract says: the same mask.
#include "causal_masking.hpp"

#include <algorithm>

namespace scalebook::ch04 {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  require_positive("causal_mask", "n_q", n_q);
  require_positive("causal_mask", "n_k", n_k);
  // Query i is sequence position i + shift: bottom-right lines the last query up with the last key.
  const Index shift = alignment == Alignment::BottomRight ? n_k - n_q : 0;
  BoolMatrix allowed = BoolMatrix::Constant(n_q, n_k, false);  // (n_q, n_k), the future masked
  for (Index i = 0; i < n_q; ++i) {
    const Index visible = std::clamp<Index>(i + shift + 1, 0, n_k);  // keys 0 .. i + shift
    allowed.row(i).head(visible).setConstant(true);
  }
  return allowed;
}

}  // namespace scalebook::ch04
