// Chapter 1 checks — feature scaling.
//
// Every expected value is derived here from its formula (hand-worked examples, closed forms of
// gradient descent on a separable quadratic, explicit loops), never copied from the reference's
// output. Where a classic mistake has a recognisable output, the check computes that output too,
// so that its failure message can name the mistake.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <exception>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "feature_scaling.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::format_number;
using scalebook::testing::format_values;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::thrown_by;
using scalebook::testing::same_values;
using scalebook::testing::suspect;
namespace ch01 = scalebook::ch01;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The classic mistakes, as the failure messages name them.
constexpr char kDdof1[] = "sample standard deviation (ddof = 1, divided by n - 1) instead of the population one (ddof = 0, divided by n)?";
constexpr char kPerSample[] = "statistics per sample (over each row) instead of per feature (over each column)?";
constexpr char kConstant[] = "a constant feature divided by zero (NaN): its scale must be 1?";
constexpr char kOnePass[] = "variance as mean(x^2) - mean(x)^2, which loses every digit to catastrophic cancellation for large values? Subtract the mean first, then square";
constexpr char kFloat[] = "sums kept in a float (about 7 significant digits) instead of a double (about 16)?";
constexpr char kNoHalf[] = "the loss without its 1/2: L = (1/2n) sum r^2, so that its gradient is X^T r / n?";
constexpr char kMultiplied[] = "multiplied by the scale instead of divided by it?";
constexpr char kAllRows[] = "statistics from all rows (train and test together): the test rows leak into the scaling?";
constexpr char kTestRows[] = "statistics fitted on the test rows: the scaling must come from the training rows only?";
constexpr char kNoOneOverN[] = "gradient not divided by n (the sum instead of the mean)?";
constexpr char kManhattan[] = "Manhattan distance (sum of absolute differences) instead of Euclidean?";
constexpr char kTieLargest[] = "a tie between classes broken towards the largest class instead of the smallest?";

constexpr char kThrowsShape[] = "bad shapes must throw ShapeError, with the function's name first";
constexpr char kThrowsValue[] = "NaN, infinity or out-of-range values must throw ValueError, with the function's name first";

using scalebook::testing::from_rows;
using scalebook::testing::row;



// Per-feature mean and standard deviation by definition, dividing by `divisor_offset` less than n.
RowVector column_means(const Matrix& x) {
  RowVector m = RowVector::Zero(x.cols());
  for (Index c = 0; c < x.cols(); ++c) {
    for (Index i = 0; i < x.rows(); ++i) m(c) += x(i, c);
    m(c) /= static_cast<double>(x.rows());
  }
  return m;
}
RowVector column_sds(const Matrix& x, double ddof) {
  const RowVector m = column_means(x);
  RowVector s = RowVector::Zero(x.cols());
  for (Index c = 0; c < x.cols(); ++c) {
    for (Index i = 0; i < x.rows(); ++i) s(c) += (x(i, c) - m(c)) * (x(i, c) - m(c));
    s(c) = std::sqrt(s(c) / (static_cast<double>(x.rows()) - ddof));
  }
  return s;
}

Matrix stack(const Matrix& a, const Matrix& b) {
  Matrix s(a.rows() + b.rows(), a.cols());
  s << a, b;
  return s;
}

Matrix scaled_by(const Matrix& x, const RowVector& mean, const RowVector& scale) {
  Matrix out = x;
  for (Index i = 0; i < x.rows(); ++i)
    for (Index c = 0; c < x.cols(); ++c) out(i, c) = (x(i, c) - mean(c)) / scale(c);
  return out;
}

// Rows drawn from N(mean, sd^2) in every feature.
Matrix gaussian_rows(Index n, Index d, double mean, double sd, std::uint64_t seed) {
  Rng rng(seed);
  return (normal_matrix(n, d, rng).array() * sd + mean).matrix();
}

// "looks like a known mistake: float" when actual agrees with expected to a float's precision
// only (a relative error between 1e-12 and 1e-5), "" otherwise.
std::string float_suspect(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols() || !actual.allFinite()) return "";
  double worst = 0.0;
  for (Index i = 0; i < actual.rows(); ++i)
    for (Index j = 0; j < actual.cols(); ++j)
      worst = std::max(worst, std::abs(actual(i, j) - expected(i, j)) / std::max(std::abs(expected(i, j)), 1e-300));
  return worst > 1e-12 && worst < 1e-5 ? std::string("looks like a known mistake: ") + kFloat : "";
}

}  // namespace

