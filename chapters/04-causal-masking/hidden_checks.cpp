// Chapter 4 hidden checks — graded with checks.cpp, never in the student edition.
//
// The same contract as checks.cpp, on inputs no visible check uses: a submission tuned to the
// visible checks (a sentinel large enough for their scores, a buffer as long as their sequences)
// loses these points. Expected values are computed here by plain loops with std::exp. Each has a
// mistake in bugzoo/hidden/ that passes every visible check and fails it. Each has a label, its
// doctest description: what a student is shown of it (./workbook grade --show-hidden names), which
// says what it covers and never its input (grading/hidden.py).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <string>

#include "causal_masking.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::ch04;
using scalebook::testing::from_rows;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::suspect;

namespace {

// Row i: the mean of v's rows j with allowed(i, j) (zeros where none is), what attention gives when
// every allowed score of a row is the same.
Matrix mean_of_allowed_values(const BoolMatrix& allowed, const Matrix& v) {
  Matrix out = Matrix::Zero(allowed.rows(), v.cols());
  for (Index i = 0; i < allowed.rows(); ++i) {
    Index seen = 0;
    for (Index j = 0; j < allowed.cols(); ++j) {
      if (!allowed(i, j)) continue;
      out.row(i) += v.row(j);
      ++seen;
    }
    if (seen > 0) out.row(i) /= static_cast<double>(seen);
  }
  return out;
}

// The softmax of each row over its allowed entries, written as exp(s - m) / sum exp(s - m) with m
// the row's largest allowed score; rows with nothing allowed stay 0.
Matrix allowed_softmax(const Matrix& s, const BoolMatrix& allowed) {
  Matrix w = Matrix::Zero(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    double top = -HUGE_VAL;
    for (Index j = 0; j < s.cols(); ++j)
      if (allowed(i, j) && s(i, j) > top) top = s(i, j);
    if (top == -HUGE_VAL) continue;
    double total = 0.0;
    for (Index j = 0; j < s.cols(); ++j) {
      if (allowed(i, j)) {
        w(i, j) = std::exp(s(i, j) - top);
        total += w(i, j);
      }
    }
    w.row(i) /= total;
  }
  return w;
}

BoolMatrix lower_left(Index n_q, Index n_k, Index offset) {
  BoolMatrix m(n_q, n_k);
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) m(i, j) = j <= i + offset;
  return m;
}

// Where a finite sentinel that beats every allowed score puts the weight: on the masked entries
// of a row that has some, on all of a row that has none.
BoolMatrix masked_ones_win(const BoolMatrix& allowed) {
  BoolMatrix m = allowed;
  for (Index i = 0; i < m.rows(); ++i) {
    if (allowed.row(i).all()) continue;
    for (Index j = 0; j < m.cols(); ++j) m(i, j) = !allowed(i, j);
  }
  return m;
}

constexpr Named kSentinel{"inline_sentinel",
                          "causal_attention masks by itself with a finite sentinel (like -1e9 or lowest()) "
                          "instead of -infinity, which leaks weight onto masked entries: mask with -infinity, "
                          "or call your masked_softmax"};

}  // namespace

TEST_SUITE("04-causal-masking") {

TEST_CASE("4.2 a causal mask over 96 tokens and a scattered mask over 80 keys" *
          doctest::description("4.2 every allowed entry counts, however long the row and whatever the mask's pattern")) {
  // Sequences longer than any visible check's: the rule does not stop at a length.
  Rng rng(4021);
  const Matrix causal_scores = 3.0 * normal_matrix(96, 96, rng);
  const BoolMatrix causal = lower_left(96, 96, 0);
  {
    INPUTS(causal_scores, causal);
    const Matrix w = masked_softmax(causal_scores, causal);
    CHECK_MESSAGE(near(w, allowed_softmax(causal_scores, causal)),
                  "masked_softmax of 96 x 96 random scores under a causal mask is wrong: each row is a softmax "
                  "over all of its allowed entries, however long the row");
  }
  const Matrix wide_scores = 3.0 * normal_matrix(7, 80, rng);
  BoolMatrix scattered(7, 80);
  for (Index i = 0; i < 7; ++i)
    for (Index j = 0; j < 80; ++j) scattered(i, j) = (3 * i + 5 * j) % 7 != 2;
  INPUTS(wide_scores, scattered);
  const Matrix ws = masked_softmax(wide_scores, scattered);
  CHECK_MESSAGE(near(ws, allowed_softmax(wide_scores, scattered)),
                "masked_softmax of 7 x 80 random scores under the mask (3i + 5j) % 7 != 2 is wrong: each row is "
                "a softmax over all of its allowed entries, however long the row");
}

TEST_CASE("4.3 allowed scores at the lowest double keep all the weight when attention masks by itself" *
          doctest::description("4.3 masked positions take no weight in causal_attention, for scores of any size")) {
  // d_k = 1, every query DBL_MAX and every key -1: every score is exactly -DBL_MAX, so each query
  // weighs the keys it may see equally and outputs the mean of their values. A causal_attention
  // that masks with a finite sentinel (-1e9, -1e30, lowest()) instead of calling masked_softmax
  // passes every visible check, whose scores stay below 1e6; here the sentinel wins or ties and
  // the masked (future) values leak into the output.
  const Matrix v = from_rows(5, 2, {1, 0, 0, 2, -3, 1, 4, -1, 2, 5});
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    for (Index n_q : {Index{5}, Index{2}}) {
      INFO("causal_attention of ", n_q, " queries and 5 keys, ",
           std::string(alignment == Alignment::TopLeft ? "TopLeft" : "BottomRight"));
      const Matrix q = Matrix::Constant(n_q, 1, DBL_MAX);
      const Matrix k = Matrix::Constant(5, 1, -1.0);
      const Index offset = alignment == Alignment::BottomRight ? 5 - n_q : 0;
      const BoolMatrix allowed = lower_left(n_q, 5, offset);
      INPUTS(q, k, v, alignment);
      const Matrix out = causal_attention(q, k, v, alignment);
      CHECK_MESSAGE(near(out, mean_of_allowed_values(allowed, v), 1e-14),
                    said("causal_attention with every score exactly -DBL_MAX is wrong: each query must output "
                         "the mean of the values it may see",
                         suspect(out, {{kSentinel, mean_of_allowed_values(masked_ones_win(allowed), v)},
                                       {kSentinel, mean_of_allowed_values(BoolMatrix::Constant(n_q, 5, true), v)}})));
    }
  }
}

}  // TEST_SUITE
