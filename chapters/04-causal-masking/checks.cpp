// Chapter 4 checks — causal masking: the future is not available.
//
// Every case is named after its exercise ("4.2 ...") so that progress and grading count per
// exercise. Expected values are worked out by hand or computed here by plain loops with std::exp,
// never taken from the code under test. Chapter 3's exercises are not used (lib's softmax_rows
// only builds the output of one known mistake). A failure names a known mistake only when the
// output is the one that mistake gives on the same input (the check computes it by applying the
// mistake to its own computation); otherwise the message states the rule broken.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "causal_masking.hpp"
#include "scalebook/random.hpp"
#include "scalebook/softmax.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::ch04;
using scalebook::testing::format_number;
using scalebook::testing::identical;
using scalebook::testing::Mistake;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::same_mask;
using scalebook::testing::said;
using scalebook::testing::show;
using scalebook::testing::suspect;
using scalebook::testing::suspect_mask;
using scalebook::testing::Why;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr Index kMostNegative = std::numeric_limits<Index>::min();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kDiagonalMasked{"diagonal_masked", "the diagonal masked too (j < i instead of j <= i): a position must see itself"};
constexpr Named kTransposed{"mask_transposed", "the mask transposed (j >= i instead of j <= i): each query sees the future instead of the past"};
constexpr Named kInverted{"mask_inverted", "true and false swapped: entry (i, j) is true when query i may attend to key j"};
constexpr Named kAlignmentSwapped{"alignment_swapped", "top-left and bottom-right alignment swapped"};
constexpr Named kShiftSign{"shift_sign_flipped", "the bottom-right shift with the wrong sign (j <= i - (n_k - n_q))"};
constexpr Named kShiftClamped{"shift_clamped", "the bottom-right shift clamped at 0: with n_q > n_k it is negative and the first rows see nothing"};
constexpr Named kSizeZeroOnly{"mask_size_zero_only", "a size of 0 rejected but a negative size reaches Eigen: n_q and n_k below 1 must throw ShapeError"};
constexpr Named kAfterSoftmax{"mask_after_softmax", "the mask applied after the softmax: masked weights zeroed, the allowed ones not renormalised"};
constexpr Named kMaskIgnored{"mask_ignored", "the given mask ignored: a softmax over every entry"};
constexpr Named kOwnMask{"own_causal_mask", "a causal mask built inside instead of the mask given"};
constexpr Named kMinus1e9{"finite_negative_sentinel", "masked scores set to a finite sentinel (-1e9) instead of -infinity: a score below it, or a fully masked row, gives the masked entries weight"};
constexpr Named kLowest{"lowest_sentinel", "masked scores set to the lowest finite double instead of -infinity: a score equal to it, or a fully masked row, gives the masked entries weight"};
constexpr Named kEigenExp{"eigen_vectorised_exp", "Eigen's vectorised .exp() on a contiguous row: exp(-inf) comes out as a tiny positive number, not exactly 0"};
constexpr Named kMaxOverAll{"max_over_all_entries", "the row maximum taken over masked scores too: a large masked score makes the allowed weights underflow to 0 / 0"};
constexpr Named kMaxFromFirst{"max_from_first_score", "the row maximum started at the row's first score, masked or not: the maximum must come from the allowed entries only"};
constexpr Named kNanFullyMasked{"nan_fully_masked", "no guard for a fully masked row: exp(-inf - (-inf)) gives NaN where the policy gives zeros"};
constexpr Named kMaskRowsOnly{"mask_shape_rows_only", "only the mask's rows compared with the scores': a mask of the wrong width reaches Eigen"};
constexpr Named kNoScaling{"no_scaling", "the scores not divided by sqrt(d_k)"};
constexpr Named kDkScaling{"scaled_by_dk", "the scores divided by d_k instead of sqrt(d_k)"};
constexpr Named kNoMask{"no_mask", "no mask at all: every query sees every key"};
constexpr Named kNoValidation{"no_input_validation", "causal_attention checks none of its input: shape mismatches reach Eigen and NaN passes through"};
constexpr Named kVRowsSmallerOnly{"v_rows_smaller_only", "only a v with fewer rows than k rejected: one with more rows reaches the product"};

// The contract's rules, as the throw checks state them.
constexpr char kCheckSizes[] = "n_q and n_k below 1 must throw ShapeError";
constexpr char kCheckEmpty[] = "an empty input (no rows or no columns) must throw ShapeError";
constexpr char kCheckShape[] = "shapes that do not fit must throw ShapeError";
constexpr char kCheckFinite[] = "NaN or infinity in the input must throw ValueError";

Matrix numbers(const BoolMatrix& m) { return m.cast<double>(); }

BoolMatrix bools(const Matrix& m) { return m.array() != 0.0; }

// A matrix written out row by row.
Matrix grid(std::initializer_list<std::initializer_list<double>> rows) {
  Matrix m(static_cast<Index>(rows.size()), static_cast<Index>(rows.begin()->size()));
  Index i = 0;
  for (const auto& row : rows) {
    Index j = 0;
    for (double x : row) m(i, j++) = x;
    ++i;
  }
  return m;
}

// An (n_q, n_k) mask from a rule written out in the check: allowed(i, j) = rule(i, j).
BoolMatrix mask_where(Index n_q, Index n_k, const std::function<bool(Index, Index)>& rule) {
  BoolMatrix m(n_q, n_k);
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) m(i, j) = rule(i, j);
  return m;
}

BoolMatrix lower_triangle(Index n_q, Index n_k, Index offset) {
  return mask_where(n_q, n_k, [offset](Index i, Index j) { return j <= i + offset; });
}

