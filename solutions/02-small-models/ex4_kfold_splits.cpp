// Reference for exercise 2.4 — kfold_splits.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

Folds kfold_splits(Index n, int k) {
  if (k < 2) throw ShapeError("kfold_splits: k must be at least 2, got " + std::to_string(k));
  if (k > n) {
    throw ShapeError("kfold_splits: k = " + std::to_string(k) + " folds need at least k rows, got n = " +
                     std::to_string(n));
  }
  const Index size = n / k;  // floor(n / k) rows validate in each fold
  Folds folds(static_cast<std::size_t>(k));
  for (int f = 0; f < k; ++f) {
    Fold& fold = folds[static_cast<std::size_t>(f)];
    for (Index i = 0; i < n; ++i) {
      if (i >= f * size && i < (f + 1) * size) fold.validation.push_back(i);
      else fold.train.push_back(i);  // including the last n - k s rows, in every fold
    }
  }
  return folds;
}

}  // namespace scalebook::ch02
