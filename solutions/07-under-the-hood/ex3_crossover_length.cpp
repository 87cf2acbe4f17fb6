// Reference for exercise 7.3 — crossover_length.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// attention(n) = n²·(4·d_model + 5·n_heads) and projections(n) + mlp(n) = n·(8·d_model² +
// 4·d_model·d_ff): attention reaches them when n·(4d + 5h) >= 8d² + 4d·d_ff.
#include "under_the_hood.hpp"

#include <string>

namespace scalebook::ch07 {

Index crossover_length(const LayerShape& shape) {
  require_positive("crossover_length", "d_model", shape.model_width);
  require_positive("crossover_length", "n_heads", shape.heads);
  require_positive("crossover_length", "d_ff", shape.mlp_width);
  if (shape.model_width % shape.heads != 0) {
    throw ShapeError("crossover_length: d_model " + std::to_string(shape.model_width) +
                     " is not a multiple of n_heads " + std::to_string(shape.heads));
  }
  const Count d = shape.model_width;
  const Count per_token_linear = 8 * d * d + 4 * d * shape.mlp_width;  // linear(n) = n · this
  const Count per_pair_attention = 4 * d + 5 * shape.heads;     // attention(n) = n² · this
  // The smallest integer n with n · per_pair_attention >= per_token_linear: a ceiling division.
  return static_cast<Index>((per_token_linear + per_pair_attention - 1) / per_pair_attention);
}

}  // namespace scalebook::ch07
