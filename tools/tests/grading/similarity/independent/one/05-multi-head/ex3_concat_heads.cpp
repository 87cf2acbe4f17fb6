// Exercise 5.3: the heads side by side, each checked against the first.
#include "multi_head.hpp"

#include <string>

namespace scalebook::ch05 {

Matrix concat_heads(const std::vector<Matrix>& heads) {
  if (heads.size() == 0) throw ShapeError("concat_heads: heads is empty");
  const Matrix& first = heads[0];
  Index column = 0;
  Matrix joined(first.rows(), first.cols() * static_cast<Index>(heads.size()));
  for (const Matrix& head : heads) {
    require_nonempty("concat_heads", "a head", head);
    require_shape("concat_heads", "a head", head, first.rows(), first.cols());
    joined.block(0, column, head.rows(), head.cols()) = head;
    column += head.cols();
  }
  return joined;
}

}  // namespace scalebook::ch05