TEST_SUITE("01-feature-scaling") {

// ---- 1.1 fit_scaling ------------------------------------------------------------------------

TEST_CASE("1.1 mean and population standard deviation of a hand-worked example") {
  // Feature 0: 1 2 3 4, mean 2.5, squared deviations 2.25 0.25 0.25 2.25, sum 5: sd = sqrt(5/4).
  // Feature 1: 10 10 30 30, mean 20, every deviation 10: sd = 10.
  const Matrix train = from_rows(4, 2, {1, 10, 2, 10, 3, 30, 4, 30});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.mean, row({2.5, 20})), said("fit_scaling of the 4 x 2 example worked in the comment gave the wrong means",
                                                suspect(s.mean, {{kPerSample, row({5.5, 6, 16.5, 17})}})));
  CHECK_MESSAGE(near(s.scale, row({std::sqrt(1.25), 10})),
                said("fit_scaling of the 4 x 2 example worked in the comment gave the wrong scales",
                     suspect(s.scale, {{kDdof1, row({std::sqrt(5.0 / 3.0), std::sqrt(400.0 / 3.0)})}})));
}

TEST_CASE("1.1 statistics are per feature on a square matrix too") {
  // 3 x 3, so that per-row statistics have the right length: only the values tell them apart.
  const Matrix train = from_rows(3, 3, {1, 0, 5, 2, 0, 7, 6, 3, 0});
  const ch01::Scaling s = ch01::fit_scaling(train);
  REQUIRE_MESSAGE(s.mean.cols() == 3, "fit_scaling of a 3 x 3 matrix must give 3 means, one per feature (column), got " << s.mean.cols());
  CHECK_MESSAGE(near(s.mean, column_means(train)),
                said("fit_scaling of a 3 x 3 matrix gave means that are not its column means",
                     suspect(s.mean, {{kPerSample, column_means(Matrix(train.transpose()))}})));
  CHECK_MESSAGE(near(s.scale, column_sds(train, 0.0)),
                said("fit_scaling of a 3 x 3 matrix gave scales that are not its columns' standard deviations",
                     suspect(s.scale, {{kPerSample, column_sds(Matrix(train.transpose()), 0.0)},
                                       {kDdof1, column_sds(train, 1.0)}})));
}

TEST_CASE("1.1 a constant feature gets scale 1 and a single row is constant everywhere") {
  const Matrix train = from_rows(3, 2, {5, 1, 5, 2, 5, 3});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(s.scale.allFinite(), kConstant);
  CHECK_MESSAGE(near(s.scale, row({1, std::sqrt(2.0 / 3.0)})), kConstant);
  const ch01::Scaling one = ch01::fit_scaling(from_rows(1, 3, {-1, 0, 7}));  // n = 1: sd 0 everywhere
  CHECK_MESSAGE(near(one.scale, row({1, 1, 1})), kConstant);
  CHECK_MESSAGE(near(one.mean, row({-1, 0, 7})), "fit_scaling of the single row (-1, 0, 7) must give that row as the means");
}

TEST_CASE("1.1 large values keep their digits") {
  // 1e9 + (1, 2, 3, 4): sd = sqrt(1.25) exactly as for 1 2 3 4. Subtracting the mean first is
  // exact here (the deviations are small integers plus halves); mean(x^2) - mean(x)^2 subtracts
  // two numbers near 1e18 whose spacing is 128, and loses every digit of 1.25.
  const Matrix train = from_rows(4, 1, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.mean(0), 1e9 + 2.5, 0.0),
                said("fit_scaling of one feature 1e9 + (1, 2, 3, 4) gave the mean " + format_number(s.mean(0)) +
                         ", not 1000000002.5",
                     float_suspect(s.mean, row({1e9 + 2.5}))));
  CHECK_MESSAGE(std::abs(s.scale(0) - std::sqrt(1.25)) < 1e-9,
                said("fit_scaling of one feature 1e9 + (1, 2, 3, 4) gave the scale " + format_number(s.scale(0)) +
                         ", not sqrt(1.25) = " + format_number(std::sqrt(1.25)) + " as for 1, 2, 3, 4",
                     std::string("looks like a known mistake: ") + (float_suspect(s.mean, row({1e9 + 2.5})).empty() ? kOnePass : kFloat)));
}

