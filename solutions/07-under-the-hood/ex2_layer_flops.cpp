// Reference for exercise 7.2 — layer_flops.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// A layer on n tokens of width d = d_model: Q, K, V, output projections (n, d)·(d, d); attention
// per head with d_k = d_v = d / n_heads; the MLP (n, d)·(d, d_ff) then (n, d_ff)·(d_ff, d).
#include "under_the_hood.hpp"

#include <string>

namespace scalebook::ch07 {

LayerFlops layer_flops(Index n, const LayerShape& shape) {
  require_positive("layer_flops", "n", n);
  require_positive("layer_flops", "d_model", shape.model_width);
  require_positive("layer_flops", "n_heads", shape.heads);
  require_positive("layer_flops", "d_ff", shape.mlp_width);
  if (shape.model_width % shape.heads != 0) {
    throw ShapeError("layer_flops: d_model " + std::to_string(shape.model_width) +
                     " is not a multiple of n_heads " + std::to_string(shape.heads));
  }
  const Count d = shape.model_width, d_head = shape.model_width / shape.heads;
  LayerFlops flops;
  flops.projections = 4 * (2 * Count{n} * d * d);              // Q, K, V and the output projection
  const Count per_head = 2 * Count{n} * n * d_head             // scores
                         + 5 * Count{n} * n                    // softmax
                         + 2 * Count{n} * n * d_head;          // weights times V
  flops.attention = shape.heads * per_head;
  flops.mlp = 2 * (2 * Count{n} * d * shape.mlp_width);             // up to d_ff and back down
  return flops;
}

}  // namespace scalebook::ch07
