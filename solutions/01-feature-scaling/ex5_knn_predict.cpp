// Reference for exercise 1.5 — knn_predict.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace scalebook::ch01 {

Vector knn_predict(const Matrix& train_x, const Vector& train_y, const Matrix& test_x, int k) {
  const char* fn = "knn_predict";
  require_nonempty(fn, "train_x", train_x);
  require_nonempty(fn, "test_x", test_x);
  require_same_cols(fn, "train_x", train_x, "test_x", test_x);
  if (train_y.rows() != train_x.rows()) {
    throw ShapeError(std::string(fn) + ": train_y " + shape_of(train_y) + " must have one class per row of train_x " +
                     shape_of(train_x));
  }
  if (k < 1 || k > train_x.rows()) {
    throw ShapeError(std::string(fn) + ": k must be between 1 and the " + std::to_string(train_x.rows()) +
                     " training rows, got " + std::to_string(k));
  }
  require_finite(fn, "train_x", train_x);
  require_finite(fn, "train_y", train_y);
  require_finite(fn, "test_x", test_x);
  for (Index i = 0; i < train_y.rows(); ++i) {
    if (train_y(i) < 0.0 || train_y(i) != std::floor(train_y(i))) {
      throw ValueError(std::string(fn) + ": classes must be whole numbers >= 0, got " + std::to_string(train_y(i)));
    }
  }
  const Index n = train_x.rows();
  Vector predicted(test_x.rows());
  std::vector<double> distance(static_cast<std::size_t>(n));
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index t = 0; t < test_x.rows(); ++t) {
    for (Index i = 0; i < n; ++i) {
      distance[static_cast<std::size_t>(i)] = (train_x.row(i) - test_x.row(t)).squaredNorm();  // Euclidean, squared
    }
    std::iota(order.begin(), order.end(), Index{0});
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {  // ties: lower index first
      return distance[static_cast<std::size_t>(a)] < distance[static_cast<std::size_t>(b)];
    });
    // The neighbours' classes, sorted, counted run by run: a class may be any whole number (1e12
    // too), so the votes are kept per neighbour, never in a table indexed by the class.
    std::vector<double> classes(static_cast<std::size_t>(k));
    for (int j = 0; j < k; ++j) classes[static_cast<std::size_t>(j)] = train_y(order[static_cast<std::size_t>(j)]);
    std::sort(classes.begin(), classes.end());
    double best = classes[0];
    std::size_t best_votes = 0;
    for (std::size_t j = 0; j < classes.size();) {
      std::size_t end = j;
      while (end < classes.size() && classes[end] == classes[j]) ++end;
      if (end - j > best_votes) {  // strictly more: on a tie, the smaller class (seen first) stays
        best = classes[j];
        best_votes = end - j;
      }
      j = end;
    }
    predicted(t) = best;
  }
  return predicted;
}

}  // namespace scalebook::ch01