TEST_CASE("1.1 large values with fractional deviations keep their digits") {
  // 1e9 + N(0, 1) in 20 rows: the deviations from the mean are not small integers, so any form
  // that multiplies numbers near 1e9 before the sum cancels (mean(x^2) - mean(x)^2, or
  // (x + m)(x - m)) leaves an error near 1e-7 of the scale; deviations squared stay near 1e-16.
  const Matrix train = gaussian_rows(20, 1, 1e9, 1.0, 16);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector sd = column_sds(train, 0.0);
  CHECK_MESSAGE(near(s.scale, sd, 1e-9),
                said("fit_scaling of 20 values 1e9 + N(0, 1) gave the scale " + format_number(s.scale(0)) + ", not " +
                         format_number(sd(0)),
                     std::string("looks like a known mistake: ") + kOnePass));
}

TEST_CASE("1.1 a tiny but non-zero spread is kept: only a constant feature gets scale 1") {
  // 1e-12 (1, 2, 3, 4): sd = 1e-12 sqrt(1.25), not 0. A threshold such as sd > 1e-9 would replace
  // it by 1 and leave the feature unscaled.
  const ch01::Scaling s = ch01::fit_scaling(from_rows(4, 1, {1e-12, 2e-12, 3e-12, 4e-12}));
  CHECK_MESSAGE(near(s.scale, row({1e-12 * std::sqrt(1.25)}), 1e-9),
                "fit_scaling of 1e-12 (1, 2, 3, 4) gave the scale " << format_number(s.scale(0))
                    << ", not 1e-12 sqrt(1.25): only a standard deviation of exactly 0 becomes 1, not a small one");
}

TEST_CASE("1.1 ordinary data keeps a double's digits") {
  // 50 rows of N(3, 2^2) in 3 features: every statistic to 1e-12 relative. Sums kept in a float
  // agree to about 1e-7 only.
  const Matrix train = gaussian_rows(50, 3, 3.0, 2.0, 15);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector mean = column_means(train), sd = column_sds(train, 0.0);
  CHECK_MESSAGE(near(s.mean, mean), said("fit_scaling of 50 rows drawn from N(3, 4) gave means that differ from the column means",
                                         float_suspect(s.mean, mean)));
  CHECK_MESSAGE(near(s.scale, sd), said("fit_scaling of 50 rows drawn from N(3, 4) gave scales that differ from the population standard deviations",
                                        float_suspect(s.scale, sd).empty() ? suspect(s.scale, {{kDdof1, column_sds(train, 1.0)}})
                                                                           : float_suspect(s.scale, sd)));
}

TEST_CASE("1.1 empty or non-finite training rows throw") {
  CHECK_THROWS_AS(ch01::fit_scaling(Matrix(0, 3)), ShapeError);
  CHECK_THROWS_AS(ch01::fit_scaling(Matrix(3, 0)), ShapeError);
  CHECK_THROWS_TYPED(ch01::fit_scaling(Matrix(0, 3)), ShapeError, "fit_scaling", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::fit_scaling(Matrix(3, 0)), ShapeError, "fit_scaling", kThrowsShape);
  Matrix bad = Matrix::Ones(3, 2);
  bad(2, 1) = kNaN;
  CHECK_THROWS_AS(ch01::fit_scaling(bad), ValueError);
  CHECK_THROWS_TYPED(ch01::fit_scaling(bad), ValueError, "fit_scaling", kThrowsValue);
  bad(2, 1) = -kInf;
  CHECK_THROWS_TYPED(ch01::fit_scaling(bad), ValueError, "fit_scaling", kThrowsValue);
}

// ---- 1.2 apply_scaling ----------------------------------------------------------------------

TEST_CASE("1.2 each entry becomes its feature's x minus mean over scale") {
  const ch01::Scaling s{row({1, -2, 100}), row({2, 0.5, 1})};
  const Matrix x = from_rows(2, 3, {3, -2, 100, 0, 0, 101});
  // (3-1)/2 = 1, (-2+2)/0.5 = 0, 0; (0-1)/2 = -0.5, (0+2)/0.5 = 4, 1
  const Matrix expected = from_rows(2, 3, {1, 0, 0, -0.5, 4, 1});
  const Matrix z = ch01::apply_scaling(x, s);
  const Matrix multiplied = from_rows(2, 3, {4, 0, 0, -2, 1, 1});
  CHECK_MESSAGE(near(z, expected), said("apply_scaling of the 2 x 3 example worked in the comment is wrong",
                                      suspect(z, {{kMultiplied, multiplied}})));
}