// Softmax over the allowed entries, by a formula of its own: w_ij = 1 / sum_{l allowed} exp(s_il - s_ij)
// for allowed (i, j); 0 elsewhere, and 0 across a row with nothing allowed.
Matrix softmax_allowed_by_loops(const Matrix& s, const BoolMatrix& allowed) {
  Matrix w = Matrix::Zero(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    for (Index j = 0; j < s.cols(); ++j) {
      if (!allowed(i, j)) continue;
      double denominator = 0.0;
      for (Index l = 0; l < s.cols(); ++l)
        if (allowed(i, l)) denominator += std::exp(s(i, l) - s(i, j));
      w(i, j) = 1.0 / denominator;
    }
  }
  return w;
}

// Attention by loops: scores q_i . k_j / divisor, softmax over the allowed keys, times v.
Matrix attention_by_loops(const Matrix& q, const Matrix& k, const Matrix& v,
                          const BoolMatrix& allowed, double divisor) {
  Matrix scores(q.rows(), k.rows());
  for (Index i = 0; i < q.rows(); ++i) {
    for (Index j = 0; j < k.rows(); ++j) {
      double dot = 0.0;
      for (Index c = 0; c < q.cols(); ++c) dot += q(i, c) * k(j, c);
      scores(i, j) = dot / divisor;
    }
  }
  const Matrix w = softmax_allowed_by_loops(scores, allowed);
  Matrix out = Matrix::Zero(q.rows(), v.cols());
  for (Index i = 0; i < q.rows(); ++i)
    for (Index j = 0; j < k.rows(); ++j)
      for (Index c = 0; c < v.cols(); ++c) out(i, c) += w(i, j) * v(j, c);
  return out;
}

bool has_nan(const Matrix& m) { return m.array().isNaN().any(); }

// masked_softmax the way each known mistake computes it, written as the reference's loop with that
// one slip: its output is what such a masked_softmax returns.
enum class SoftmaxSlip { None, Minus1e9, Lowest, EigenExp, MaxOverAll, MaxFromFirst, NoGuard, AfterSoftmax, Ignored };

Matrix masked_softmax_with(const Matrix& s, const BoolMatrix& allowed, SoftmaxSlip slip) {
  const double sentinel = slip == SoftmaxSlip::Minus1e9 ? -1e9 : slip == SoftmaxSlip::Lowest ? -DBL_MAX : -kInf;
  const bool all = slip == SoftmaxSlip::AfterSoftmax || slip == SoftmaxSlip::Ignored;
  Matrix w(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    double top = slip == SoftmaxSlip::MaxFromFirst ? s(i, 0) : sentinel;
    for (Index j = 0; j < s.cols(); ++j) {
      w(i, j) = all || allowed(i, j) ? s(i, j) : sentinel;
      top = std::max(top, slip == SoftmaxSlip::MaxOverAll ? s(i, j) : w(i, j));
    }
    const bool none = slip == SoftmaxSlip::MaxFromFirst ? !allowed.row(i).any() : top == sentinel;
    if (none && slip != SoftmaxSlip::NoGuard) {
      w.row(i).setZero();
      continue;
    }
    if (slip == SoftmaxSlip::EigenExp) {
      RowVector row = w.row(i);
      row = (row.array() - top).exp().matrix();
      w.row(i) = row / row.sum();
    } else {
      double sum = 0.0;
      for (Index j = 0; j < s.cols(); ++j) sum += (w(i, j) = std::exp(w(i, j) - top));
      w.row(i) /= sum;
    }
    if (slip == SoftmaxSlip::AfterSoftmax)
      for (Index j = 0; j < s.cols(); ++j)
        if (!allowed(i, j)) w(i, j) = 0.0;
  }
  return w;
}

// Weights that agree: the same exact zeros (a masked weight is exactly 0 or it is not), NaN where
// NaN, and the rest within 1e-12.
bool same_weights(const Matrix& a, const Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Index i = 0; i < a.rows(); ++i)
    for (Index j = 0; j < a.cols(); ++j) {
      const double x = a(i, j), y = b(i, j);
      if (std::isnan(x) || std::isnan(y)) {
        if (!(std::isnan(x) && std::isnan(y))) return false;
      } else if ((x == 0.0) != (y == 0.0) || std::abs(x - y) > 1e-12 * std::max(1.0, std::abs(y))) {
        return false;
      }
    }
  return true;
}

// The named mistakes of 4.2 whose output on (S, ALLOWED) equals W; a mistake whose output is the
// right one on this input proves nothing and is left out.
std::string softmax_mistakes(const Matrix& w, const Matrix& s, const BoolMatrix& allowed) {
  const Matrix right = softmax_allowed_by_loops(s, allowed);
  std::vector<std::pair<Named, Matrix>> mistakes = {
      {kMinus1e9, masked_softmax_with(s, allowed, SoftmaxSlip::Minus1e9)},
      {kLowest, masked_softmax_with(s, allowed, SoftmaxSlip::Lowest)},
      {kEigenExp, masked_softmax_with(s, allowed, SoftmaxSlip::EigenExp)},
      {kMaxOverAll, masked_softmax_with(s, allowed, SoftmaxSlip::MaxOverAll)},
      {kMaxFromFirst, masked_softmax_with(s, allowed, SoftmaxSlip::MaxFromFirst)},
      {kNanFullyMasked, masked_softmax_with(s, allowed, SoftmaxSlip::NoGuard)},
      {kAfterSoftmax, masked_softmax_with(s, allowed, SoftmaxSlip::AfterSoftmax)},
      {kMaskIgnored, masked_softmax_with(s, allowed, SoftmaxSlip::Ignored)}};
  if (allowed.rows() > 1 && !same_mask(allowed, lower_triangle(allowed.rows(), allowed.cols(), 0)))
    mistakes.push_back({kOwnMask, softmax_allowed_by_loops(s, lower_triangle(s.rows(), s.cols(), 0))});
  std::vector<std::pair<Named, Matrix>> telling;
  for (const auto& m : mistakes)
    if (!same_weights(m.second, right)) telling.push_back(m);
  return testing::suspect_by(w, telling, same_weights);
}

