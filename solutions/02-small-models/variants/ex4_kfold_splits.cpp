// Variant of exercise 2.4 — kfold_splits builds each fold from ranges: the validation block
// [f s, (f + 1) s) with std::iota, the training rows as the rows before it, then the rows after it;
// the same folds as the reference's row-by-row test, in increasing order.
#include "small_models.hpp"

#include <numeric>
#include <string>

namespace scalebook::ch02 {

Folds kfold_splits(Index n, int k) {
  if (k < 2 || k > n) {
    throw ShapeError("kfold_splits: k must be between 2 and n, got k = " + std::to_string(k) + " for n = " +
                     std::to_string(n));
  }
  const Index size = n / k;  // floor(n / k)
  Folds folds;
  folds.reserve(static_cast<std::size_t>(k));
  for (Index first = 0; first < k * size; first += size) {
    Fold fold;
    fold.validation.resize(static_cast<std::size_t>(size));
    std::iota(fold.validation.begin(), fold.validation.end(), first);
    fold.train.reserve(static_cast<std::size_t>(n - size));
    for (Index i = 0; i < first; ++i) fold.train.push_back(i);
    for (Index i = first + size; i < n; ++i) fold.train.push_back(i);  // the remainder trains too
    folds.push_back(std::move(fold));
  }
  return folds;
}

}  // namespace scalebook::ch02
