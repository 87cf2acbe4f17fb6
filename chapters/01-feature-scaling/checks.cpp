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

#include "feature_scaling.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::near;
using scalebook::testing::suspect;
namespace ch01 = scalebook::ch01;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The classic mistakes, as the failure messages name them.
constexpr char kDdof1[] = "sample standard deviation (ddof = 1, divided by n - 1) instead of the population one (ddof = 0, divided by n)?";
constexpr char kPerSample[] = "statistics per sample (over each row) instead of per feature (over each column)?";
constexpr char kConstant[] = "a constant feature divided by zero (NaN): its scale must be 1?";
constexpr char kOnePass[] = "variance as mean(x^2) - mean(x)^2: catastrophic cancellation for large values? Subtract the mean first";
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

std::string vector_text(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += std::to_string(x) + " ";
  return s;
}

}  // namespace

TEST_SUITE("01-feature-scaling") {

// ---- 1.1 fit_scaling ------------------------------------------------------------------------

TEST_CASE("1.1 mean and population standard deviation of a hand-worked example") {
  // Feature 0: 1 2 3 4, mean 2.5, squared deviations 2.25 0.25 0.25 2.25, sum 5: sd = sqrt(5/4).
  // Feature 1: 10 10 30 30, mean 20, every deviation 10: sd = 10.
  const Matrix train = from_rows(4, 2, {1, 10, 2, 10, 3, 30, 4, 30});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.mean, row({2.5, 20})), suspect(s.mean, {{kPerSample, row({5.5, 6, 16.5, 17})}}));
  CHECK_MESSAGE(near(s.scale, row({std::sqrt(1.25), 10})),
                suspect(s.scale, {{kDdof1, row({std::sqrt(5.0 / 3.0), std::sqrt(400.0 / 3.0)})}}));
}

TEST_CASE("1.1 statistics are per feature on a square matrix too") {
  // 3 x 3, so that per-row statistics have the right length: only the values tell them apart.
  const Matrix train = from_rows(3, 3, {1, 0, 5, 2, 0, 7, 6, 3, 0});
  const ch01::Scaling s = ch01::fit_scaling(train);
  REQUIRE(s.mean.cols() == 3);
  CHECK_MESSAGE(near(s.mean, column_means(train)),
                suspect(s.mean, {{kPerSample, column_means(Matrix(train.transpose()))}}));
  CHECK_MESSAGE(near(s.scale, column_sds(train, 0.0)),
                suspect(s.scale, {{kPerSample, column_sds(Matrix(train.transpose()), 0.0)},
                                  {kDdof1, column_sds(train, 1.0)}}));
}

TEST_CASE("1.1 a constant feature gets scale 1 and a single row is constant everywhere") {
  const Matrix train = from_rows(3, 2, {5, 1, 5, 2, 5, 3});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(s.scale.allFinite(), kConstant);
  CHECK_MESSAGE(near(s.scale, row({1, std::sqrt(2.0 / 3.0)})), kConstant);
  const ch01::Scaling one = ch01::fit_scaling(from_rows(1, 3, {-1, 0, 7}));  // n = 1: sd 0 everywhere
  CHECK_MESSAGE(near(one.scale, row({1, 1, 1})), kConstant);
  CHECK(near(one.mean, row({-1, 0, 7})));
}

TEST_CASE("1.1 large values keep their digits") {
  // 1e9 + (1, 2, 3, 4): sd = sqrt(1.25) exactly as for 1 2 3 4. Subtracting the mean first is
  // exact here (the deviations are small integers plus halves); mean(x^2) - mean(x)^2 subtracts
  // two numbers near 1e18 whose spacing is 128, and loses every digit of 1.25.
  const Matrix train = from_rows(4, 1, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4});
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK(s.mean(0) == 1e9 + 2.5);
  CHECK_MESSAGE(std::abs(s.scale(0) - std::sqrt(1.25)) < 1e-9, kOnePass << " got scale " << s.scale(0));
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
  CHECK_MESSAGE(near(z, expected), suspect(z, {{kMultiplied, multiplied}}));
}

