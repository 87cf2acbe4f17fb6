// Variant of exercise 1.5 — knn_predict with an explicit distance loop, std::partial_sort on
// (distance, index) pairs (the index breaks ties, as the contract's order does) and a std::map of
// votes read in increasing class order, where the reference uses std::stable_sort and sorted runs.
#include "feature_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scalebook::ch01 {

Vector knn_predict(const Matrix& train_x, const Vector& train_y, const Matrix& test_x, int k) {
  const std::string fn = "knn_predict";
  require_nonempty(fn, "train_x", train_x);
  require_nonempty(fn, "test_x", test_x);
  require_same_cols(fn, "train_x", train_x, "test_x", test_x);
  if (train_y.rows() != train_x.rows()) {
    throw ShapeError(fn + ": train_y " + shape_of(train_y) + " must hold one class per row of train_x " +
                     shape_of(train_x));
  }
  if (k < 1 || k > train_x.rows()) {
    throw ShapeError(fn + ": k = " + std::to_string(k) + " is not between 1 and the " +
                     std::to_string(train_x.rows()) + " training rows");
  }
  require_finite(fn, "train_x", train_x);
  require_finite(fn, "train_y", train_y);
  require_finite(fn, "test_x", test_x);
  for (Index i = 0; i < train_y.rows(); ++i) {
    const double c = train_y(i);
    if (!(c >= 0.0) || std::trunc(c) != c) {
      throw ValueError(fn + ": train_y(" + std::to_string(i) + ") = " + std::to_string(c) +
                       " is not a class (a whole number 0 or above)");
    }
  }
  const Index n = train_x.rows(), d = train_x.cols();
  const auto nearest = static_cast<std::ptrdiff_t>(k);
  std::vector<std::pair<double, Index>> neighbours(static_cast<std::size_t>(n));  // (squared distance, row)
  Vector predicted(test_x.rows());
  for (Index t = 0; t < test_x.rows(); ++t) {
    for (Index i = 0; i < n; ++i) {
      double squared = 0.0;
      for (Index c = 0; c < d; ++c) {
        const double difference = train_x(i, c) - test_x(t, c);
        squared += difference * difference;
      }
      neighbours[static_cast<std::size_t>(i)] = {squared, i};
    }
    // Pairs compare by distance, then by row: equal distances keep the lower row first.
    std::partial_sort(neighbours.begin(), neighbours.begin() + nearest, neighbours.end());
    std::map<double, int> votes;  // class -> votes, iterated from the smallest class up
    for (std::ptrdiff_t j = 0; j < nearest; ++j) ++votes[train_y(neighbours[static_cast<std::size_t>(j)].second)];
    auto best = votes.begin();
    for (auto it = votes.begin(); it != votes.end(); ++it) {
      if (it->second > best->second) best = it;  // strictly more: a tie keeps the smaller class
    }
    predicted(t) = best->first;
  }
  return predicted;
}

}  // namespace scalebook::ch01