TEST_CASE("1.2 rows far from the training statistics are scaled the same way") {
  const ch01::Scaling s{row({0, 0}), row({1, 4})};
  const Matrix x = from_rows(1, 2, {1e6, -4e6});
  CHECK_MESSAGE(near(ch01::apply_scaling(x, s), from_rows(1, 2, {1e6, -1e6})), "apply_scaling of (1e6, -4e6) with means (0, 0) and scales (1, 4) must give (1e6, -1e6)");
}

TEST_CASE("1.2 any positive scale is valid, however small") {
  // A feature measured in small units has a small standard deviation: 1e-12 is a scale like any
  // other, and only a scale of 0 or below is invalid. A threshold above 0 rejects such a feature.
  const ch01::Scaling s{row({1e-12, 0}), row({1e-12, 1})};
  const Matrix x = from_rows(1, 2, {3e-12, 5});
  Matrix z;
  const std::string thrown = thrown_by([&] { z = ch01::apply_scaling(x, s); });
  REQUIRE_MESSAGE(thrown.empty(), "apply_scaling with the scales (1e-12, 1) threw \"" << thrown << "\": every scale above 0 "
                                  "is valid, however small; look for a threshold above 0 in your scale check");
  CHECK_MESSAGE(near(z, from_rows(1, 2, {2, 5})), "apply_scaling of (3e-12, 5) with means (1e-12, 0) and scales (1e-12, 1) "
                                                  "must give (2, 5)");
}

TEST_CASE("1.2 mismatched shapes, empty rows and bad scalings throw") {
  const ch01::Scaling s{row({0, 0}), row({1, 1})};
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 3), s), ShapeError, "apply_scaling", kThrowsShape);  // more columns
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 1), s), ShapeError, "apply_scaling", kThrowsShape);  // fewer
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix(0, 2), s), ShapeError, "apply_scaling", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix(2, 0), s), ShapeError, "apply_scaling", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, 1, 1})}), ShapeError, "apply_scaling", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, 0})}), ValueError, "apply_scaling", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, -1e-300})}), ValueError, "apply_scaling", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, -1e300})}), ValueError, "apply_scaling", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::apply_scaling(Matrix::Ones(2, 2), ch01::Scaling{row({kNaN, 0}), row({1, 1})}), ValueError, "apply_scaling", kThrowsValue);
  Matrix bad = Matrix::Ones(2, 2);
  bad(0, 0) = kInf;
  CHECK_THROWS_TYPED(ch01::apply_scaling(bad, s), ValueError, "apply_scaling", kThrowsValue);
}

// ---- 1.3 scale_train_test -------------------------------------------------------------------

TEST_CASE("1.3 train and test from very different distributions: no leakage") {
  // Train ~ N(0, 1), test ~ N(100, 10^2), 3 features. Fitted on the training rows, the scaled
  // test rows sit near 100 standard deviations away; any statistic that saw the test rows
  // (all rows, or the test rows alone) moves them towards 0.
  const Matrix train = gaussian_rows(40, 3, 0.0, 1.0, 11), test = gaussian_rows(10, 3, 100.0, 10.0, 12);
  const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
  const RowVector mean = column_means(train), sd = column_sds(train, 0.0);
  const Matrix all = stack(train, test);
  const RowVector all_mean = column_means(all), all_sd = column_sds(all, 0.0);
  const RowVector test_mean = column_means(test), test_sd = column_sds(test, 0.0);
  CHECK_MESSAGE(near(split.test, scaled_by(test, mean, sd), 1e-10),
                said("scale_train_test's test rows are not scaled with the training rows' statistics",
                     suspect(split.test, {{kAllRows, scaled_by(test, all_mean, all_sd)},
                                          {kTestRows, scaled_by(test, test_mean, test_sd)}})));
  CHECK_MESSAGE(near(split.train, scaled_by(train, mean, sd), 1e-10),
                said("scale_train_test's training rows are not scaled with their own statistics",
                     suspect(split.train, {{kAllRows, scaled_by(train, all_mean, all_sd)},
                                           {kTestRows, scaled_by(train, test_mean, test_sd)}})));
  CHECK_MESSAGE(near(split.scaling.mean, mean, 1e-10),
                said("scale_train_test's means are not the training rows' means",
                     suspect(split.scaling.mean, {{kAllRows, all_mean}, {kTestRows, test_mean}})));
  CHECK_MESSAGE(near(split.scaling.scale, sd, 1e-10), said("scale_train_test's scales are not the training rows' standard deviations", suspect(split.scaling.scale, {{kAllRows, all_sd}, {kTestRows, test_sd}})));
}

