// Reference for exercise 1.3 — scale_train_test.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

namespace scalebook::ch01 {

ScaledSplit scale_train_test(const Matrix& train, const Matrix& test) {
  require_nonempty("scale_train_test", "train", train);
  require_nonempty("scale_train_test", "test", test);
  require_same_cols("scale_train_test", "train", train, "test", test);
  require_finite("scale_train_test", "train", train);
  require_finite("scale_train_test", "test", test);
  ScaledSplit split;
  split.scaling = fit_scaling(train);  // the training rows only: the test rows stay unseen
  split.train = apply_scaling(train, split.scaling);
  split.test = apply_scaling(test, split.scaling);
  return split;
}

}  // namespace scalebook::ch01