// "" when every masked weight is exactly 0.0; otherwise the first one that is not, and the rule.
std::string masked_weights_not_zero(const Matrix& w, const BoolMatrix& allowed) {
  for (Index i = 0; i < w.rows(); ++i)
    for (Index j = 0; j < w.cols(); ++j)
      if (!allowed(i, j) && !(w(i, j) == 0.0))
        return "masked_softmax's weight at (" + std::to_string(i) + ", " + std::to_string(j) + "), a masked entry, is " +
               format_number(w(i, j)) + ", not exactly 0.0: a masked score is -infinity before the softmax, and "
               "exp(-infinity) is exactly 0";
  return "";
}

// Attention as each known mistake of 4.3 computes it, on (q, k, v) with the contract's mask rule.
std::string attention_mistakes(const Matrix& out, const Matrix& q, const Matrix& k, const Matrix& v, Alignment alignment) {
  const Index n_q = q.rows(), n_k = k.rows();
  const Index offset = alignment == Alignment::BottomRight ? n_k - n_q : 0;
  const Index other = alignment == Alignment::BottomRight ? 0 : n_k - n_q;
  const double root = std::sqrt(static_cast<double>(q.cols()));
  const BoolMatrix mask = lower_triangle(n_q, n_k, offset);
  const Matrix right = attention_by_loops(q, k, v, mask, root);
  std::vector<Mistake> mistakes = {
      {kNoScaling, attention_by_loops(q, k, v, mask, 1.0)},
      {kDkScaling, attention_by_loops(q, k, v, mask, static_cast<double>(q.cols()))},
      {kNoMask, attention_by_loops(q, k, v, BoolMatrix::Constant(n_q, n_k, true), root)},
      {kDiagonalMasked, attention_by_loops(q, k, v, lower_triangle(n_q, n_k, offset - 1), root)},
      {kTransposed, attention_by_loops(q, k, v, mask_where(n_q, n_k, [&](Index i, Index j) { return j >= i + offset; }), root)},
      {kAlignmentSwapped, attention_by_loops(q, k, v, lower_triangle(n_q, n_k, other), root)}};
  // The mask applied after the softmax: softmax over all keys, the masked weights zeroed.
  Matrix scores(n_q, n_k);
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) scores(i, j) = q.row(i).dot(k.row(j)) / root;
  const Matrix after = masked_softmax_with(scores, mask, SoftmaxSlip::AfterSoftmax);
  mistakes.push_back({kAfterSoftmax, after * v});
  std::vector<Mistake> telling;
  for (const Mistake& m : mistakes)
    if (!near(m.output, right, 1e-12)) telling.push_back(m);
  return suspect(out, telling, 1e-9);
}

// Whether F threw E with the function's own message ("function: ..."), the contract's error.
template <class E, class F>
bool own_error(const std::string& function, F&& f) {
  return testing::starts_with(testing::thrown_message<E>(std::forward<F>(f)), function + ": ");
}

}  // namespace

TEST_SUITE("04-causal-masking") {

// ---- 4.1 causal_mask ------------------------------------------------------------------------------

TEST_CASE("4.1 a square mask allows the diagonal and everything before it") {
  const BoolMatrix expected = bools(grid({{1, 0, 0, 0},
                                         {1, 1, 0, 0},
                                         {1, 1, 1, 0},
                                         {1, 1, 1, 1}}));
  const BoolMatrix diagonal_masked = lower_triangle(4, 4, -1);
  const BoolMatrix transposed = expected.transpose();
  const BoolMatrix inverted = expected.array() == false;
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    INPUTS(4, 4, alignment);
    const BoolMatrix actual = causal_mask(4, 4, alignment);
    CHECK_MESSAGE(same_mask(actual, expected),
                  said("causal_mask(4, 4, " + show(alignment) + ") must allow key j for query i when j <= i: the "
                       "diagonal and everything below it (both alignments agree when n_q = n_k)",
                       suspect_mask(actual, {{kDiagonalMasked, diagonal_masked}, {kTransposed, transposed}, {kInverted, inverted}})));
  }
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    INPUTS(1, 1, alignment);
    const BoolMatrix one = causal_mask(1, 1, alignment);
    CHECK_MESSAGE(same_mask(one, BoolMatrix::Constant(1, 1, true)),
                  said("causal_mask(1, 1, " + show(alignment) + "): a one-token sequence, the token must see itself",
                       suspect_mask(one, {{kDiagonalMasked, BoolMatrix::Constant(1, 1, false)}})));
  }
}

TEST_CASE("4.1 fewer queries than keys - top-left and bottom-right alignment") {
  // n_q = 2, n_k = 5. Top-left: queries are positions 0 and 1. Bottom-right: they are the last two
  // positions, 3 and 4, after three earlier (e.g. cached) keys.
  const BoolMatrix top_left = bools(grid({{1, 0, 0, 0, 0},
                                          {1, 1, 0, 0, 0}}));
  const BoolMatrix bottom_right = bools(grid({{1, 1, 1, 1, 0},
                                              {1, 1, 1, 1, 1}}));
  const BoolMatrix shift_wrong_sign = lower_triangle(2, 5, -3);
  const BoolMatrix transposed = mask_where(2, 5, [](Index i, Index j) { return j >= i; });
  INPUTS(2, 5);
  const BoolMatrix tl = causal_mask(2, 5, Alignment::TopLeft);
  CHECK_MESSAGE(same_mask(tl, top_left),
                said("causal_mask(2, 5, TopLeft) must let query i see keys 0..i",
                     suspect_mask(tl, {{kAlignmentSwapped, bottom_right}, {kTransposed, transposed},
                                       {kDiagonalMasked, lower_triangle(2, 5, -1)}})));
  const BoolMatrix br = causal_mask(2, 5, Alignment::BottomRight);
  CHECK_MESSAGE(same_mask(br, bottom_right),
                said("causal_mask(2, 5, BottomRight) must let query i see keys 0..i + 3 (n_k - n_q = 3): the last query sees "
                     "every key",
                     suspect_mask(br, {{kAlignmentSwapped, top_left}, {kShiftSign, shift_wrong_sign},
                                       {kDiagonalMasked, lower_triangle(2, 5, 2)}})));
  CHECK_MESSAGE(same_mask(causal_mask(2, 5), top_left), "causal_mask(2, 5) without an alignment must use the default, TopLeft");
}