TEST_CASE("1.3 the scaled training rows have mean 0 and standard deviation 1") {
  const Matrix train = gaussian_rows(25, 4, 50.0, 7.0, 13), test = gaussian_rows(5, 4, 0.0, 1.0, 14);
  const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
  CHECK_MESSAGE(near(column_means(split.train), RowVector::Zero(4), 1e-12), "scale_train_test's scaled training rows must have mean 0 in every feature");
  CHECK_MESSAGE(near(column_sds(split.train, 0.0), RowVector::Ones(4), 1e-12), "scale_train_test's scaled training rows must have standard deviation 1 in every feature");
}

TEST_CASE("1.3 empty or mismatched splits and NaN throw") {
  const Matrix ok = Matrix::Ones(3, 2);
  CHECK_THROWS_TYPED(ch01::scale_train_test(Matrix(0, 2), ok), ShapeError, "scale_train_test", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::scale_train_test(ok, Matrix(0, 2)), ShapeError, "scale_train_test", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::scale_train_test(ok, Matrix(3, 0)), ShapeError, "scale_train_test", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::scale_train_test(ok, Matrix::Ones(3, 3)), ShapeError, "scale_train_test", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::scale_train_test(ok, Matrix::Ones(3, 1)), ShapeError, "scale_train_test", kThrowsShape);
  Matrix bad = ok;
  bad(1, 1) = kNaN;
  CHECK_THROWS_TYPED(ch01::scale_train_test(ok, bad), ValueError, "scale_train_test", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::scale_train_test(bad, ok), ValueError, "scale_train_test", kThrowsValue);
}

// ---- 1.4 gradient_descent -------------------------------------------------------------------

// x = (-1, 1), y = (-2, 2): the optimum is w = 2, b = 0, and the loss is separable with curvature
// 1 in w and in b. From w = 0, a step of size lr gives w_t = 2 (1 - (1 - lr)^t) and g_t = w_t - 2,
// so |g_t| = 2 (1 - lr)^t and L_t = (w_t - 2)^2 / 2. With lr = 1/2 every quantity is a power of 2:
// exact in floating point, so iteration counts can be checked exactly.
TEST_CASE("1.4 iterations, weights and losses of a hand-worked descent") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-3, 100);
  const std::string on = "gradient_descent on x = (-1, 1), y = (-2, 2), lr 0.5, tolerance 1e-3";
  // 2 * 0.5^t <= 1e-3 first at t = 11 (2^-10 = 0.000977).
  CHECK_MESSAGE(r.iterations == 11, on << " made " << r.iterations << " updates, expected 11 (|g| = 2 * 0.5^t first reaches 1e-3 at t = 11)");
  CHECK_MESSAGE(r.converged, on << " did not report convergence");
  CHECK_MESSAGE(r.weights(0) == 2.0 - std::ldexp(1.0, -10), on << " ended with w = " << format_number(r.weights(0)) << ", expected 2 - 2^-10 = " << format_number(2.0 - std::ldexp(1.0, -10)));
  CHECK_MESSAGE(r.bias == 0.0, on << " ended with b = " << format_number(r.bias) << ", expected 0 (the data are symmetric)");
  // The loss (1/2n) sum r^2 before update t is (w_t - 2)^2 / 2 = 2 * 4^-t.
  std::vector<double> expected, doubled;
  for (int t = 0; t <= 11; ++t) {
    expected.push_back(2.0 * std::ldexp(1.0, -2 * t));
    doubled.push_back(4.0 * std::ldexp(1.0, -2 * t));
  }
  const bool no_half = r.loss.size() == doubled.size() && same_values(r.loss, doubled);
  CHECK_MESSAGE(same_values(r.loss, expected),
                said(on + ": the recorded losses are wrong", no_half ? std::string("looks like a known mistake: ") + kNoHalf : ""));
}

TEST_CASE("1.4 the tolerance just inside and just outside") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const double at_11 = std::ldexp(1.0, -10);  // |g| after 11 updates, exactly
  CHECK_MESSAGE(ch01::gradient_descent(x, y, 0.5, at_11, 100).iterations == 11, "with tolerance 2^-10, |g| after 11 updates equals it exactly and must stop there: the test is |g| <= tolerance");
  CHECK_MESSAGE(ch01::gradient_descent(x, y, 0.5, std::nextafter(at_11, 0.0), 100).iterations == 12, "with a tolerance just below 2^-10, |g| after 11 updates is just outside it: 12 updates");
  CHECK_MESSAGE(ch01::gradient_descent(x, y, 0.5, 2.0, 100).iterations == 0, "with tolerance 2, the starting gradient |g_0| = 2 already meets it: 0 updates");
}

