// Exercise 4.1: a key is visible when it is not after the query's position.
#include "causal_masking.hpp"

namespace scalebook::ch04 {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  require_positive("causal_mask", "n_q", n_q);
  require_positive("causal_mask", "n_k", n_k);
  BoolMatrix mask(n_q, n_k);
  for (Index row = 0; row < n_q; ++row) {
    const Index position = alignment == Alignment::TopLeft ? row : row + (n_k - n_q);
    for (Index col = 0; col < n_k; ++col) mask(row, col) = col <= position;
  }
  return mask;
}

}  // namespace scalebook::ch04
