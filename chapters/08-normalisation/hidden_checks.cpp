// Chapter 8 hidden checks — graded with checks.cpp, never in the student edition.
//
// The same contract as checks.cpp, on inputs no visible check uses: a submission tuned to the
// visible checks (rescaling a row only when one of its entries is beyond 1e154, as every visible
// row that overflows has one) loses these points. Expected values are the contract's formula in
// long double. Each check has a mistake in bugzoo/hidden/ that passes every visible check and fails
// it, and a label, its doctest description: what a student is shown of it (./workbook grade
// --show-hidden names), which says what it covers and never its input (grading/hidden.py).
#include <doctest/doctest.h>

#include <cmath>

#include "normalisation.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::Parts;
using scalebook::testing::said;
using scalebook::testing::suspect;
namespace ch08 = scalebook::ch08;

namespace {

constexpr Named kSumOverflows{"rms_sum_of_squares_overflows",
                              "the row rescaled only when one of its entries is beyond 1e154: the sum of many finite "
                              "squares overflows too, so rescale whenever the row's largest magnitude is above 1"};

// rms_norm by the contract's formula in long double (no square of a double overflows there);
// with THRESHOLD, a row whose largest magnitude is at most THRESHOLD is computed in double, in its
// own units, as a submission that rescales only beyond that threshold does.
Matrix rms_norm_formula(const Matrix& x, const RowVector& gamma, double eps, double threshold = -1) {
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    if (x.row(i).cwiseAbs().maxCoeff() <= threshold) {
      const double root = std::sqrt(x.row(i).squaredNorm() / static_cast<double>(x.cols()) + eps);
      y.row(i) = (x.row(i) / root).cwiseProduct(gamma);
      continue;
    }
    long double squares = 0;
    for (Index j = 0; j < x.cols(); ++j) squares += static_cast<long double>(x(i, j)) * x(i, j);
    const long double root = std::sqrt(squares / x.cols() + eps);
    for (Index j = 0; j < x.cols(); ++j) y(i, j) = static_cast<double>(x(i, j) / root * gamma(j));
  }
  return y;
}

}  // namespace

TEST_SUITE("08-normalisation") {

TEST_CASE("8.2 rms_norm of 2048 features near 1e153, whose squares are finite but sum beyond the largest double" *
          doctest::description("8.2 every token is normalised, however many features it has and however large they are")) {
  // Row 0: 2048 entries of 1e153 (1 + N(0, 1) / 4): each square is finite (about 1e306) and their
  // sum (about 2e309) is not. Row 1: the same draws times 1e50, beyond 1e154, which every visible
  // check's overflowing rows reach.
  Rng rng(8202);
  Matrix x = (normal_matrix(2, 2048, rng).array() / 4 + 1) * 1e153;
  x.row(1) *= 1e50;
  const RowVector gamma = RowVector::Ones(2048);
  INPUTS(x, gamma);
  const Matrix y = ch08::rms_norm(x, gamma, 1e-5);
  CHECK_MESSAGE(near(y, rms_norm_formula(x, gamma, 1e-5), 1e-12, Parts{"token", 1, nullptr, 0}),
                said("rms_norm of 2 tokens of 2048 features near 1e153 and 1e203 must be finite and equal the formula: "
                     "the sum of the squares overflows even where no single square does",
                     suspect(y, {{kSumOverflows, rms_norm_formula(x, gamma, 1e-5, 1e154)}})));
}

}  // TEST_SUITE
