// Exercise 3.3: each row's exponentials after its largest entry is taken off, over their sum.
#include "attention_scaling.hpp"

#include <cmath>

namespace scalebook::ch03 {

Matrix softmax_rows(const Matrix& scores) {
  require_nonempty("softmax_rows", "scores", scores);
  require_finite("softmax_rows", "scores", scores);
  Matrix out = scores;
  for (Index r = 0; r < out.rows(); ++r) {
    double top = out(r, 0);
    for (Index c = 1; c < out.cols(); ++c)
      if (out(r, c) > top) top = out(r, c);
    double total = 0.0;
    for (Index c = 0; c < out.cols(); ++c) {
      out(r, c) = std::exp(out(r, c) - top);
      total += out(r, c);
    }
    for (Index c = 0; c < out.cols(); ++c) out(r, c) /= total;
  }
  return out;
}

}  // namespace scalebook::ch03