TEST_CASE("4.1 more queries than keys - bottom-right masks the first rows fully") {
  // n_q = 5, n_k = 2. Bottom-right puts the last query on the last key: queries 0, 1, 2 would sit
  // before the first key, so they may see nothing.
  const BoolMatrix top_left = bools(grid({{1, 0}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}));
  const BoolMatrix bottom_right = bools(grid({{0, 0}, {0, 0}, {0, 0}, {1, 0}, {1, 1}}));
  INPUTS(5, 2);
  const BoolMatrix tl = causal_mask(5, 2, Alignment::TopLeft);
  CHECK_MESSAGE(same_mask(tl, top_left), said("causal_mask(5, 2, TopLeft) must let query i see keys 0..i, all of them from "
                                              "query 1 on",
                                              suspect_mask(tl, {{kAlignmentSwapped, bottom_right}})));
  const BoolMatrix br = causal_mask(5, 2, Alignment::BottomRight);
  // With n_q > n_k the offset n_k - n_q = -3 is negative: clamping it at 0 gives the top-left mask,
  // as swapping the alignments does (both are named when they give it).
  CHECK_MESSAGE(same_mask(br, bottom_right),
                said("causal_mask(5, 2, BottomRight) must let query i see keys j <= i - 3: queries 0..2 see nothing",
                     suspect_mask(br, {{kAlignmentSwapped, top_left}, {kShiftClamped, top_left},
                                       {kShiftSign, lower_triangle(5, 2, 3)}})));
}

TEST_CASE("4.1 every size from 1 to 6 and both alignments follow the rule") {
  // allowed(i, j) = j <= i + offset, offset 0 (TopLeft) or n_k - n_q (BottomRight): n_q <, = and
  // > n_k, one query, one key.
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    for (Index n_q = 1; n_q <= 6; ++n_q) {
      for (Index n_k = 1; n_k <= 6; ++n_k) {
        INPUTS(n_q, n_k, alignment);
        const Index offset = alignment == Alignment::BottomRight ? n_k - n_q : 0;
        const BoolMatrix actual = causal_mask(n_q, n_k, alignment);
        CHECK_MESSAGE(same_mask(actual, lower_triangle(n_q, n_k, offset)),
                      said("causal_mask(" + std::to_string(n_q) + ", " + std::to_string(n_k) + ", " + show(alignment) +
                               ") must allow exactly j <= i + " + std::to_string(offset),
                           suspect_mask(actual, {{kDiagonalMasked, lower_triangle(n_q, n_k, offset - 1)},
                                                 {kShiftSign, lower_triangle(n_q, n_k, -offset)}})));
      }
    }
  }
}

TEST_CASE("4.1 sizes below one throw ShapeError") {
  // At the edge (0), a little below (-1) and far below (the most negative Index), for each size
  // alone and both together, with both alignments. A negative size that reaches Eigen while 0 is
  // rejected is what checking for 0 alone gives.
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    const bool rejects_zero = own_error<ShapeError>("causal_mask", [&] { causal_mask(0, 3, alignment); }) &&
                              own_error<ShapeError>("causal_mask", [&] { causal_mask(3, 0, alignment); });
    const Why sizes(kCheckSizes, std::nullopt, rejects_zero ? std::optional<Named>(kSizeZeroOnly) : std::nullopt);
    for (Index bad : {Index{0}, Index{-1}, Index{-5}, kMostNegative}) {
      CHECK_THROWS_CALL(ShapeError, sizes, causal_mask, bad, 3, alignment);
      CHECK_THROWS_CALL(ShapeError, sizes, causal_mask, 3, bad, alignment);
      CHECK_THROWS_CALL(ShapeError, sizes, causal_mask, bad, bad, alignment);
    }
  }
}

// ---- 4.2 masked_softmax ---------------------------------------------------------------------------

TEST_CASE("4.2 masked weights are exactly zero and the allowed ones are a softmax over them") {
  Rng rng(402);
  // A causal mask, where the first position sees only itself...
  const Matrix square = 2.0 * normal_matrix(5, 5, rng);
  const BoolMatrix causal = lower_triangle(5, 5, 0);
  INFO("scores: 5 x 5 of 2 N(0, 1), Rng(402), under the causal mask j <= i");
  INPUTS(square, causal);
  const Matrix w = masked_softmax(square, causal);
  const std::string named = softmax_mistakes(w, square, causal);
  const std::string not_zero = masked_weights_not_zero(w, causal);
  CHECK_MESSAGE(not_zero.empty(), said(not_zero, named));
  CHECK_MESSAGE(near(w, softmax_allowed_by_loops(square, causal)),
                said("masked_softmax of 5 x 5 scores under a causal mask must give each row exp(s - its largest allowed score) "
                     "over their sum, the masked scores left out of the sum", named));
  CHECK_MESSAGE(w(0, 0) == 1.0, said("masked_softmax: the first position sees only itself, so its weight must be exactly 1, got " +
                                         format_number(w(0, 0)), named));

  // ...and any other pattern: masked_softmax follows the mask it is given.
  const Matrix wide = 2.0 * normal_matrix(4, 6, rng);
  const BoolMatrix pattern = mask_where(4, 6, [](Index i, Index j) { return (i + j) % 3 != 1; });
  INFO("scores: 4 x 6 of 2 N(0, 1), Rng(402) continued, under the mask (i + j) % 3 != 1");
  INPUTS(wide, pattern);
  const Matrix wp = masked_softmax(wide, pattern);
  const std::string named_p = softmax_mistakes(wp, wide, pattern);
  const std::string not_zero_p = masked_weights_not_zero(wp, pattern);
  CHECK_MESSAGE(not_zero_p.empty(), said(not_zero_p, named_p));
  CHECK_MESSAGE(near(wp, softmax_allowed_by_loops(wide, pattern)),
                said("masked_softmax of 4 x 6 scores under the mask (i + j) % 3 != 1 must follow the mask it is given, each "
                     "row a softmax over its allowed scores alone", named_p));
}

