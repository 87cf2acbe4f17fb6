// causal_mask: start all false, then open each row up to the last key it may see.
#include "causal_masking.hpp"

#include <algorithm>

namespace scalebook::ch04 {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  if (n_q < 1 || n_k < 1) {
    require_positive("causal_mask", "n_q", n_q);
    require_positive("causal_mask", "n_k", n_k);
  }
  BoolMatrix m = BoolMatrix::Constant(n_q, n_k, false);
  const Index lag = alignment == Alignment::BottomRight ? n_q - n_k : 0;
  Index q = 0;
  while (q < n_q) {
    Index last = std::min(q - lag, n_k - 1);  // the last visible key, -1 or less: none
    for (Index key = 0; key <= last; ++key) m(q, key) = true;
    ++q;
  }
  return m;
}

}  // namespace scalebook::ch04
