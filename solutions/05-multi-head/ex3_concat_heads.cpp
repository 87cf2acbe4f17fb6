// Reference for exercise 5.3 — concat_heads.
// Chapter 5: multi-head attention and concatenation.
// Shapes: each head is (n, head_dim); the result is (n, H * head_dim).
#include "multi_head.hpp"

namespace scalebook::ch05 {

Matrix concat_heads(const std::vector<Matrix>& heads) {
  if (heads.empty()) throw ShapeError("concat_heads: no heads to concatenate");
  const Index n = heads.front().rows(), head_dim = heads.front().cols();
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const std::string name = "heads[" + std::to_string(h) + "]";
    require_nonempty("concat_heads", name, heads[h]);
    require_shape("concat_heads", name, heads[h], n, head_dim);
  }
  const Index count = static_cast<Index>(heads.size());
  Matrix out(n, count * head_dim);
  for (Index h = 0; h < count; ++h) {
    out.middleCols(h * head_dim, head_dim) = heads[static_cast<std::size_t>(h)];  // in head order
  }
  return out;
}

}  // namespace scalebook::ch05