TEST_CASE("1.4 gradients are means over the rows and the bias is learned") {
  // Four rows x = (-1, -1, 1, 1), y = 2x + 3: optimum w = 2, b = 3, both curvatures 1. The mean
  // gradient with lr = 0.5 halves the error per step; a summed gradient (4 times larger) would
  // overshoot to -1 times the error and never converge.
  const Matrix x = from_rows(4, 1, {-1, -1, 1, 1});
  Vector y(4);
  y << 1, 1, 5, 5;
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-9, 200);
  const std::string on = "gradient_descent on x = (-1, -1, 1, 1), y = 2x + 3, lr 0.5";
  CHECK_MESSAGE(r.converged, on << " did not converge in 200 steps (losses " << format_values(r.loss)
                                << ") | looks like a known mistake: " << kNoOneOverN);
  // |g_t| = sqrt(2^2 + 3^2) 2^-t <= 1e-9 first at t = 32.
  CHECK_MESSAGE(r.iterations == 32, on << " made " << r.iterations << " updates, expected 32 | looks like a known mistake: " << kNoOneOverN);
  CHECK_MESSAGE(std::abs(r.weights(0) - 2.0) < 1e-9, on << " ended with w = " << format_number(r.weights(0)) << ", expected 2");
  CHECK_MESSAGE(std::abs(r.bias - 3.0) < 1e-9, on << " ended with b = " << format_number(r.bias) << ", expected 3: is the bias learned?");
}

TEST_CASE("1.4 two features reach the least-squares solution") {
  Rng rng(21);
  const Matrix x = normal_matrix(30, 2, rng);
  Vector y(30);
  for (Index i = 0; i < 30; ++i) y(i) = 1.5 * x(i, 0) - 0.5 * x(i, 1) + 0.25 + 0.1 * rng.normal();
  // The normal equations of [X 1]: solved independently.
  Matrix a(30, 3);
  a << x, Vector::Ones(30);
  const Vector solution = (a.transpose() * a).ldlt().solve(a.transpose() * y);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-10, 10000);
  REQUIRE_MESSAGE(r.converged, "gradient_descent on 30 rows of two features with lr 0.5 did not converge in 10000 steps");
  // The gradient is H (theta - theta*) with H = [X 1]^T [X 1] / n, so |theta - theta*| <=
  // |g| / lambda_min(H) <= 1e-10 / lambda_min (plus rounding, hence the factor 2).
  const double lambda_min = Eigen::SelfAdjointEigenSolver<Matrix>(a.transpose() * a / 30.0).eigenvalues().minCoeff();
  REQUIRE_MESSAGE(lambda_min > 0.1, "the check's own data are badly conditioned (lambda_min " << lambda_min << ")");
  const double bound = 2e-10 / lambda_min;
  CHECK_MESSAGE(std::abs(r.weights(0) - solution(0)) < bound, "w_0 = " << format_number(r.weights(0)) << " is not the least-squares " << format_number(solution(0)));
  CHECK_MESSAGE(std::abs(r.weights(1) - solution(1)) < bound, "w_1 = " << format_number(r.weights(1)) << " is not the least-squares " << format_number(solution(1)));
  CHECK_MESSAGE(std::abs(r.bias - solution(2)) < bound, "b = " << format_number(r.bias) << " is not the least-squares " << format_number(solution(2)));
  // The loss never rises with a step below 2 / lambda_max (up to rounding near the optimum).
  for (std::size_t t = 1; t < r.loss.size(); ++t) REQUIRE_MESSAGE(r.loss[t] <= r.loss[t - 1] * (1.0 + 1e-12), "the loss rose from step " << t - 1 << " to step " << t << " with lr 0.5: " << format_values(r.loss));
}

