// Reference for exercise 7.5 — softmax_state and online_softmax.
// Chapter 7: under the hood — what attention costs, and exact tiled attention.
// One pass finds the maximum and the sum together: whenever the maximum grows, the sum gathered
// so far is rescaled to it. −∞ scores (masked) add nothing; a row of only −∞ keeps {−∞, 0}.
#include "under_the_hood.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace scalebook::ch07 {

namespace {

// NaN and +∞ are errors; −∞ is a masked score.
void require_no_nan_or_plus_inf(const char* function, const Eigen::Ref<const Matrix>& m) {
  for (Index j = 0; j < m.cols(); ++j) {
    for (Index i = 0; i < m.rows(); ++i) {
      const double x = m(i, j);
      if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
        std::ostringstream out;
        out << function << ": scores(" << i << ", " << j << ") is " << x
            << " (only finite scores and -inf for masked ones are allowed)";
        throw ValueError(out.str());
      }
    }
  }
}

SoftmaxState state_of(const Eigen::Ref<const RowVector>& row) {
  SoftmaxState state{-std::numeric_limits<double>::infinity(), 0.0};  // nothing seen yet
  for (Index j = 0; j < row.size(); ++j) {
    const double x = row(j);
    if (x == -std::numeric_limits<double>::infinity()) continue;  // a masked score adds exp(−∞) = 0
    const double new_max = std::max(state.max, x);
    // Rescale what was summed relative to the old maximum; exp(−∞) = 0 for the first value.
    state.sum = state.sum * std::exp(state.max - new_max) + std::exp(x - new_max);
    state.max = new_max;
  }
  return state;
}

}  // namespace

SoftmaxState softmax_state(const RowVector& row) {
  if (row.size() == 0) throw ShapeError("softmax_state: row is empty " + shape_of(row));
  require_no_nan_or_plus_inf("softmax_state", row);
  return state_of(row);
}

Matrix online_softmax(const Matrix& scores) {
  require_nonempty("online_softmax", "scores", scores);
  require_no_nan_or_plus_inf("online_softmax", scores);
  Matrix weights(scores.rows(), scores.cols());
  for (Index i = 0; i < scores.rows(); ++i) {
    const SoftmaxState state = state_of(scores.row(i));  // pass 1: maximum and sum together
    if (state.sum == 0.0) {  // only −∞: chapter 4's policy, a row of zeros
      weights.row(i).setZero();
      continue;
    }
    for (Index j = 0; j < scores.cols(); ++j)  // pass 2: the weights; std::exp(−∞) is exactly 0
      weights(i, j) = std::exp(scores(i, j) - state.max) / state.sum;
  }
  return weights;
}

}  // namespace scalebook::ch07
