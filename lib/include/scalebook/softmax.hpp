// scalebook/softmax.hpp — lib's copy of the numerically stable row softmax that chapter 3 teaches,
// for the chapters after it (their checks must not depend on a student's chapter 3 exercise).
// Masked scores (-inf) are chapter 4's subject: see scalebook/masking.hpp.
/// \file
/// \brief lib's copy of the stable row softmax that chapter 3 teaches, for the chapters after
/// it.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER <= 3
#error "scalebook/softmax.hpp is lib's copy of what chapter 3 teaches (softmax_rows): exercises of chapters 1-3 write their own"
#endif

#include "scalebook/core.hpp"

namespace scalebook {

/// Softmax of each row: exp(x - max) / sum exp(x - max). Throws ShapeError on an empty matrix and
/// ValueError on NaN or ±inf (a masked softmax is scalebook/masking.hpp's masked_softmax).
Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits);

}  // namespace scalebook