TEST_CASE("4.2 allowed scores far below any finite sentinel keep all the weight") {
  // Contrived on purpose: the allowed scores are lower than any finite stand-in for -infinity, so
  // a sentinel wins (-1e9) or ties (lowest()) and takes weight. With -infinity nothing leaks.
  const Matrix scores = grid({{-DBL_MAX, 0.0, 0.0},
                              {-2e300, -1e300, 0.0},
                              {-1e300, 0.0, -DBL_MAX}});
  const BoolMatrix allowed = lower_triangle(3, 3, 0);
  INPUTS(scores, allowed);
  const Matrix expected = grid({{1.0, 0.0, 0.0},
                                {0.0, 1.0, 0.0},
                                {0.0, 1.0, 0.0}});
  const Matrix w = masked_softmax(scores, allowed);
  const std::string named = softmax_mistakes(w, scores, allowed);
  CHECK_MESSAGE(near(w, expected, 1e-15),
                said("masked_softmax of allowed scores below -1e9 and even equal to the lowest double must still give the "
                     "allowed entries all the weight: (1, 0, 0), (0, 1, 0), (0, 1, 0)", named));
  const std::string not_zero = masked_weights_not_zero(w, allowed);
  CHECK_MESSAGE(not_zero.empty(), said(not_zero, named));
}

TEST_CASE("4.2 a huge score on a masked entry takes no weight and large allowed scores do not overflow") {
  // Row 0: the future holds a huge score; the maximum must be taken over the allowed entries only.
  // Row 1: large allowed scores; without subtracting the maximum, exp overflows.
  const Matrix scores = grid({{0.0, 1000.0, 1000.0},
                              {800.0, 801.0, -5000.0}});
  const BoolMatrix allowed = mask_where(2, 3, [](Index i, Index j) { return j <= i; });
  INPUTS(scores, allowed);
  const double e = std::exp(1.0);
  const Matrix expected = grid({{1.0, 0.0, 0.0},
                                {1.0 / (1.0 + e), e / (1.0 + e), 0.0}});
  const Matrix w = masked_softmax(scores, allowed);
  const std::string named = softmax_mistakes(w, scores, allowed);
  CHECK_MESSAGE(!has_nan(w), said("masked_softmax of the rows (0, 1000, 1000) and (800, 801, -5000) under a causal mask gave NaN: "
                                  "the maximum comes from the allowed entries only (a masked 1000 would make every allowed exp "
                                  "underflow to 0), and it is subtracted (exp(800) overflows)", named));
  CHECK_MESSAGE(near(w, expected, 1e-14),
                said("masked_softmax of the rows (0, 1000, 1000) and (800, 801, -5000) under a causal mask must give (1, 0, 0) and "
                     "(1, e, 0) / (1 + e): subtract the row's maximum over its allowed entries only", named));
  const std::string not_zero = masked_weights_not_zero(w, allowed);
  CHECK_MESSAGE(not_zero.empty(), said(not_zero, named));
}

TEST_CASE("4.2 the largest allowed score may sit anywhere and masked ones may be larger still") {
  // Row p of each block has its largest allowed score at position p; the spreads (1e4, 1e300) are
  // far beyond exp's range (about -745 to 709.8) in both directions. Only the maximum over the
  // allowed entries of the row itself is safe to subtract: the first entry (masked here in some
  // rows, with a huge score), 0, the maximum over every entry or over the whole matrix all send
  // some exponent past the range.
  const Index m = 4;
  for (double spread : {1e4, 1e300}) {
    Matrix scores(3 * m, m), expected = Matrix::Zero(3 * m, m);
    BoolMatrix allowed = BoolMatrix::Constant(3 * m, m, true);
    for (Index p = 0; p < m; ++p) {
      // Block 1: everything allowed, one huge score at p, all others hugely negative.
      scores.row(p).setConstant(-spread);
      scores(p, p) = spread;
      expected(p, p) = 1.0;
      // Block 2: the same row, but every other entry masked and given a score above the maximum.
      scores.row(m + p).setConstant(2 * (spread / 3));
      scores(m + p, p) = -spread;  // the only allowed entry, far below the masked ones
      allowed.row(m + p).setConstant(false);
      allowed(m + p, p) = true;
      expected(m + p, p) = 1.0;
      // Block 3: allowed entries far from 0 (+1e4 for even p, -1e4 for odd p), p ln 3 above the
      // other allowed one; the rest masked with huge scores.
      const Index other = (p + 1) % m;
      const double level = p % 2 == 0 ? 1e4 : -1e4;
      scores.row(2 * m + p).setConstant(spread);
      scores(2 * m + p, other) = level;
      scores(2 * m + p, p) = level + std::log(3.0);
      allowed.row(2 * m + p).setConstant(false);
      allowed(2 * m + p, p) = allowed(2 * m + p, other) = true;
      const double e = std::exp(scores(2 * m + p, p) - level);  // 3, up to rounding
      expected(2 * m + p, p) = e / (e + 1.0);
      expected(2 * m + p, other) = 1.0 / (e + 1.0);
    }
    INFO("rows 0..3: all allowed, +spread at p and -spread elsewhere; rows 4..7: only p allowed, at -spread, the masked "
         "scores at 2 spread / 3; rows 8..11: p and p + 1 allowed near +-1e4, the masked scores at spread");
    INPUTS(spread, scores, allowed);
    const Matrix w = masked_softmax(scores, allowed);
    const std::string named = softmax_mistakes(w, scores, allowed);
    CHECK_MESSAGE(!has_nan(w), said("masked_softmax gave NaN on rows whose largest allowed score moves from position to position: "
                                    "subtract the maximum over the row's own allowed entries", named));
    CHECK_MESSAGE(near(w, expected, 1e-12, testing::Parts{"block of rows", m, nullptr, 0}),
                  said("masked_softmax of rows whose largest allowed score moves from position to position, with masked scores "
                       "larger still, must give a softmax over each row's allowed scores", named));
    const std::string not_zero = masked_weights_not_zero(w, allowed);
    CHECK_MESSAGE(not_zero.empty(), said(not_zero, named));
  }
}

