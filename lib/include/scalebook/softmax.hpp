// scalebook/softmax.hpp — the numerically stable row softmax that chapter 3 teaches, for the
// chapters after it (their checks must not depend on a student's chapter 3 exercise).
#pragma once

#include "scalebook/core.hpp"

namespace scalebook {

/// Softmax of each row: exp(x - max) / sum exp(x - max). Entries may be -inf (masked; weight
/// exactly 0). Policy for a row whose every entry is -inf: the row of weights is all zeros (nothing
/// may be attended to, so nothing is). Throws ShapeError on an empty matrix and ValueError on NaN
/// or +inf.
Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits);

}  // namespace scalebook
