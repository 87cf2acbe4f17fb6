// scalebook/standardize.hpp — lib's copy of the feature standardisation chapter 1 teaches, for
// the lessons and chapters after it: each feature (column) centred on the training rows' mean and
// divided by their population standard deviation (ddof = 0, as numpy and Keras); a constant
// feature is divided by 1, so it becomes 0 instead of dividing by zero.
/// \file
/// \brief lib's copy of the feature standardisation that chapter 1 teaches, for the chapters
/// after it.
#pragma once

#if defined(SCALEBOOK_EXERCISE_CHAPTER) && SCALEBOOK_EXERCISE_CHAPTER <= 1
#error "scalebook/standardize.hpp is lib's copy of what chapter 1 teaches (fit_standardizer, standardize): exercises of chapter 1 write their own"
#endif

#include "scalebook/core.hpp"

namespace scalebook {

/// Per-feature statistics of training rows: x' = (x - mean) / scale.
struct Standardizer {
  RowVector mean;   ///< (1, d) the training rows' mean of each feature
  RowVector scale;  ///< (1, d) their population standard deviation, or 1 where it is 0
};

/// Fits on training rows (n, d). \throws ShapeError if empty; ValueError on NaN or infinity.
Standardizer fit_standardizer(const Matrix& train);

/// (x - mean) / scale, row by row. \throws ShapeError if x's columns differ from the fit's;
/// ValueError on NaN or infinity.
Matrix standardize(const Matrix& x, const Standardizer& s);

}  // namespace scalebook