TEST_CASE("4.2 a fully masked row gives all zeros and no NaN") {
  const Matrix scores = grid({{0.5, -1.0, 2.0},
                              {1.0, 3.0, 1.0},
                              {-2.0, 0.0, 4.0}});
  const BoolMatrix allowed = mask_where(3, 3, [](Index i, Index j) { return i == 1 && j != 1; });
  INPUTS(scores, allowed);
  const Matrix w = masked_softmax(scores, allowed);
  const std::string named = softmax_mistakes(w, scores, allowed);
  CHECK_MESSAGE(near(w, grid({{0.0, 0.0, 0.0}, {0.5, 0.0, 0.5}, {0.0, 0.0, 0.0}}), 1e-15),
                said("masked_softmax of 3 x 3 scores where only row 1 allows anything (keys 0 and 2) must give (0, 0, 0), "
                     "(0.5, 0, 0.5), (0, 0, 0): the contract's policy gives a row with no allowed key weights 0, not NaN", named));
  const Matrix one = grid({{3.0}});
  const BoolMatrix none = BoolMatrix::Constant(1, 1, false);
  INPUTS(one, none);
  const Matrix single = masked_softmax(one, none);
  CHECK_MESSAGE(near(single, grid({{0.0}}), 0.0),
                said("masked_softmax of the single score 3, masked, must give the weight 0 (a row with no allowed key)",
                     softmax_mistakes(single, one, none)));
}

TEST_CASE("4.2 bad input throws ShapeError or ValueError") {
  // Each dimension empty on its own, and both.
  CHECK_THROWS_CALL(ShapeError, kCheckEmpty, masked_softmax, Matrix(0, 0), BoolMatrix(0, 0));
  CHECK_THROWS_CALL(ShapeError, kCheckEmpty, masked_softmax, Matrix(0, 3), BoolMatrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, kCheckEmpty, masked_softmax, Matrix(3, 0), BoolMatrix(3, 0));
  // A mask with fewer and with more rows, fewer and more columns, and transposed (same size):
  // checking only one dimension, only the size, or only "not smaller" lets one of these through.
  const Matrix scores = Matrix::Zero(3, 4);
  const bool checks_rows = own_error<ShapeError>("masked_softmax", [&] { masked_softmax(scores, BoolMatrix::Constant(2, 4, true)); });
  for (auto [rows, cols] : {std::pair<Index, Index>{2, 4}, {5, 4}, {3, 3}, {3, 6}, {4, 3}}) {
    const std::optional<Named> rows_only = checks_rows && rows == 3 ? std::optional<Named>(kMaskRowsOnly) : std::nullopt;
    CHECK_THROWS_CALL(ShapeError, Why("allowed must have the shape of scores", std::nullopt, rows_only), masked_softmax,
                      scores, BoolMatrix(BoolMatrix::Constant(rows, cols, true)));
  }
  const BoolMatrix causal = lower_triangle(3, 3, 0);
  for (double bad : {kNaN, kInf, -kInf}) {
    for (auto [i, j] : {std::pair<Index, Index>{1, 0}, std::pair<Index, Index>{0, 2}}) {
      INFO("scores(", i, ", ", j, ") = ", format_number(bad), std::string(causal(i, j) ? " (allowed entry)" : " (masked entry)"));
      Matrix bad_scores = Matrix::Zero(3, 3);
      bad_scores(i, j) = bad;
      CHECK_THROWS_CALL(ValueError, kCheckFinite, masked_softmax, bad_scores, causal);
    }
  }
}

// ---- 4.3 causal_attention -------------------------------------------------------------------------

TEST_CASE("4.3 a two-token example worked by hand") {
  // d_k = 4, so the scores are divided by sqrt(4) = 2.
  // Query 0 may see key 0 only: its output is v's row 0, (4, 0).
  // Query 1 has scores (0, 2 ln 3) / 2 = (0, ln 3), weights (1/4, 3/4): output (1, 3).
  const double ln3 = std::log(3.0);
  const Matrix q = grid({{1, 1, 1, 1}, {2 * ln3, 0, 0, 0}});
  const Matrix k = grid({{0, 1, 0, 0}, {1, 0, 0, 0}});
  const Matrix v = grid({{4, 0}, {0, 4}});
  INPUTS(q, k, v);
  const Matrix expected = grid({{4, 0}, {1, 3}});
  const Matrix out = causal_attention(q, k, v);
  CHECK_MESSAGE(near(out, expected, 1e-14),
                said("causal_attention of q = ((1, 1, 1, 1), (2 ln 3, 0, 0, 0)), k = ((0, 1, 0, 0), (1, 0, 0, 0)), "
                     "v = ((4, 0), (0, 4)) must give the rows (4, 0) and (1, 3): query 1 scores (0, ln 3) once divided by "
                     "sqrt(d_k) = 2, weights (1/4, 3/4)",
                     attention_mistakes(out, q, k, v, Alignment::TopLeft)));
}

