// Reference for exercise 5.2 — split_heads.
// Chapter 5: multi-head attention and concatenation.
// Shapes: x is (n, E); each head is (n, E / H).
#include "multi_head.hpp"

namespace scalebook::ch05 {

std::vector<Matrix> split_heads(const Matrix& x, Index num_heads) {
  require_nonempty("split_heads", "x", x);
  require_positive("split_heads", "num_heads", num_heads);
  if (x.cols() % num_heads != 0) {
    throw ShapeError("split_heads: E = " + std::to_string(x.cols()) + " columns of x " + shape_of(x) +
                     " do not split into " + std::to_string(num_heads) + " heads of equal width");
  }
  const Index head_dim = x.cols() / num_heads;
  std::vector<Matrix> heads;
  for (Index h = 0; h < num_heads; ++h) {
    heads.push_back(x.middleCols(h * head_dim, head_dim));  // head h: a contiguous block of columns
  }
  return heads;
}

}  // namespace scalebook::ch05