TEST_CASE("1.2 rows far from the training statistics are scaled the same way") {
  const ch01::Scaling s{row({0, 0}), row({1, 4})};
  const Matrix x = from_rows(1, 2, {1e6, -4e6});
  CHECK(near(ch01::apply_scaling(x, s), from_rows(1, 2, {1e6, -1e6})));
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
                suspect(split.test, {{kAllRows, scaled_by(test, all_mean, all_sd)},
                                     {kTestRows, scaled_by(test, test_mean, test_sd)}}));
  CHECK_MESSAGE(near(split.train, scaled_by(train, mean, sd), 1e-10),
                suspect(split.train, {{kAllRows, scaled_by(train, all_mean, all_sd)},
                                      {kTestRows, scaled_by(train, test_mean, test_sd)}}));
  CHECK_MESSAGE(near(split.scaling.mean, mean, 1e-10), suspect(split.scaling.mean, {{kAllRows, all_mean}, {kTestRows, test_mean}}));
  CHECK(near(split.scaling.scale, sd, 1e-10));
}

TEST_CASE("1.3 the scaled training rows have mean 0 and standard deviation 1") {
  const Matrix train = gaussian_rows(25, 4, 50.0, 7.0, 13), test = gaussian_rows(5, 4, 0.0, 1.0, 14);
  const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
  CHECK(near(column_means(split.train), RowVector::Zero(4), 1e-12));
  CHECK(near(column_sds(split.train, 0.0), RowVector::Ones(4), 1e-12));
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
  // 2 * 0.5^t <= 1e-3 first at t = 11 (2^-10 = 0.000977).
  CHECK_MESSAGE(r.iterations == 11, "iterations " << r.iterations << ", expected 11");
  CHECK(r.converged);
  CHECK(r.weights(0) == 2.0 - std::ldexp(1.0, -10));
  CHECK(r.bias == 0.0);
  REQUIRE(r.loss.size() == 12);
  for (int t = 0; t <= 11; ++t) CHECK(r.loss[static_cast<std::size_t>(t)] == 2.0 * std::ldexp(1.0, -2 * t));
}

TEST_CASE("1.4 the tolerance just inside and just outside") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const double at_11 = std::ldexp(1.0, -10);  // |g| after 11 updates, exactly
  CHECK(ch01::gradient_descent(x, y, 0.5, at_11, 100).iterations == 11);                    // |g| <= tol
  CHECK(ch01::gradient_descent(x, y, 0.5, std::nextafter(at_11, 0.0), 100).iterations == 12);  // just outside
  CHECK(ch01::gradient_descent(x, y, 0.5, 2.0, 100).iterations == 0);  // |g_0| = 2: already there
}

TEST_CASE("1.4 gradients are means over the rows and the bias is learned") {
  // Four rows x = (-1, -1, 1, 1), y = 2x + 3: optimum w = 2, b = 3, both curvatures 1. The mean
  // gradient with lr = 0.5 halves the error per step; a summed gradient (4 times larger) would
  // overshoot to -1 times the error and never converge.
  const Matrix x = from_rows(4, 1, {-1, -1, 1, 1});
  Vector y(4);
  y << 1, 1, 5, 5;
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-9, 200);
  CHECK_MESSAGE(r.converged, kNoOneOverN << " (loss: " << vector_text({r.loss.begin(), r.loss.begin() + std::min<std::size_t>(r.loss.size(), 5)}) << ")");
  // |g_t| = sqrt(2^2 + 3^2) 2^-t <= 1e-9 first at t = 32.
  CHECK_MESSAGE(r.iterations == 32, "iterations " << r.iterations << ", expected 32; " << kNoOneOverN);
  CHECK(std::abs(r.weights(0) - 2.0) < 1e-9);
  CHECK(std::abs(r.bias - 3.0) < 1e-9);
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
  REQUIRE(r.converged);
  // The gradient is H (theta - theta*) with H = [X 1]^T [X 1] / n, so |theta - theta*| <=
  // |g| / lambda_min(H) <= 1e-10 / lambda_min (plus rounding, hence the factor 2).
  const double lambda_min = Eigen::SelfAdjointEigenSolver<Matrix>(a.transpose() * a / 30.0).eigenvalues().minCoeff();
  REQUIRE(lambda_min > 0.1);
  const double bound = 2e-10 / lambda_min;
  CHECK(std::abs(r.weights(0) - solution(0)) < bound);
  CHECK(std::abs(r.weights(1) - solution(1)) < bound);
  CHECK(std::abs(r.bias - solution(2)) < bound);
  // The loss never rises with a step below 2 / lambda_max (up to rounding near the optimum).
  for (std::size_t t = 1; t < r.loss.size(); ++t) REQUIRE(r.loss[t] <= r.loss[t - 1] * (1.0 + 1e-12));
}

