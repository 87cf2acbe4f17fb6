// scalebook/masking.hpp — lib's copy of what chapter 4 teaches (the causal mask and the masked
// softmax), for the chapters after it. Their checks and exercises use this, never a student's
// chapter 4 exercise.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER <= 4
#error "scalebook/masking.hpp is lib's copy of what chapter 4 teaches (causal_mask, masked_softmax): exercises of chapters 1-4 write their own"
#endif

#include "scalebook/alignment.hpp"
#include "scalebook/core.hpp"

namespace scalebook {

/// The causal mask: entry (i, j) is true when query i may attend to key j, i.e. j <= i with
/// TopLeft, j <= i + (n_k - n_q) with BottomRight. Throws ShapeError if n_q or n_k is below 1.
BoolMatrix causal_mask(Index n_q, Index n_k, Alignment alignment = Alignment::TopLeft);

/// Softmax of each row over its allowed entries; disallowed weights are exactly 0, and a row with
/// nothing allowed is all zeros (chapter 4's policy). Throws ShapeError if scores is empty or
/// allowed has another shape, ValueError if scores holds NaN or infinity.
Matrix masked_softmax(const Eigen::Ref<const Matrix>& scores, const BoolMatrix& allowed);

}  // namespace scalebook
