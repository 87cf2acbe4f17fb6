// Exercise 5.2: head h is a block of E / H columns, copied column by column.
#include "multi_head.hpp"

#include <string>

namespace scalebook::ch05 {

std::vector<Matrix> split_heads(const Matrix& x, Index num_heads) {
  require_nonempty("split_heads", "x", x);
  require_positive("split_heads", "num_heads", num_heads);
  const Index width = x.cols();
  if (width % num_heads) throw ShapeError("split_heads: " + std::to_string(width) + " columns of x " + shape_of(x) + " cannot make " + std::to_string(num_heads) + " equal heads");
  const Index per_head = width / num_heads;
  std::vector<Matrix> out(static_cast<std::size_t>(num_heads), Matrix(x.rows(), per_head));
  for (Index column = 0; column < width; ++column) {
    out[static_cast<std::size_t>(column / per_head)].col(column % per_head) = x.col(column);
  }
  return out;
}

}  // namespace scalebook::ch05