TEST_CASE("1.4 max_iterations reached and a diverging step stop unconverged") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const ch01::DescentResult capped = ch01::gradient_descent(x, y, 0.5, 1e-12, 5);
  CHECK(!capped.converged);
  CHECK(capped.iterations == 5);
  CHECK(capped.loss.size() == 6);
  const ch01::DescentResult none = ch01::gradient_descent(x, y, 0.5, 1e-12, 0);
  CHECK(none.iterations == 0);
  CHECK(none.loss.size() == 1);
  // lr = 10: w_t - 2 = -2 (-9)^t grows until the loss overflows, long before 100000 steps.
  const ch01::DescentResult diverged = ch01::gradient_descent(x, y, 10.0, 1e-3, 100000);
  CHECK(!diverged.converged);
  CHECK(diverged.iterations < 1000);
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
  CHECK(ch01::knn_predict(train, labels, test, 3)(0) == 0.0);  // 0, 1, 0: class 0 wins two to one
}

TEST_CASE("1.5 ties: equal distances by index, equal votes to the smallest class") {
  // Test at 0 on a line; train at -1 (class 2), +1 (class 1), +3 (class 0), -3 (class 1).
  const Matrix train = from_rows(4, 1, {-1, 1, 3, -3});
  Vector labels(4);
  labels << 2, 1, 0, 1;
  const Matrix test = from_rows(1, 1, {0});
  CHECK(ch01::knn_predict(train, labels, test, 1)(0) == 2.0);  // -1 and +1 tie: index 0 first
  const Vector k2 = ch01::knn_predict(train, labels, test, 2);  // votes: class 2 and class 1
  CHECK_MESSAGE(k2(0) == 1.0, kTieLargest);
  const Vector k4 = ch01::knn_predict(train, labels, test, 4);  // 2, 1, 0, 1: class 1 has two
  CHECK(k4(0) == 1.0);
}

TEST_CASE("1.5 one prediction per test row and k equal to the training rows") {
  const Matrix train = from_rows(5, 1, {0, 1, 2, 10, 11});
  Vector labels(5);
  labels << 0, 0, 0, 1, 1;
  const Matrix test = from_rows(3, 1, {0.5, 10.4, 6.5});
  Vector expected(3);
  expected << 0, 1, 1;  // 6.5 is nearer to 10 (3.5) than to 2 (4.5)
  const Vector p = ch01::knn_predict(train, labels, test, 1);
  CHECK(near(p, expected));
  CHECK(near(ch01::knn_predict(train, labels, test, 5), Vector::Zero(3)));  // all five vote: 0 wins 3 to 2
}

TEST_CASE("1.5 the largest-range feature dominates unscaled distances") {
  // Feature 0 separates the classes (0 vs 1); feature 1 is noise a thousand times larger.
  const Matrix train = from_rows(4, 2, {0, 1000, 0, 3000, 1, 1100, 1, 2900});
  Vector labels(4);
  labels << 0, 0, 1, 1;
  const Matrix test = from_rows(1, 2, {0, 1120});
  CHECK(ch01::knn_predict(train, labels, test, 1)(0) == 1.0);  // nearest in raw units: (1, 1100)
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
  Matrix bad = test;
  bad(0, 0) = kNaN;
  CHECK_THROWS_TYPED(ch01::knn_predict(train, labels, bad, 1), ValueError, "knn_predict", kThrowsValue);
}

}  // TEST_SUITE