TEST_CASE("1.4 max_iterations reached and a diverging step stop unconverged") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const ch01::DescentResult capped = ch01::gradient_descent(x, y, 0.5, 1e-12, 5);
  CHECK_MESSAGE(!capped.converged, "gradient_descent stopped by max_iterations = 5 must report converged = false");
  CHECK_MESSAGE(capped.iterations == 5, "gradient_descent with max_iterations = 5 made " << capped.iterations << " updates, expected 5");
  CHECK_MESSAGE(capped.loss.size() == 6, "5 updates record 6 losses (one before each update and one after the last), got " << capped.loss.size());
  const ch01::DescentResult none = ch01::gradient_descent(x, y, 0.5, 1e-12, 0);
  CHECK_MESSAGE(none.iterations == 0, "gradient_descent with max_iterations = 0 made " << none.iterations << " updates");
  CHECK_MESSAGE(none.loss.size() == 1, "max_iterations = 0 still records the starting loss: 1 loss, got " << none.loss.size());
  // lr = 10: w_t - 2 = -2 (-9)^t grows until the loss overflows, long before 100000 steps.
  const ch01::DescentResult diverged = ch01::gradient_descent(x, y, 10.0, 1e-3, 100000);
  CHECK_MESSAGE(!diverged.converged, "gradient_descent with lr 10 diverges and must report converged = false");
  CHECK_MESSAGE(diverged.iterations < 1000, "gradient_descent with lr 10 made " << diverged.iterations << " updates: it must stop once the loss is not finite");
}

TEST_CASE("1.4 any positive learning rate and tolerance are valid, however small") {
  // A learning rate of 1e-12 barely moves w, but it is a learning rate: only 0 or below is invalid.
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  ch01::DescentResult r;
  const std::string thrown = thrown_by([&] { r = ch01::gradient_descent(x, y, 1e-12, 1e-300, 3); });
  REQUIRE_MESSAGE(thrown.empty(), "gradient_descent with learning_rate 1e-12 and tolerance 1e-300 threw \"" << thrown
                                  << "\": every value above 0 is valid, however small; look for a threshold above 0 "
                                     "in your argument checks");
  CHECK_MESSAGE(r.iterations == 3, "gradient_descent on x = (-1, 1), y = (-2, 2) with learning_rate 1e-12 must make all "
                                   "3 updates allowed (|g| stays near 2, far above the tolerance), made " << r.iterations);
  CHECK_MESSAGE(!r.converged, "gradient_descent with learning_rate 1e-12 cannot converge in 3 updates: |g| stays near 2");
}

TEST_CASE("1.4 bad input throws") {
  const Matrix x = Matrix::Ones(3, 2);
  const Vector y = Vector::Ones(3);
  CHECK_THROWS_TYPED(ch01::gradient_descent(Matrix(0, 2), Vector(0), 0.1, 1e-3, 10), ShapeError, "gradient_descent", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::gradient_descent(Matrix(3, 0), y, 0.1, 1e-3, 10), ShapeError, "gradient_descent", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, Vector::Ones(4), 0.1, 1e-3, 10), ShapeError, "gradient_descent", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, Vector::Ones(2), 0.1, 1e-3, 10), ShapeError, "gradient_descent", kThrowsShape);
  Matrix bad = x;
  bad(0, 1) = kNaN;
  CHECK_THROWS_TYPED(ch01::gradient_descent(bad, y, 0.1, 1e-3, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, 0.0, 1e-3, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, -1e-300, 1e-3, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, -1e300, 1e-3, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, kInf, 1e-3, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, 0.1, -1e-300, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, 0.1, 0.0, 10), ValueError, "gradient_descent", kThrowsValue);
  CHECK_THROWS_TYPED(ch01::gradient_descent(x, y, 0.1, 1e-3, -1), ValueError, "gradient_descent", kThrowsValue);
}

// ---- 1.5 knn_predict ------------------------------------------------------------------------

TEST_CASE("1.5 the nearest neighbours vote, by Euclidean distance") {
  // Test point at the origin. A = (3, 0) class 0: Euclidean 3, Manhattan 3.
  // B = (2, 2) class 1: Euclidean 2.83, Manhattan 4. C = (0, 5) class 0: 5 and 5.
  const Matrix train = from_rows(3, 2, {3, 0, 2, 2, 0, 5});
  Vector labels(3);
  labels << 0, 1, 0;
  const Matrix test = from_rows(1, 2, {0, 0});
  const Vector k1 = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(k1(0) == 1.0, kManhattan);
  CHECK_MESSAGE(ch01::knn_predict(train, labels, test, 3)(0) == 0.0, "with k = 3 the neighbours' classes are 0, 1, 0: class 0 wins two to one");
}

