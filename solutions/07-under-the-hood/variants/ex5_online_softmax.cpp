// Variant of exercise 7.5 — online softmax with the update split in two cases (a new maximum
// rescales l to it and adds e^0 = 1; any other x adds e^(x − m)), the same l' = l e^(m − m') +
// e^(x − m'), and weights e^(x − m) · (1 / l): one division per row, the last bit may differ.
#include "under_the_hood.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace scalebook::ch07 {

namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

// Scores may be finite or −∞ (masked); NaN and +∞ are errors, reported at the first one by rows.
void require_scores(const char* function, const Matrix& scores) {
  for (Index i = 0; i < scores.rows(); ++i) {
    for (Index j = 0; j < scores.cols(); ++j) {
      const double x = scores(i, j);
      if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
        std::ostringstream out;
        out << function << ": scores(" << i << ", " << j << ") is " << x
            << " (only finite scores and -inf for masked ones are allowed)";
        throw ValueError(out.str());
      }
    }
  }
}

SoftmaxState state_of_row(const Matrix& scores, Index i) {
  SoftmaxState state;  // m = −∞, l = 0: nothing seen yet
  for (Index j = 0; j < scores.cols(); ++j) {
    const double x = scores(i, j);
    if (x == kMinusInf) continue;  // masked: adds e^(−∞) = 0
    if (x > state.max) {
      state.sum = state.sum * std::exp(state.max - x) + 1.0;  // e^(−∞) = 0 for the first value
      state.max = x;
    } else {
      state.sum += std::exp(x - state.max);
    }
  }
  return state;
}

}  // namespace

SoftmaxState softmax_state(const RowVector& row) {
  if (row.size() == 0) throw ShapeError("softmax_state: row is empty " + shape_of(row));
  const Matrix scores = row;  // (1, n)
  require_scores("softmax_state", scores);
  return state_of_row(scores, 0);
}

Matrix online_softmax(const Matrix& scores) {
  require_nonempty("online_softmax", "scores", scores);
  require_scores("online_softmax", scores);
  Matrix weights = Matrix::Zero(scores.rows(), scores.cols());  // a row of only −∞ stays zeros
  for (Index i = 0; i < scores.rows(); ++i) {
    const SoftmaxState state = state_of_row(scores, i);
    if (state.sum == 0.0) continue;
    const double inverse_sum = 1.0 / state.sum;
    for (Index j = 0; j < scores.cols(); ++j) {
      if (scores(i, j) == kMinusInf) continue;  // masked: exactly 0
      weights(i, j) = std::exp(scores(i, j) - state.max) * inverse_sum;
    }
  }
  return weights;
}

}  // namespace scalebook::ch07