TEST_CASE("4.3 the first position attends only to itself") {
  Rng rng(431);
  const Matrix q = normal_matrix(6, 5, rng), k = normal_matrix(6, 5, rng), v = normal_matrix(6, 3, rng);
  INFO("q (6, 5), k (6, 5), v (6, 3) drawn from N(0, 1) with Rng(431), in that order");
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    INPUTS(q, k, v, alignment);
    const Matrix out = causal_attention(q, k, v, alignment);
    CHECK_MESSAGE(identical(out.row(0), v.row(0)),
                  said("causal_attention's row 0 must be exactly v's row 0: the first query sees only the first key, with "
                       "weight exactly 1",
                       attention_mistakes(out, q, k, v, alignment)));
  }
  const Matrix q1 = q.topRows(1), k1 = k.topRows(1), v1 = v.topRows(1);
  INPUTS(q1, k1, v1);
  CHECK_MESSAGE(identical(causal_attention(q1, k1, v1), v1), "causal_attention of a one-token sequence must return its own value");
}

TEST_CASE("4.3 changing later tokens leaves earlier outputs bit-identical") {
  Rng rng(432);
  const Matrix q = normal_matrix(6, 4, rng), k = normal_matrix(6, 4, rng), v = normal_matrix(6, 3, rng);
  // Tokens 4 and 5 are replaced by others; their keys are huge, so a maximum taken over masked
  // entries, or a softmax normalised before masking, changes the earlier rows too.
  Matrix q2 = q, k2 = k, v2 = v;
  q2.bottomRows(2) = normal_matrix(2, 4, rng);
  k2.bottomRows(2) = 1e4 * normal_matrix(2, 4, rng);
  v2.bottomRows(2) = 10.0 * normal_matrix(2, 3, rng);
  INFO("q, k, v (6 tokens) drawn with Rng(432); then tokens 4 and 5 replaced, their keys 1e4 N(0, 1)");
  INPUTS(q, k, v, q2, k2, v2);
  const Matrix before = causal_attention(q, k, v);
  const Matrix after = causal_attention(q2, k2, v2);
  CHECK_MESSAGE(identical(after.topRows(4), before.topRows(4)),
                said("causal_attention's outputs 0..3 changed when only tokens 4 and 5 changed: the future leaks into them",
                     attention_mistakes(after, q2, k2, v2, Alignment::TopLeft)));
  CHECK_MESSAGE(!identical(after.row(5), before.row(5)),
                "causal_attention's output 5 did not change although token 5 did: the last position must see itself");
  CHECK_MESSAGE(!has_nan(after), "causal_attention gave NaN when tokens 4 and 5 have keys near 1e4: masked scores, however large, "
                                 "must not matter");
}

TEST_CASE("4.3 attention equals a plain loop for equal and unequal lengths and when decoding") {
  Rng rng(433);
  const Matrix q = normal_matrix(5, 3, rng), k = normal_matrix(5, 3, rng), v = normal_matrix(5, 2, rng);
  INFO("q (5, 3), k (5, 3), v (5, 2) drawn from N(0, 1) with Rng(433), in that order");
  const double root = std::sqrt(3.0);

  SUBCASE("equal lengths") {
    const BoolMatrix causal = lower_triangle(5, 5, 0);
    for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
      INPUTS(q, k, v, alignment);
      const Matrix out = causal_attention(q, k, v, alignment);
      CHECK_MESSAGE(near(out, attention_by_loops(q, k, v, causal, root)),
                    said("causal_attention of 5 tokens (d_k = 3) differs from a softmax over keys j <= i of q_i . k_j / "
                         "sqrt(3), times v", attention_mistakes(out, q, k, v, alignment)));
    }
  }
  SUBCASE("two queries, five keys") {
    const Matrix q2 = q.topRows(2);
    INPUTS(q2, k, v);
    const Matrix top_left = attention_by_loops(q2, k, v, lower_triangle(2, 5, 0), root);
    const Matrix bottom_right = attention_by_loops(q2, k, v, lower_triangle(2, 5, 3), root);
    const Matrix tl = causal_attention(q2, k, v, Alignment::TopLeft);
    CHECK_MESSAGE(near(tl, top_left), said("causal_attention of 2 queries and 5 keys with Alignment::TopLeft must let query i see "
                                           "keys 0..i only", attention_mistakes(tl, q2, k, v, Alignment::TopLeft)));
    const Matrix br = causal_attention(q2, k, v, Alignment::BottomRight);
    CHECK_MESSAGE(near(br, bottom_right), said("causal_attention of 2 queries and 5 keys with Alignment::BottomRight must let query i "
                                               "see keys 0..i + 3 (n_k - n_q = 3), so the last query sees every key",
                                               attention_mistakes(br, q2, k, v, Alignment::BottomRight)));
  }
  SUBCASE("five queries, two keys: bottom-right, the first three see nothing and output zeros") {
    const Matrix k2 = k.topRows(2), v2 = v.topRows(2);
    INPUTS(q, k2, v2);
    const Matrix top_left = attention_by_loops(q, k2, v2, lower_triangle(5, 2, 0), root);
    const Matrix bottom_right = attention_by_loops(q, k2, v2, lower_triangle(5, 2, -3), root);
    const Matrix br = causal_attention(q, k2, v2, Alignment::BottomRight);
    CHECK_MESSAGE(near(br, bottom_right),
                  said("causal_attention of 5 queries and 2 keys with Alignment::BottomRight must let query i see keys j <= i - 3, "
                       "so queries 0..2 see none (zeros, not NaN) and query 4 sees both",
                       attention_mistakes(br, q, k2, v2, Alignment::BottomRight)));
    const Matrix tl = causal_attention(q, k2, v2, Alignment::TopLeft);
    CHECK_MESSAGE(near(tl, top_left), said("causal_attention of 5 queries and 2 keys with Alignment::TopLeft must let query i see "
                                           "keys j <= i, so query 0 sees key 0 alone and queries 1..4 see both",
                                           attention_mistakes(tl, q, k2, v2, Alignment::TopLeft)));
  }
  SUBCASE("decoding one token at a time over a growing cache") {
    // The new token is the last position: bottom-right alignment, one query, t + 1 cached keys.
    const Matrix full = attention_by_loops(q, k, v, lower_triangle(5, 5, 0), root);
    for (Index t = 0; t < 5; ++t) {
      const Matrix query = q.row(t), keys = k.topRows(t + 1), values = v.topRows(t + 1);
      INFO("decoding step t = ", t, " (keys and values 0..t in the cache)");
      INPUTS(query, keys, values);
      const Matrix step = causal_attention(query, keys, values, Alignment::BottomRight);
      CHECK_MESSAGE(near(step, full.row(t)),
                    said("causal_attention of the newest query against the " + std::to_string(t + 1) + " cached keys "
                         "(BottomRight) must equal row " + std::to_string(t) + " of the whole sequence's attention",
                         attention_mistakes(step, query, keys, values, Alignment::BottomRight)));
    }
  }
}