TEST_CASE("1.5 ties: equal distances by index, equal votes to the smallest class") {
  // Test at 0 on a line; train at -1 (class 2), +1 (class 1), +3 (class 0), -3 (class 1).
  const Matrix train = from_rows(4, 1, {-1, 1, 3, -3});
  Vector labels(4);
  labels << 2, 1, 0, 1;
  const Matrix test = from_rows(1, 1, {0});
  CHECK_MESSAGE(ch01::knn_predict(train, labels, test, 1)(0) == 2.0, "with k = 1, the training rows -1 and +1 are equally near 0: the lower index (row 0, class 2) comes first");
  const Vector k2 = ch01::knn_predict(train, labels, test, 2);  // votes: class 2 and class 1
  CHECK_MESSAGE(k2(0) == 1.0, kTieLargest);
  const Vector k4 = ch01::knn_predict(train, labels, test, 4);  // 2, 1, 0, 1: class 1 has two
  CHECK_MESSAGE(k4(0) == 1.0, "with k = 4 the classes are 2, 1, 0, 1: class 1 has two votes, got " << k4(0));
}

TEST_CASE("1.5 one prediction per test row and k equal to the training rows") {
  const Matrix train = from_rows(5, 1, {0, 1, 2, 10, 11});
  Vector labels(5);
  labels << 0, 0, 0, 1, 1;
  const Matrix test = from_rows(3, 1, {0.5, 10.4, 6.5});
  Vector expected(3);
  expected << 0, 1, 1;  // 6.5 is nearer to 10 (3.5) than to 2 (4.5)
  const Vector p = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(near(p, expected), "knn_predict with k = 1 must give one class per test row: 0, 1, 1 (6.5 is nearer to 10 than to 2)");
  CHECK_MESSAGE(near(ch01::knn_predict(train, labels, test, 5), Vector::Zero(3)), "with k = 5 every training row votes for every test row: class 0 wins 3 to 2");
}

TEST_CASE("1.5 the largest-range feature dominates unscaled distances") {
  // Feature 0 separates the classes (0 vs 1); feature 1 is noise a thousand times larger.
  const Matrix train = from_rows(4, 2, {0, 1000, 0, 3000, 1, 1100, 1, 2900});
  Vector labels(4);
  labels << 0, 0, 1, 1;
  const Matrix test = from_rows(1, 2, {0, 1120});
  CHECK_MESSAGE(ch01::knn_predict(train, labels, test, 1)(0) == 1.0, "unscaled, the nearest training row to (0, 1120) is (1, 1100), of class 1: the distance is Euclidean on the raw values");
}

TEST_CASE("1.5 k out of range, bad shapes and bad classes throw") {
  const Matrix train = Matrix::Zero(3, 2), test = Matrix::Zero(1, 2);
  const Vector labels = Vector::Zero(3);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, test, 0), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, test, -1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, test, 4), ShapeError, "knn_predict", kThrowsShape);  // k > n
  CHECK_THROWS_TYPED(ch01::knn_predict(Matrix(0, 2), Vector(0), test, 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, Matrix(0, 2), 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(Matrix(3, 0), labels, Matrix(1, 0), 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, Matrix::Zero(1, 3), 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, Matrix::Zero(1, 1), 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, Vector::Zero(4), test, 1), ShapeError, "knn_predict", kThrowsShape);
  CHECK_THROWS_TYPED(ch01::knn_predict(train, Vector::Zero(2), test, 1), ShapeError, "knn_predict", kThrowsShape);
  Vector bad_labels = labels;
  bad_labels(1) = 0.5;
  CHECK_THROWS_TYPED(ch01::knn_predict(train, bad_labels, test, 1), ValueError, "knn_predict", kThrowsValue);
  bad_labels(1) = -1e-300;
  CHECK_THROWS_TYPED(ch01::knn_predict(train, bad_labels, test, 1), ValueError, "knn_predict", kThrowsValue);
  bad_labels(1) = -1e300;
  CHECK_THROWS_TYPED(ch01::knn_predict(train, bad_labels, test, 1), ValueError, "knn_predict", kThrowsValue);
  // A bad class in the first or the last row: the check must visit every label.
  for (Index at : {Index{0}, Index{2}}) {
    Vector edge = labels;
    edge(at) = 0.5;
    CHECK_THROWS_TYPED(ch01::knn_predict(train, edge, test, 1), ValueError, "knn_predict",
                       at == 0 ? "a class of 0.5 in train_y's first row must throw ValueError: does your check of the "
                                 "classes start at row 0?"
                               : "a class of 0.5 in train_y's last row must throw ValueError: does your check of the "
                                 "classes reach the last row?");
  }
  Matrix bad = test;
  bad(0, 0) = kNaN;
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, bad, 1), ValueError, "knn_predict", kThrowsValue);
}

}  // TEST_SUITE
