// Reference for exercise 7.1 — attention_flops.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// Shapes: q is (n_q, d_k), k is (n_k, d_k), v is (n_k, d_v); scores and weights are (n_q, n_k).
#include "under_the_hood.hpp"

namespace scalebook::ch07 {

StageFlops attention_flops(Index n_q, Index n_k, Index d_k, Index d_v) {
  require_positive("attention_flops", "n_q", n_q);
  require_positive("attention_flops", "n_k", n_k);
  require_positive("attention_flops", "d_k", d_k);
  require_positive("attention_flops", "d_v", d_v);
  const Count pairs = Count{n_q} * n_k;  // one score per (query, key) pair
  StageFlops flops;
  flops.scores = 2 * pairs * d_k;        // a dot product of length d_k: d_k multiply-adds, 2 FLOPs each
  flops.softmax = 5 * pairs;             // scale, subtract max, exp, add to sum, divide
  flops.weighted_sum = 2 * pairs * d_v;  // each weight times a value row of length d_v
  return flops;
}

}  // namespace scalebook::ch07