TEST_CASE("4.3 large scores with their maximum in any position do not overflow") {
  // Keys 1e3 long: raw scores up to about 1e6 / sqrt(2), far beyond exp's range, positive and
  // negative, with the largest visible score in a different position for each query. One-hot keys
  // make the expected weights plain: query i = s_i * e_{c(i)} scores s_i / sqrt(2) on the keys
  // along axis c(i) and 0 on the others.
  const double big = 1e3;
  const Matrix k = grid({{big, 0}, {0, big}, {-big, 0}, {0, -big}, {big, 0}});
  const Matrix v = grid({{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {2, 2}});
  const Matrix q = grid({{big, 0}, {0, big}, {-big, 0}, {0, -big}, {-big, 0}});
  for (Alignment alignment : {Alignment::TopLeft, Alignment::BottomRight}) {
    INPUTS(q, k, v, alignment);
    const Matrix out = causal_attention(q, k, v, alignment);
    // Query i sees keys 0..i; the visible key with the largest score is key i itself for i < 4
    // (key 2 for query 2: -1e3 * -1e3; key 3 for query 3), and key 2 for query 4 (q = -e_0).
    const Matrix expected = grid({{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {-1, 0}});
    CHECK_MESSAGE(near(out, expected),
                  said("causal_attention of one-hot keys 1e3 long (scores near 7e5) must give (1, 0), (0, 1), (-1, 0), (0, -1), "
                       "(-1, 0): each query takes the value of its largest visible score, with no NaN",
                       attention_mistakes(out, q, k, v, alignment)));
  }
}

TEST_CASE("4.3 bad input throws ShapeError or ValueError") {
  const Matrix q = Matrix::Ones(4, 3), k = Matrix::Ones(5, 3), v = Matrix::Ones(5, 2);
  // No own error for any bad input is what checking nothing gives; a v with more rows reaching the
  // product while one with fewer is caught is what checking "fewer" alone gives.
  const bool checks_empty = own_error<ShapeError>("causal_attention", [&] { causal_attention(Matrix(0, 3), k, v); });
  const bool checks_finite = own_error<ValueError>("causal_attention", [&] { causal_attention(Matrix::Constant(4, 3, kNaN), k, v); });
  const bool checks_fewer_v = own_error<ShapeError>("causal_attention", [&] { causal_attention(q, k, Matrix::Ones(4, 2)); });
  const std::optional<Named> none = !checks_empty && !checks_finite && !checks_fewer_v ? std::optional<Named>(kNoValidation) : std::nullopt;
  const Why empty(kCheckEmpty, none, none), shape(kCheckShape, none, none), finite(kCheckFinite, none, none);
  // Each dimension empty on its own: n_q, n_k (keys and values), d_k, d_v.
  CHECK_THROWS_CALL(ShapeError, empty, causal_attention, Matrix(0, 3), k, v);
  CHECK_THROWS_CALL(ShapeError, empty, causal_attention, q, Matrix(0, 3), Matrix(0, 2));
  CHECK_THROWS_CALL(ShapeError, empty, causal_attention, Matrix(4, 0), Matrix(5, 0), v);  // d_k = 0
  CHECK_THROWS_CALL(ShapeError, empty, causal_attention, q, k, Matrix(5, 0));
  // k's d_k smaller and larger than q's; v with fewer and with more rows than k; v transposed.
  CHECK_THROWS_CALL(ShapeError, shape, causal_attention, q, Matrix(Matrix::Ones(5, 2)), v);
  CHECK_THROWS_CALL(ShapeError, shape, causal_attention, q, Matrix(Matrix::Ones(5, 4)), v);
  CHECK_THROWS_CALL(ShapeError, shape, causal_attention, q, k, Matrix(Matrix::Ones(4, 2)));
  const Why more_v(kCheckShape, none, none ? none : checks_fewer_v ? std::optional<Named>(kVRowsSmallerOnly) : std::nullopt);
  CHECK_THROWS_CALL(ShapeError, more_v, causal_attention, q, k, Matrix(Matrix::Ones(6, 2)));
  CHECK_THROWS_CALL(ShapeError, shape, causal_attention, q, k, Matrix(Matrix::Ones(2, 5)));
  Matrix bad_q = q, bad_k = k, bad_v = v;
  bad_q(2, 1) = kNaN;
  bad_k(4, 0) = kInf;
  bad_v(0, 1) = -kInf;
  CHECK_THROWS_CALL(ValueError, finite, causal_attention, bad_q, k, v);
  CHECK_THROWS_CALL(ValueError, finite, causal_attention, q, bad_k, v);
  CHECK_THROWS_CALL(ValueError, finite, causal_attention, q, k, bad_v);
}

}  // TEST_SUITE
