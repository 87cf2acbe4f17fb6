// scalebook/alignment.hpp — where query i sits among the keys when there are fewer or more queries
// than keys. A type, not an answer: chapter 4's exercises use it, and so do later chapters.
/// \file
/// \brief Where query i sits among the keys when there are fewer or more queries than keys
/// (chapter 4).
#pragma once

namespace scalebook {

/// \brief Where query i sits among the keys when n_q and n_k differ (chapter 4).
enum class Alignment {
  /// Query i is position i: it may see keys 0..i. Right when queries and keys are the same
  /// sequence (training on a whole sequence, n_q = n_k).
  TopLeft,
  /// The last query is the last key: query i may see keys 0..i + (n_k − n_q). Right when the
  /// queries are the newest tokens and the keys include cached earlier ones (decoding).
  BottomRight,
};

}  // namespace scalebook
