// masked_softmax: -infinity where masked, Eigen's row maxima, and a guard for rows with nothing allowed.
#include "causal_masking.hpp"

#include <limits>

namespace scalebook::ch04 {

Matrix masked_softmax(const Matrix& scores, const BoolMatrix& allowed) {
  require_nonempty("masked_softmax", "scores", scores);
  require_shape("masked_softmax", "allowed", allowed.cast<double>(), scores.rows(), scores.cols());
  require_finite("masked_softmax", "scores", scores);
  const double none = -std::numeric_limits<double>::infinity();
  const Matrix masked = allowed.select(scores, Matrix::Constant(scores.rows(), scores.cols(), none));
  Matrix out = Matrix::Zero(scores.rows(), scores.cols());
  for (Index r = 0; r < masked.rows(); ++r) {
    const double best = masked.row(r).maxCoeff();
    if (best == none) continue;  // no key allowed: the row stays zero
    const RowVector e = (masked.row(r).array() - best).exp().matrix();
    out.row(r) = e / e.sum();
  }
  return out;
}

}  // namespace scalebook::ch04
