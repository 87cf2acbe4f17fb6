// Reference for exercise 4.1 — causal_mask.
// Chapter 4: causal masking — the future is not available.
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); masks and weights are (n_q, n_k).
#include "causal_masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalebook::ch04 {

BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment) {
  require_positive("causal_mask", "n_q", n_q);
  require_positive("causal_mask", "n_k", n_k);
  // Bottom-right shifts every query right so that the last query lines up with the last key.
  const Index offset = alignment == Alignment::BottomRight ? n_k - n_q : 0;
  BoolMatrix allowed(n_q, n_k);  // (n_q, n_k)
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) allowed(i, j) = j <= i + offset;
  return allowed;
}

}  // namespace scalebook::ch04
