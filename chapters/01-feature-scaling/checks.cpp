// Chapter 1 checks — feature scaling.
//
// Every expected value is derived here from its formula (hand-worked examples, closed forms of
// gradient descent on a separable quadratic, explicit loops), never copied from the reference's
// output. A failure names a known mistake only when the output is the one that mistake gives on
// the same input: the check computes that output itself (the mistake applied to its own
// computation) and compares; otherwise the message states the rule the output breaks.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <exception>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "feature_scaling.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::format_number;
using scalebook::testing::format_values;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::same_values;
using scalebook::testing::show;
using scalebook::testing::suspect;
using scalebook::testing::suspect_by;
using scalebook::testing::suspect_exact;
using scalebook::testing::thrown_by;
using scalebook::testing::Why;
namespace ch01 = scalebook::ch01;

// The chapter's structs as values (inputs and results print as what they are).
namespace doctest {
template <>
struct StringMaker<ch01::Scaling> {
  static String convert(const ch01::Scaling& s) {
    return ("Scaling{mean " + show(s.mean) + ", scale " + show(s.scale) + "}").c_str();
  }
};
template <>
struct StringMaker<ch01::ScaledSplit> {
  static String convert(const ch01::ScaledSplit& s) {
    return ("ScaledSplit{train " + show(s.train) + ", test " + show(s.test) + ", scaling mean " + show(s.scaling.mean) +
            ", scale " + show(s.scaling.scale) + "}").c_str();
  }
};
template <>
struct StringMaker<ch01::DescentResult> {
  static String convert(const ch01::DescentResult& r) {
    return ("DescentResult{weights " + show(r.weights) + ", bias " + format_number(r.bias) + ", iterations " +
            std::to_string(r.iterations) + ", converged " + (r.converged ? "true" : "false") + ", loss " +
            format_values(r.loss) + "}").c_str();
  }
};
}  // namespace doctest

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The known mistakes, each named only when the output is what it gives (ids: chapters/01-feature-scaling/bugzoo).
constexpr Named kDdof1{"ddof_one", "the sample standard deviation (divided by n - 1) instead of the population one (divided by n)"};
constexpr Named kPerSample{"per_sample", "statistics per sample (over each row) instead of per feature (over each column)"};
constexpr Named kConstant{"constant_divides_by_zero", "a constant feature keeps scale 0, so scaling it divides by zero: its scale must be 1"};
constexpr Named kTinySpreadIsOne{"tiny_spread_unscaled", "a tiny but non-zero spread replaced by scale 1, as if the feature were constant"};
constexpr Named kOnePass{"one_pass_variance", "the variance as mean(x^2) - mean(x)^2, which loses every digit to cancellation for large values: subtract the mean first, then square"};
constexpr Named kFloat{"float_accumulator", "the means and the sums of squares kept in a float (about 7 significant digits) instead of a double (about 16)"};
constexpr Named kMultiplied{"multiplied_by_scale", "the centred values multiplied by the scale instead of divided by it"};
constexpr Named kApplyFloat{"apply_in_float", "the scaling computed in float: (x - mean) / scale rounded to about 7 significant digits"};
constexpr Named kScaleThreshold{"scale_threshold", "a tiny positive scale rejected as if it were 0: every scale above 0 is valid, however small"};
constexpr Named kAllRows{"stats_from_all_rows", "statistics from all rows (train and test together): the test rows leak into the scaling"};
constexpr Named kTestRows{"fitted_on_test", "the scaling fitted on the test rows: it must come from the training rows only"};
constexpr Named kNoOneOverN{"gradient_not_averaged", "the gradient summed over the rows instead of averaged (not divided by n)"};
constexpr Named kNoHalf{"loss_without_half", "the loss without its 1/2: L = (1/2n) sum r^2, so that its gradient is X^T r / n"};
constexpr Named kSequential{"sequential_update", "the bias's gradient taken after the weights were updated: both gradients come from the same point"};
constexpr Named kLimitFirst{"limit_before_convergence", "max_iterations tested before the gradient: a run that converges at its last allowed update must say converged = true"};
constexpr Named kNoFinalLoss{"diverged_loss_dropped", "the non-finite loss that stopped a diverging run left out of loss: record it, then stop"};
constexpr Named kRateThreshold{"rate_threshold", "a tiny positive learning rate or tolerance rejected: every value above 0 is valid, however small"};
constexpr Named kManhattan{"manhattan_distance", "the Manhattan distance (sum of absolute differences) instead of the Euclidean one"};
constexpr Named kTieLargest{"vote_tie_largest", "a tie between classes broken towards the largest class instead of the smallest"};
constexpr Named kUnstableSort{"unstable_sort", "the training rows sorted by distance with std::sort, which does not keep equal distances in index order (beyond 16 rows it reorders them): use std::stable_sort"};
constexpr Named kClassFirstRow{"class_check_skips_first", "the check of the classes starts at row 1 and lets a bad class in row 0 through"};
constexpr Named kClassLastRow{"class_check_skips_last", "the check of the classes stops before the last row and lets a bad class there through"};

constexpr char kEmpty[] = "an empty matrix (no rows or no columns) must throw ShapeError";
constexpr char kNonFinite[] = "NaN or infinity in the input must throw ValueError";

using scalebook::testing::from_rows;
using scalebook::testing::row;

// Per-feature mean and standard deviation by definition, dividing by n - ddof.
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

// The mistakes of 1.1, applied to the definition: the variance in one pass (clamped at 0), and
// every sum kept in a float (each with the contract's scale 1 for a spread of 0).
RowVector one_pass_sds(const Matrix& x) {
  const RowVector m = x.colwise().mean();
  RowVector s(x.cols());
  for (Index c = 0; c < x.cols(); ++c) {
    double squares = 0.0;
    for (Index i = 0; i < x.rows(); ++i) squares += x(i, c) * x(i, c);
    const double sd = std::sqrt(std::max(0.0, squares / static_cast<double>(x.rows()) - m(c) * m(c)));
    s(c) = sd > 0.0 ? sd : 1.0;  // the contract's policy for what now looks constant
  }
  return s;
}
ch01::Scaling float_scaling(const Matrix& x) {
  ch01::Scaling s{RowVector(x.cols()), RowVector(x.cols())};
  for (Index c = 0; c < x.cols(); ++c) {
    float sum = 0.0f;
    for (Index i = 0; i < x.rows(); ++i) sum += static_cast<float>(x(i, c));
    s.mean(c) = sum / static_cast<float>(x.rows());
    float squares = 0.0f;
    for (Index i = 0; i < x.rows(); ++i) squares += (x(i, c) - s.mean(c)) * (x(i, c) - s.mean(c));
    const double sd = std::sqrt(squares / static_cast<double>(x.rows()));
    s.scale(c) = sd > 0.0 ? sd : 1.0;
  }
  return s;
}

// How many significant digits a agrees with e to, for messages ("agrees to 7 digits only").
std::string digits_of_agreement(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected) {
  double worst = 0.0;
  for (Index i = 0; i < actual.size(); ++i) {
    const double a = actual(i / actual.cols(), i % actual.cols()), e = expected(i / actual.cols(), i % actual.cols());
    worst = std::max(worst, std::abs(a - e) / std::max(std::abs(e), 1e-300));
  }
  if (!(worst > 0.0) || !std::isfinite(worst)) return "";
  return " (a relative error of " + format_number(worst) + ": it agrees to about " +
         std::to_string(static_cast<int>(std::max(0.0, -std::log10(worst)))) + " significant digits, a double keeps 16)";
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

// ---- gradient descent by the contract, and with each known mistake -------------------------------

enum class Slip { None, Summed, NoHalf, Sequential, LimitFirst, DropFinalLoss };

ch01::DescentResult descent_by_contract(const Matrix& x, const Vector& y, double lr, double tolerance, int max_iterations,
                                        Slip slip = Slip::None) {
  const Index n = x.rows();
  const double scale = slip == Slip::Summed ? 1.0 : 1.0 / static_cast<double>(n);
  ch01::DescentResult r;
  r.weights = Vector::Zero(x.cols());
  for (int guard = 0; guard < 1000000; ++guard) {
    Vector residual(n);
    for (Index i = 0; i < n; ++i) residual(i) = x.row(i).dot(r.weights) + r.bias - y(i);
    const double loss = residual.squaredNorm() / (slip == Slip::NoHalf ? 1.0 : 2.0) / static_cast<double>(n);
    if (!std::isfinite(loss)) {
      if (slip != Slip::DropFinalLoss) r.loss.push_back(loss);
      return r;
    }
    r.loss.push_back(loss);
    const Vector g_w = x.transpose() * residual * scale;
    double g_b = residual.sum() * scale;
    const bool small = std::sqrt(g_w.squaredNorm() + g_b * g_b) <= tolerance;
    if (slip == Slip::LimitFirst && r.iterations == max_iterations) return r;
    if (small) {
      r.converged = true;
      return r;
    }
    if (r.iterations == max_iterations) return r;
    r.weights -= lr * g_w;
    if (slip == Slip::Sequential) {  // the residuals again, at the new weights
      g_b = 0.0;
      for (Index i = 0; i < n; ++i) g_b += x.row(i).dot(r.weights) + r.bias - y(i);
      g_b *= scale;
    }
    r.bias -= lr * g_b;
    ++r.iterations;
  }
  return r;
}

bool same_run(const ch01::DescentResult& a, const ch01::DescentResult& b) {
  if (a.iterations != b.iterations || a.converged != b.converged || a.loss.size() != b.loss.size()) return false;
  if (a.weights.size() != b.weights.size()) return false;
  const auto close = [](double u, double v) {
    return (std::isnan(u) && std::isnan(v)) || u == v || std::abs(u - v) <= 1e-9 * std::max(1.0, std::abs(v));
  };
  for (std::size_t t = 0; t < a.loss.size(); ++t)
    if (!close(a.loss[t], b.loss[t])) return false;
  for (Index c = 0; c < a.weights.size(); ++c)
    if (!close(a.weights(c), b.weights(c))) return false;
  return close(a.bias, b.bias);
}

// The named mistakes of 1.4 whose run on this input equals the actual run.
std::string descent_mistakes(const ch01::DescentResult& actual, const Matrix& x, const Vector& y, double lr,
                             double tolerance, int max_iterations) {
  const auto run = [&](Slip slip) { return descent_by_contract(x, y, lr, tolerance, max_iterations, slip); };
  return suspect_by(actual,
                    {{kNoOneOverN, run(Slip::Summed)}, {kNoHalf, run(Slip::NoHalf)}, {kSequential, run(Slip::Sequential)},
                     {kLimitFirst, run(Slip::LimitFirst)}, {kNoFinalLoss, run(Slip::DropFinalLoss)}},
                    same_run);
}

// ---- kNN by the contract, and with each known mistake ---------------------------------------------

enum class KnnSlip { None, Manhattan, TieLargest, UnstableSort };

Vector knn_by_contract(const Matrix& train_x, const Vector& train_y, const Matrix& test_x, int k, KnnSlip slip = KnnSlip::None) {
  Vector out(test_x.rows());
  for (Index t = 0; t < test_x.rows(); ++t) {
    std::vector<double> distance(static_cast<std::size_t>(train_x.rows()));
    for (Index i = 0; i < train_x.rows(); ++i) {
      double d = 0.0;
      for (Index c = 0; c < train_x.cols(); ++c) {
        const double diff = train_x(i, c) - test_x(t, c);
        d += slip == KnnSlip::Manhattan ? std::abs(diff) : diff * diff;
      }
      distance[static_cast<std::size_t>(i)] = d;
    }
    std::vector<Index> order(distance.size());
    std::iota(order.begin(), order.end(), Index{0});
    const auto nearer = [&](Index a, Index b) { return distance[static_cast<std::size_t>(a)] < distance[static_cast<std::size_t>(b)]; };
    if (slip == KnnSlip::UnstableSort) std::sort(order.begin(), order.end(), nearer);
    else std::stable_sort(order.begin(), order.end(), nearer);
    std::vector<std::pair<double, int>> votes;  // (class, count), classes in increasing order
    for (int j = 0; j < k; ++j) {
      const double c = train_y(order[static_cast<std::size_t>(j)]);
      auto at = std::lower_bound(votes.begin(), votes.end(), std::make_pair(c, 0),
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
      if (at == votes.end() || at->first != c) at = votes.insert(at, {c, 0});
      ++at->second;
    }
    std::pair<double, int> best = votes.front();
    for (const auto& v : votes)
      if (v.second > best.second || (slip == KnnSlip::TieLargest && v.second == best.second)) best = v;
    out(t) = best.first;
  }
  return out;
}

std::string knn_mistakes(const Vector& actual, const Matrix& train_x, const Vector& train_y, const Matrix& test_x, int k) {
  return suspect(actual, {{kManhattan, knn_by_contract(train_x, train_y, test_x, k, KnnSlip::Manhattan)},
                          {kTieLargest, knn_by_contract(train_x, train_y, test_x, k, KnnSlip::TieLargest)},
                          {kUnstableSort, knn_by_contract(train_x, train_y, test_x, k, KnnSlip::UnstableSort)}},
                 0.0);
}

}  // namespace

TEST_SUITE("01-feature-scaling") {

// ---- 1.1 fit_scaling ------------------------------------------------------------------------

TEST_CASE("1.1 mean and population standard deviation of a hand-worked example") {
  // Feature 0: 1 2 3 4, mean 2.5, squared deviations 2.25 0.25 0.25 2.25, sum 5: sd = sqrt(5/4).
  // Feature 1: 10 10 30 30, mean 20, every deviation 10: sd = 10.
  const Matrix train = from_rows(4, 2, {1, 10, 2, 10, 3, 30, 4, 30});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.mean, row({2.5, 20})), said("fit_scaling of the columns (1, 2, 3, 4) and (10, 10, 30, 30) must give the means (2.5, 20)",
                                                suspect(s.mean, {{kPerSample, row({5.5, 6, 16.5, 17})}})));
  CHECK_MESSAGE(near(s.scale, row({std::sqrt(1.25), 10})),
                said("fit_scaling of the columns (1, 2, 3, 4) and (10, 10, 30, 30) must give the scales (sqrt(5 / 4), 10): "
                     "the population standard deviation divides the squared deviations by n = 4",
                     suspect(s.scale, {{kDdof1, row({std::sqrt(5.0 / 3.0), std::sqrt(400.0 / 3.0)})},
                                       {kPerSample, column_sds(Matrix(train.transpose()), 0.0)}})));
}

TEST_CASE("1.1 statistics are per feature on a square matrix too") {
  // 3 x 3, so that per-row statistics have the right length: only the values tell them apart.
  const Matrix train = from_rows(3, 3, {1, 0, 5, 2, 0, 7, 6, 3, 0});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  REQUIRE_MESSAGE(s.mean.cols() == 3, "fit_scaling of a 3 x 3 matrix must give 3 means, one per feature (column), got " << s.mean.cols());
  CHECK_MESSAGE(near(s.mean, column_means(train)),
                said("fit_scaling of the 3 x 3 matrix below gave means that are not its column means (1, 0, 5 | 2, 0, 7 | 6, 3, 0 "
                     "by rows: the columns average to 3, 1, 4)",
                     suspect(s.mean, {{kPerSample, column_means(Matrix(train.transpose()))}})));
  CHECK_MESSAGE(near(s.scale, column_sds(train, 0.0)),
                said("fit_scaling of the 3 x 3 matrix below gave scales that are not its columns' population standard deviations",
                     suspect(s.scale, {{kPerSample, column_sds(Matrix(train.transpose()), 0.0)},
                                       {kDdof1, column_sds(train, 1.0)}})));
}

TEST_CASE("1.1 a constant feature gets scale 1 and a single row is constant everywhere") {
  const Matrix train = from_rows(3, 2, {5, 1, 5, 2, 5, 3});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector zero_kept = row({0, std::sqrt(2.0 / 3.0)});
  CHECK_MESSAGE(near(s.scale, row({1, std::sqrt(2.0 / 3.0)})),
                said("fit_scaling of the columns (5, 5, 5) and (1, 2, 3) must give the scales (1, sqrt(2 / 3)): a constant "
                     "feature (standard deviation 0) gets scale 1",
                     suspect(s.scale, {{kConstant, zero_kept}})));
  const Matrix one_row = from_rows(1, 3, {-1, 0, 7});
  INPUTS(one_row);
  const ch01::Scaling one = ch01::fit_scaling(one_row);  // n = 1: sd 0 everywhere
  CHECK_MESSAGE(near(one.scale, row({1, 1, 1})),
                said("fit_scaling of the single row (-1, 0, 7) must give the scales (1, 1, 1): with one row every feature is constant",
                     suspect(one.scale, {{kConstant, row({0, 0, 0})}})));
  CHECK_MESSAGE(near(one.mean, row({-1, 0, 7})), "fit_scaling of the single row (-1, 0, 7) must give that row as the means");
}

TEST_CASE("1.1 large values keep their digits") {
  // 1e9 + (1, 2, 3, 4): sd = sqrt(1.25) exactly as for 1 2 3 4. Subtracting the mean first is
  // exact here (the deviations are small integers plus halves); mean(x^2) - mean(x)^2 subtracts
  // two numbers near 1e18 whose spacing is 128, and loses every digit of 1.25.
  const Matrix train = from_rows(4, 1, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const ch01::Scaling in_float = float_scaling(train);
  CHECK_MESSAGE(near(s.mean(0), 1e9 + 2.5, 0.0),
                said("fit_scaling of one feature 1e9 + (1, 2, 3, 4) gave the mean " + format_number(s.mean(0)) +
                         ", not 1000000002.5" + digits_of_agreement(s.mean, row({1e9 + 2.5})),
                     suspect(s.mean(0), {{kFloat, in_float.mean(0)}}, 0.0)));
  CHECK_MESSAGE(std::abs(s.scale(0) - std::sqrt(1.25)) < 1e-9,
                said("fit_scaling of one feature 1e9 + (1, 2, 3, 4) gave the scale " + format_number(s.scale(0)) +
                         ", not sqrt(1.25) = " + format_number(std::sqrt(1.25)) + " as for 1, 2, 3, 4: the deviations from "
                         "the mean are small, their squares must keep their digits",
                     suspect(s.scale(0), {{kOnePass, one_pass_sds(train)(0)}, {kFloat, in_float.scale(0)}}, 0.0)));
}

TEST_CASE("1.1 large values with fractional deviations keep their digits") {
  // 1e9 + N(0, 1) in 20 rows: the deviations from the mean are not small integers, so any form
  // that multiplies numbers near 1e9 before the sum cancels (mean(x^2) - mean(x)^2, or
  // (x + m)(x - m)) leaves an error near 1e-7 of the scale; deviations squared stay near 1e-16.
  const Matrix train = gaussian_rows(20, 1, 1e9, 1.0, 16);
  INFO("train: 20 rows of 1e9 + N(0, 1), Rng(16)");
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector sd = column_sds(train, 0.0);
  CHECK_MESSAGE(near(s.scale, sd, 1e-9),
                said("fit_scaling of 20 values 1e9 + N(0, 1) gave the scale " + format_number(s.scale(0)) + ", not " +
                         format_number(sd(0)) + digits_of_agreement(s.scale, sd),
                     suspect(s.scale(0), {{kOnePass, one_pass_sds(train)(0)}, {kFloat, float_scaling(train).scale(0)}}, 0.0)));
}

TEST_CASE("1.1 a tiny but non-zero spread is kept: only a constant feature gets scale 1") {
  // 1e-12 (1, 2, 3, 4): sd = 1e-12 sqrt(1.25), not 0. A threshold such as sd > 1e-9 would replace
  // it by 1 and leave the feature unscaled.
  const Matrix train = from_rows(4, 1, {1e-12, 2e-12, 3e-12, 4e-12});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.scale, row({1e-12 * std::sqrt(1.25)}), 1e-9),
                said("fit_scaling of 1e-12 (1, 2, 3, 4) gave the scale " + format_number(s.scale(0)) +
                         ", not 1e-12 sqrt(1.25): only a standard deviation of exactly 0 becomes 1, not a small one",
                     suspect(s.scale, {{kTinySpreadIsOne, row({1})}})));
}

TEST_CASE("1.1 ordinary data keeps a double's digits") {
  // 50 rows of N(3, 2^2) in 3 features: every statistic to 1e-12 relative. Sums kept in a float
  // agree to about 1e-7 only.
  const Matrix train = gaussian_rows(50, 3, 3.0, 2.0, 15);
  INFO("train: 50 rows of N(3, 4) in 3 features, Rng(15)");
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector mean = column_means(train), sd = column_sds(train, 0.0);
  const ch01::Scaling in_float = float_scaling(train);
  CHECK_MESSAGE(near(s.mean, mean), said("fit_scaling of 50 rows drawn from N(3, 4) gave means that differ from the column means" +
                                             digits_of_agreement(s.mean, mean),
                                         suspect(s.mean, {{kFloat, in_float.mean}}, 0.0)));
  CHECK_MESSAGE(near(s.scale, sd), said("fit_scaling of 50 rows drawn from N(3, 4) gave scales that differ from the population "
                                        "standard deviations" + digits_of_agreement(s.scale, sd),
                                        suspect(s.scale, {{kFloat, in_float.scale}, {kDdof1, column_sds(train, 1.0)}}, 1e-12)));
}

TEST_CASE("1.1 empty or non-finite training rows throw") {
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::fit_scaling, Matrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::fit_scaling, Matrix(3, 0));
  Matrix bad = Matrix::Ones(3, 2);
  bad(2, 1) = kNaN;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::fit_scaling, bad);
  bad(2, 1) = -kInf;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::fit_scaling, bad);
  bad(2, 1) = 1.0;
  bad(0, 0) = kInf;  // the first entry too
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::fit_scaling, bad);
}

// ---- 1.2 apply_scaling ----------------------------------------------------------------------

TEST_CASE("1.2 each entry becomes its feature's x minus mean over scale") {
  const ch01::Scaling s{row({1, -2, 100}), row({2, 0.5, 1})};
  const Matrix x = from_rows(2, 3, {3, -2, 100, 0, 0, 101});
  INPUTS(x, s);
  // (3-1)/2 = 1, (-2+2)/0.5 = 0, 0; (0-1)/2 = -0.5, (0+2)/0.5 = 4, 1
  const Matrix expected = from_rows(2, 3, {1, 0, 0, -0.5, 4, 1});
  const Matrix z = ch01::apply_scaling(x, s);
  const Matrix multiplied = from_rows(2, 3, {4, 0, 0, -2, 1, 1});
  CHECK_MESSAGE(near(z, expected), said("apply_scaling of the rows (3, -2, 100) and (0, 0, 101) with means (1, -2, 100) and "
                                        "scales (2, 0.5, 1) must give (1, 0, 0) and (-0.5, 4, 1)",
                                        suspect(z, {{kMultiplied, multiplied}})));
}

TEST_CASE("1.2 rows far from the training statistics are scaled the same way") {
  const ch01::Scaling s{row({0, 0}), row({1, 4})};
  const Matrix x = from_rows(1, 2, {1e6, -4e6});
  INPUTS(x, s);
  CHECK_MESSAGE(near(ch01::apply_scaling(x, s), from_rows(1, 2, {1e6, -1e6})), "apply_scaling of (1e6, -4e6) with means (0, 0) and scales (1, 4) must give (1e6, -1e6)");
}

TEST_CASE("1.2 a double's digits are kept: numbers that a float cannot hold") {
  // Means and scales such as 0.1 and 3 are not exact in a float: a division done in float rounds
  // every entry to about 7 significant digits, while the contract's arithmetic is double's (1e-12).
  const ch01::Scaling s{row({0.1, -1.0 / 3.0, 12345.678}), row({3, 0.7, 1e-3})};
  const Matrix x = gaussian_rows(4, 3, 1.0, 2.0, 12);
  INPUTS(x, s);
  const Matrix z = ch01::apply_scaling(x, s);
  const Matrix expected = scaled_by(x, s.mean, s.scale);
  Matrix in_float(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i)
    for (Index c = 0; c < x.cols(); ++c)
      in_float(i, c) = static_cast<float>(x(i, c) - s.mean(c)) / static_cast<float>(s.scale(c));
  CHECK_MESSAGE(near(z, expected, 1e-12),
                said("apply_scaling of 4 rows with means (0.1, -1/3, 12345.678) and scales (3, 0.7, 0.001) differs from "
                     "(x - mean) / scale computed in double" + digits_of_agreement(z, expected),
                     suspect(z, {{kApplyFloat, in_float}}, 1e-15)));
}

TEST_CASE("1.2 any positive scale is valid, however small") {
  // A feature measured in small units has a small standard deviation: 1e-12 is a scale like any
  // other, and only a scale of 0 or below is invalid. A threshold above 0 rejects such a feature.
  // 1e-310 is a double too (a subnormal one), whose reciprocal overflows to infinity: multiplying by
  // 1 / scale instead of dividing by the scale gives infinity where (x - mean) / scale is 2.
  const ch01::Scaling s{row({1e-12, 0, 0}), row({1e-12, 1, 1e-310})};
  const Matrix x = from_rows(1, 3, {3e-12, 5, 2e-310});
  INPUTS(x, s);
  Matrix z;
  const std::string thrown = thrown_by([&] { z = ch01::apply_scaling(x, s); });
  // What a threshold above 0 gives on this input: a ValueError instead of a result.
  REQUIRE_MESSAGE(thrown.empty(), said("apply_scaling with the scales (1e-12, 1, 1e-310) threw \"" + thrown + "\": every scale "
                                       "above 0 is valid, however small",
                                       suspect_exact(thrown.empty(), {{kScaleThreshold, false}})));
  CHECK_MESSAGE(near(z, from_rows(1, 3, {2, 5, 2})),
                "apply_scaling of (3e-12, 5, 2e-310) with means (1e-12, 0, 0) and scales (1e-12, 1, 1e-310) must give "
                "(2, 5, 2)");
}

TEST_CASE("1.2 mismatched shapes, empty rows and bad scalings throw") {
  const ch01::Scaling s{row({0, 0}), row({1, 1})};
  constexpr char kFeatures[] = "x must have one column per feature of the scaling";
  CHECK_THROWS_CALL(ShapeError, kFeatures, ch01::apply_scaling, Matrix::Ones(2, 3), s);  // more columns
  CHECK_THROWS_CALL(ShapeError, kFeatures, ch01::apply_scaling, Matrix::Ones(2, 1), s);  // fewer
  // The same number of entries in another shape: a check of x.size() against the scaling lets it through.
  CHECK_THROWS_CALL(ShapeError, kFeatures, ch01::apply_scaling, Matrix::Ones(2, 1), ch01::Scaling{row({0, 0}), row({1, 1})});
  CHECK_THROWS_CALL(ShapeError, kFeatures, ch01::apply_scaling, Matrix::Ones(3, 2), ch01::Scaling{row({0, 0, 0, 0, 0, 0}), row({1, 1, 1, 1, 1, 1})});
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::apply_scaling, Matrix(0, 2), s);
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::apply_scaling, Matrix(2, 0), s);
  CHECK_THROWS_CALL(ShapeError, "the scaling's mean and scale must have the same length", ch01::apply_scaling,
                    Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, 1, 1})});
  constexpr char kPositive[] = "every scale must be above 0 (0 and negative scales are invalid)";
  CHECK_THROWS_CALL(ValueError, kPositive, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, 0})});
  CHECK_THROWS_CALL(ValueError, kPositive, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, -1e-300})});
  CHECK_THROWS_CALL(ValueError, kPositive, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, -1e300})});
  CHECK_THROWS_CALL(ValueError, kPositive, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({-1, 0}), row({-1, 1})});
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({kNaN, 0}), row({1, 1})});
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::apply_scaling, Matrix::Ones(2, 2), ch01::Scaling{row({0, 0}), row({1, kInf})});
  Matrix bad = Matrix::Ones(2, 2);
  bad(0, 0) = kInf;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::apply_scaling, bad, s);
}

// ---- 1.3 scale_train_test -------------------------------------------------------------------

TEST_CASE("1.3 train and test from very different distributions: no leakage") {
  // Train ~ N(0, 1), test ~ N(100, 10^2), 3 features. Fitted on the training rows, the scaled
  // test rows sit near 100 standard deviations away; any statistic that saw the test rows
  // (all rows, or the test rows alone) moves them towards 0.
  const Matrix train = gaussian_rows(40, 3, 0.0, 1.0, 11), test = gaussian_rows(10, 3, 100.0, 10.0, 12);
  INFO("train: 40 rows of N(0, 1), Rng(11); test: 10 rows of N(100, 100), Rng(12); 3 features");
  INPUTS(train, test);
  const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
  const RowVector mean = column_means(train), sd = column_sds(train, 0.0);
  const Matrix all = stack(train, test);
  const RowVector all_mean = column_means(all), all_sd = column_sds(all, 0.0);
  const RowVector test_mean = column_means(test), test_sd = column_sds(test, 0.0);
  CHECK_MESSAGE(near(split.scaling.mean, mean, 1e-10),
                said("scale_train_test's scaling.mean differs from the training rows' column means",
                     suspect(split.scaling.mean, {{kAllRows, all_mean}, {kTestRows, test_mean}})));
  CHECK_MESSAGE(near(split.scaling.scale, sd, 1e-10),
                said("scale_train_test's scaling.scale differs from the training rows' population standard deviations",
                     suspect(split.scaling.scale, {{kAllRows, all_sd}, {kTestRows, test_sd}})));
  CHECK_MESSAGE(near(split.test, scaled_by(test, mean, sd), 1e-10),
                said("scale_train_test's test rows differ from (test - the training means) / the training standard deviations",
                     suspect(split.test, {{kAllRows, scaled_by(test, all_mean, all_sd)},
                                          {kTestRows, scaled_by(test, test_mean, test_sd)}})));
  CHECK_MESSAGE(near(split.train, scaled_by(train, mean, sd), 1e-10),
                said("scale_train_test's training rows differ from (train - the training means) / the training standard deviations",
                     suspect(split.train, {{kAllRows, scaled_by(train, all_mean, all_sd)},
                                           {kTestRows, scaled_by(train, test_mean, test_sd)}})));
}

TEST_CASE("1.3 the scaled training rows have mean 0 and standard deviation 1") {
  const Matrix train = gaussian_rows(25, 4, 50.0, 7.0, 13), test = gaussian_rows(5, 4, 0.0, 1.0, 14);
  INFO("train: 25 rows of N(50, 49), Rng(13); test: 5 rows of N(0, 1), Rng(14); 4 features");
  INPUTS(train, test);
  const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
  CHECK_MESSAGE(near(column_means(split.train), RowVector::Zero(4), 1e-12), "scale_train_test's scaled training rows must have mean 0 in every feature");
  CHECK_MESSAGE(near(column_sds(split.train, 0.0), RowVector::Ones(4), 1e-12), "scale_train_test's scaled training rows must have standard deviation 1 in every feature");
}

TEST_CASE("1.3 empty or mismatched splits and NaN throw") {
  const Matrix ok = Matrix::Ones(3, 2);
  constexpr char kColumns[] = "train and test must have the same columns (features)";
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::scale_train_test, Matrix(0, 2), ok);
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::scale_train_test, ok, Matrix(0, 2));
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::scale_train_test, ok, Matrix(3, 0));
  CHECK_THROWS_CALL(ShapeError, kColumns, ch01::scale_train_test, ok, Matrix::Ones(3, 3));
  CHECK_THROWS_CALL(ShapeError, kColumns, ch01::scale_train_test, ok, Matrix::Ones(3, 1));
  // The same number of entries in another shape: only the columns tell them apart.
  CHECK_THROWS_CALL(ShapeError, kColumns, ch01::scale_train_test, ok, Matrix::Ones(2, 3));
  Matrix bad = ok;
  bad(1, 1) = kNaN;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::scale_train_test, ok, bad);
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::scale_train_test, bad, ok);
}

// ---- 1.4 gradient_descent -------------------------------------------------------------------

// x = (-1, 1), y = (-2, 2): the optimum is w = 2, b = 0, and the loss is separable with curvature
// 1 in w and in b. From w = 0, a step of size lr gives w_t = 2 (1 - (1 - lr)^t) and g_t = w_t - 2,
// so |g_t| = 2 (1 - lr)^t and L_t = (w_t - 2)^2 / 2. With lr = 1/2 every quantity is a power of 2:
// exact in floating point, so iteration counts can be checked exactly.
TEST_CASE("1.4 iterations, weights and losses of a hand-worked descent") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  INPUTS(x, y, 0.5, 1e-3, 100);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-3, 100);
  const std::string on = "gradient_descent on x = (-1, 1), y = (-2, 2), lr 0.5, tolerance 1e-3";
  const std::string named = descent_mistakes(r, x, y, 0.5, 1e-3, 100);
  // 2 * 0.5^t <= 1e-3 first at t = 11 (2^-10 = 0.000977).
  CHECK_MESSAGE(r.iterations == 11, said(on + " made " + std::to_string(r.iterations) +
                                             " updates, expected 11 (|g| = 2 * 0.5^t first reaches 1e-3 at t = 11)", named));
  CHECK_MESSAGE(r.converged, said(on + " did not report convergence: |g| reached the tolerance after 11 updates", named));
  CHECK_MESSAGE(r.weights(0) == 2.0 - std::ldexp(1.0, -10),
                said(on + " ended with w = " + format_number(r.weights(0)) + ", expected 2 - 2^-10 = " +
                         format_number(2.0 - std::ldexp(1.0, -10)), named));
  CHECK_MESSAGE(r.bias == 0.0, said(on + " ended with b = " + format_number(r.bias) + ", expected 0 (the data are symmetric)", named));
  // The loss (1/2n) sum r^2 before update t is (w_t - 2)^2 / 2 = 2 * 4^-t.
  std::vector<double> expected;
  for (int t = 0; t <= 11; ++t) expected.push_back(2.0 * std::ldexp(1.0, -2 * t));
  CHECK_MESSAGE(same_values(r.loss, expected),
                said(on + ": the recorded losses must be L_t = (1/2n) sum r^2 = 2 * 4^-t, one before each update and one "
                          "after the last", named));
}

TEST_CASE("1.4 the tolerance just inside and just outside") {
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  const double at_11 = std::ldexp(1.0, -10);  // |g| after 11 updates, exactly
  const double below = std::nextafter(at_11, 0.0);
  INPUTS(x, y, 0.5, at_11, below, 100);
  const int exactly = ch01::gradient_descent(x, y, 0.5, at_11, 100).iterations;
  CHECK_MESSAGE(exactly == 11, "gradient_descent with tolerance 2^-10 made " << exactly << " updates: |g| after 11 updates "
                               "equals the tolerance exactly and must stop there (the test is |g| <= tolerance)");
  const int outside = ch01::gradient_descent(x, y, 0.5, below, 100).iterations;
  CHECK_MESSAGE(outside == 12, "gradient_descent with a tolerance just below 2^-10 made " << outside << " updates: |g| after "
                               "11 updates is just outside it, so 12");
  const int at_start = ch01::gradient_descent(x, y, 0.5, 2.0, 100).iterations;
  CHECK_MESSAGE(at_start == 0, "gradient_descent with tolerance 2 made " << at_start << " updates: the starting gradient "
                               "|g_0| = 2 already meets it, so 0");
}

TEST_CASE("1.4 the iteration limit and convergence met at the same update") {
  // The hand-worked descent converges after exactly 11 updates. With max_iterations = 11 the
  // contract tests the gradient first: converged = true. With 10, it stops unconverged.
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  INPUTS(x, y, 0.5, 1e-3);
  const ch01::DescentResult at_limit = ch01::gradient_descent(x, y, 0.5, 1e-3, 11);
  CHECK_MESSAGE((at_limit.iterations == 11 && at_limit.converged),
                said("gradient_descent with max_iterations = 11, on a descent whose gradient meets the tolerance after its "
                     "11th update, gave iterations " + std::to_string(at_limit.iterations) + " and converged = " +
                     (at_limit.converged ? "true" : "false") + ": the gradient is tested before the limit, so 11 and true",
                     descent_mistakes(at_limit, x, y, 0.5, 1e-3, 11)));
  const ch01::DescentResult short_one = ch01::gradient_descent(x, y, 0.5, 1e-3, 10);
  CHECK_MESSAGE((short_one.iterations == 10 && !short_one.converged && short_one.loss.size() == 11),
                "gradient_descent with max_iterations = 10 on the same descent must stop after 10 updates, unconverged, "
                "with 11 losses; got " << short_one.iterations << " updates, converged = " << short_one.converged
                << ", " << short_one.loss.size() << " losses");
}

TEST_CASE("1.4 gradients are means over the rows and the bias is learned") {
  // Four rows x = (-1, -1, 1, 1), y = 2x + 3: optimum w = 2, b = 3, both curvatures 1. The mean
  // gradient with lr = 0.5 halves the error per step; a summed gradient (4 times larger) would
  // overshoot to -1 times the error and never converge.
  const Matrix x = from_rows(4, 1, {-1, -1, 1, 1});
  Vector y(4);
  y << 1, 1, 5, 5;
  INPUTS(x, y, 0.5, 1e-9, 200);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-9, 200);
  const std::string on = "gradient_descent on x = (-1, -1, 1, 1), y = 2x + 3, lr 0.5, tolerance 1e-9";
  const std::string named = descent_mistakes(r, x, y, 0.5, 1e-9, 200);
  CHECK_MESSAGE(r.converged, said(on + " did not converge in 200 updates (losses " + format_values(r.loss) +
                                      "): with the mean gradient each update halves the error", named));
  // |g_t| = sqrt(2^2 + 3^2) 2^-t <= 1e-9 first at t = 32.
  CHECK_MESSAGE(r.iterations == 32, said(on + " made " + std::to_string(r.iterations) +
                                             " updates, expected 32 (|g_t| = sqrt(13) 2^-t)", named));
  CHECK_MESSAGE(std::abs(r.weights(0) - 2.0) < 1e-9, said(on + " ended with w = " + format_number(r.weights(0)) + ", expected 2", named));
  CHECK_MESSAGE(std::abs(r.bias - 3.0) < 1e-9, said(on + " ended with b = " + format_number(r.bias) +
                                                        ", expected 3: the bias is learned with the weights", named));
}

TEST_CASE("1.4 data whose mean is not 0: each step's gradients come from the same point") {
  // x = (1, 2, 4), y = (1, 3, 6): sum x != 0, so the bias and the weight are coupled and the order
  // of the updates shows. The contract's run, step by step, is computed here; 40 updates with lr 0.1.
  const Matrix x = from_rows(3, 1, {1, 2, 4});
  Vector y(3);
  y << 1, 3, 6;
  INPUTS(x, y, 0.1, 1e-12, 40);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.1, 1e-12, 40);
  const ch01::DescentResult expected = descent_by_contract(x, y, 0.1, 1e-12, 40);
  const std::string named = descent_mistakes(r, x, y, 0.1, 1e-12, 40);
  CHECK_MESSAGE(same_values(r.loss, expected.loss, 1e-12),
                said("gradient_descent on x = (1, 2, 4), y = (1, 3, 6), lr 0.1, 40 updates: the losses differ from the "
                     "contract's updates (w -= lr g_w and b -= lr g_b, both gradients at the same w and b)", named));
  CHECK_MESSAGE((near(r.weights(0), expected.weights(0), 1e-12) && near(r.bias, expected.bias, 1e-12)),
                said("gradient_descent on x = (1, 2, 4), y = (1, 3, 6), lr 0.1, 40 updates ended with (w, b) = (" +
                         format_number(r.weights(0)) + ", " + format_number(r.bias) + "), expected (" +
                         format_number(expected.weights(0)) + ", " + format_number(expected.bias) + ")", named));
}

TEST_CASE("1.4 two features reach the least-squares solution") {
  Rng rng(21);
  const Matrix x = normal_matrix(30, 2, rng);
  Vector y(30);
  for (Index i = 0; i < 30; ++i) y(i) = 1.5 * x(i, 0) - 0.5 * x(i, 1) + 0.25 + 0.1 * rng.normal();
  INFO("x: 30 rows of N(0, 1) in 2 features, y = 1.5 x_0 - 0.5 x_1 + 0.25 + N(0, 0.01), Rng(21)");
  INPUTS(x, y, 0.5, 1e-10, 10000);
  // The normal equations of [X 1]: solved independently.
  Matrix a(30, 3);
  a << x, Vector::Ones(30);
  const Vector solution = (a.transpose() * a).ldlt().solve(a.transpose() * y);
  const ch01::DescentResult r = ch01::gradient_descent(x, y, 0.5, 1e-10, 10000);
  REQUIRE_MESSAGE(r.converged, said("gradient_descent on 30 rows of two features with lr 0.5 did not converge in 10000 steps",
                                    descent_mistakes(r, x, y, 0.5, 1e-10, 10000)));
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
  INPUTS(x, y);
  const ch01::DescentResult capped = ch01::gradient_descent(x, y, 0.5, 1e-12, 5);
  CHECK_MESSAGE(!capped.converged, "gradient_descent with lr 0.5, tolerance 1e-12 and max_iterations = 5 must stop after 5 updates "
                                   "with converged = false");
  CHECK_MESSAGE(capped.iterations == 5, "gradient_descent with max_iterations = 5 made " << capped.iterations << " updates, expected 5");
  CHECK_MESSAGE(capped.loss.size() == 6, "5 updates record 6 losses (one before each update and one after the last), got " << capped.loss.size());
  const ch01::DescentResult none = ch01::gradient_descent(x, y, 0.5, 1e-12, 0);
  CHECK_MESSAGE(none.iterations == 0, "gradient_descent with max_iterations = 0 made " << none.iterations << " updates");
  CHECK_MESSAGE(none.loss.size() == 1, "max_iterations = 0 still records the starting loss: 1 loss, got " << none.loss.size());
}

TEST_CASE("1.4 a diverging run stops at its first non-finite loss and records it") {
  // lr = 10: w_t - 2 = -2 (-9)^t, L_t = 2 * 81^t, which overflows to inf at t = 162 (81^161 is
  // about 1.9e307). The run stops there, unconverged: 162 updates and 163 losses, the last inf.
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  INPUTS(x, y, 10.0, 1e-3, 100000);
  const ch01::DescentResult diverged = ch01::gradient_descent(x, y, 10.0, 1e-3, 100000);
  const ch01::DescentResult expected = descent_by_contract(x, y, 10.0, 1e-3, 100000);
  const std::string named = descent_mistakes(diverged, x, y, 10.0, 1e-3, 100000);
  CHECK_MESSAGE(!diverged.converged, said("gradient_descent with lr 10 diverges and must report converged = false", named));
  CHECK_MESSAGE(diverged.iterations == expected.iterations,
                said("gradient_descent with lr 10 made " + std::to_string(diverged.iterations) + " updates; the loss 2 * 81^t "
                     "first overflows after " + std::to_string(expected.iterations) + ": stop at the first loss that is not finite",
                     named));
  CHECK_MESSAGE((diverged.loss.size() == diverged.iterations + std::size_t{1} && !diverged.loss.empty() &&
                 !std::isfinite(diverged.loss.back())),
                said("gradient_descent with lr 10 must record iterations + 1 losses, the last one the first non-finite loss; got " +
                         std::to_string(diverged.loss.size()) + " losses for " + std::to_string(diverged.iterations) +
                         " updates, the last " + (diverged.loss.empty() ? std::string("none") : format_number(diverged.loss.back())),
                     named));
}

TEST_CASE("1.4 any positive learning rate and tolerance are valid, however small") {
  // A learning rate of 1e-12 barely moves w, but it is a learning rate: only 0 or below is invalid.
  const Matrix x = from_rows(2, 1, {-1, 1});
  const Vector y = Vector::Map(std::vector<double>{-2, 2}.data(), 2);
  INPUTS(x, y, 1e-12, 1e-300, 3);
  ch01::DescentResult r;
  const std::string thrown = thrown_by([&] { r = ch01::gradient_descent(x, y, 1e-12, 1e-300, 3); });
  REQUIRE_MESSAGE(thrown.empty(), said("gradient_descent with learning_rate 1e-12 and tolerance 1e-300 threw \"" + thrown +
                                           "\": every value above 0 is valid, however small",
                                       suspect_exact(thrown.empty(), {{kRateThreshold, false}})));
  CHECK_MESSAGE(r.iterations == 3, "gradient_descent on x = (-1, 1), y = (-2, 2) with learning_rate 1e-12 must make all "
                                   "3 updates allowed (|g| stays near 2, far above the tolerance), made " << r.iterations);
  CHECK_MESSAGE(!r.converged, "gradient_descent with learning_rate 1e-12 cannot converge in 3 updates: |g| stays near 2");
}

TEST_CASE("1.4 bad input throws") {
  const Matrix x = Matrix::Ones(3, 2);
  const Vector y = Vector::Ones(3);
  constexpr char kRows[] = "y must have one value per row of x";
  constexpr char kRate[] = "learning_rate and tolerance must be positive and finite (0, negatives, infinity and NaN are out)";
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::gradient_descent, Matrix(0, 2), Vector(0), 0.1, 1e-3, 10);
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::gradient_descent, Matrix(3, 0), y, 0.1, 1e-3, 10);
  CHECK_THROWS_CALL(ShapeError, kRows, ch01::gradient_descent, x, Vector(Vector::Ones(4)), 0.1, 1e-3, 10);
  CHECK_THROWS_CALL(ShapeError, kRows, ch01::gradient_descent, x, Vector(Vector::Ones(2)), 0.1, 1e-3, 10);
  Matrix bad = x;
  bad(0, 1) = kNaN;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::gradient_descent, bad, y, 0.1, 1e-3, 10);
  Vector bad_y = y;
  bad_y(2) = -kInf;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::gradient_descent, x, bad_y, 0.1, 1e-3, 10);
  for (double rate : {0.0, -1e-300, -1e300, kInf, kNaN}) {
    CHECK_THROWS_CALL(ValueError, kRate, ch01::gradient_descent, x, y, rate, 1e-3, 10);
    CHECK_THROWS_CALL(ValueError, kRate, ch01::gradient_descent, x, y, 0.1, rate, 10);
  }
  CHECK_THROWS_CALL(ValueError, "max_iterations must be 0 or more", ch01::gradient_descent, x, y, 0.1, 1e-3, -1);
  CHECK_THROWS_CALL(ValueError, "max_iterations must be 0 or more", ch01::gradient_descent, x, y, 0.1, 1e-3,
                    std::numeric_limits<int>::min());
}

// ---- 1.5 knn_predict ------------------------------------------------------------------------

TEST_CASE("1.5 the nearest neighbours vote, by Euclidean distance") {
  // Test point at the origin. A = (3, 0) class 0: Euclidean 3, Manhattan 3.
  // B = (2, 2) class 1: Euclidean 2.83, Manhattan 4. C = (0, 5) class 0: 5 and 5.
  const Matrix train = from_rows(3, 2, {3, 0, 2, 2, 0, 5});
  Vector labels(3);
  labels << 0, 1, 0;
  const Matrix test = from_rows(1, 2, {0, 0});
  INPUTS(train, labels, test);
  const Vector k1 = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(near(k1, Vector::Constant(1, 1.0), 0.0),
                said("knn_predict with k = 1 for (0, 0) among (3, 0) class 0, (2, 2) class 1, (0, 5) class 0 must predict 1: "
                     "(2, 2) is nearest by Euclidean distance, 2.83 against 3",
                     knn_mistakes(k1, train, labels, test, 1)));
  const Vector k3 = ch01::knn_predict(train, labels, test, 3);
  CHECK_MESSAGE(near(k3, Vector::Zero(1), 0.0), "with k = 3 the neighbours' classes are 0, 1, 0: class 0 wins two to one");
}

TEST_CASE("1.5 the most votes win, however many classes came before") {
  // Six neighbours at 1..6 from 0 on a line: classes 0, 1, 1, 2, 2, 2. Class 2 has the most votes
  // (3 against 2 and 1); a tally that counts a class's votes wrongly once earlier classes were
  // seen (the running best kept as a position, not a count) keeps class 1.
  const Matrix train = from_rows(6, 1, {1, 2, 3, 4, 5, 6});
  Vector labels(6);
  labels << 0, 1, 1, 2, 2, 2;
  const Matrix test = from_rows(1, 1, {0});
  INPUTS(train, labels, test, 6);
  const Vector p = ch01::knn_predict(train, labels, test, 6);
  CHECK_MESSAGE(near(p, Vector::Constant(1, 2.0), 0.0),
                said("knn_predict with k = 6: the neighbours' classes are 0, 1, 1, 2, 2, 2, so class 2 wins with 3 votes "
                     "against 2 and 1",
                     knn_mistakes(p, train, labels, test, 6)));
}

TEST_CASE("1.5 ties: equal distances by index, equal votes to the smallest class") {
  // Test at 0 on a line; train at -1 (class 2), +1 (class 1), +3 (class 0), -3 (class 1).
  const Matrix train = from_rows(4, 1, {-1, 1, 3, -3});
  Vector labels(4);
  labels << 2, 1, 0, 1;
  const Matrix test = from_rows(1, 1, {0});
  INPUTS(train, labels, test);
  const Vector k1 = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(near(k1, Vector::Constant(1, 2.0), 0.0),
                said("knn_predict with k = 1: the training rows -1 and +1 are equally near 0, so the lower index (row 0, "
                     "class 2) comes first",
                     knn_mistakes(k1, train, labels, test, 1)));
  const Vector k2 = ch01::knn_predict(train, labels, test, 2);  // votes: class 2 and class 1
  CHECK_MESSAGE(near(k2, Vector::Constant(1, 1.0), 0.0),
                said("knn_predict with k = 2: the neighbours' classes are 2 and 1, one vote each, and a tie goes to the "
                     "smallest class, 1",
                     knn_mistakes(k2, train, labels, test, 2)));
  const Vector k4 = ch01::knn_predict(train, labels, test, 4);  // 2, 1, 0, 1: class 1 has two
  CHECK_MESSAGE(near(k4, Vector::Constant(1, 1.0), 0.0), "with k = 4 the classes are 2, 1, 0, 1: class 1 has two votes, got " << k4(0));
}

TEST_CASE("1.5 many equal distances keep their index order") {
  // 40 training rows, all at distance 1 from the test point (at +1 or -1 on a line): every
  // distance ties, so the k = 7 nearest are rows 0..6 by the contract. Rows 0..6 are class 3 and
  // the rest class 5: any order but the index order lets class 5 in. std::sort is not stable:
  // beyond 16 elements it reorders equal ones.
  Matrix train(40, 1);
  Vector labels(40);
  for (Index i = 0; i < 40; ++i) {
    train(i, 0) = i % 2 == 0 ? 1.0 : -1.0;
    labels(i) = i < 7 ? 3.0 : 5.0;
  }
  const Matrix test = from_rows(1, 1, {0});
  INPUTS(train, labels, test, 7);
  const Vector p = ch01::knn_predict(train, labels, test, 7);
  CHECK_MESSAGE(near(p, Vector::Constant(1, 3.0), 0.0),
                said("knn_predict with k = 7 for 0 among 40 training rows all at distance 1 (rows 0..6 class 3, the others "
                     "class 5) must predict 3: on equal distances the lower index comes first, so rows 0..6 vote",
                     knn_mistakes(p, train, labels, test, 7)));
}

TEST_CASE("1.5 one prediction per test row and k equal to the training rows") {
  const Matrix train = from_rows(5, 1, {0, 1, 2, 10, 11});
  Vector labels(5);
  labels << 0, 0, 0, 1, 1;
  const Matrix test = from_rows(3, 1, {0.5, 10.4, 6.5});
  INPUTS(train, labels, test);
  Vector expected(3);
  expected << 0, 1, 1;  // 6.5 is nearer to 10 (3.5) than to 2 (4.5)
  const Vector p = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(near(p, expected), said("knn_predict with k = 1 must give one class per test row: 0, 1, 1 (6.5 is nearer to 10 than to 2)",
                                        knn_mistakes(p, train, labels, test, 1)));
  CHECK_MESSAGE(near(ch01::knn_predict(train, labels, test, 5), Vector::Zero(3)), "with k = 5 every training row votes for every test row: class 0 wins 3 to 2");
}

TEST_CASE("1.5 distances and classes of any size the contract allows") {
  // Points 1e5 apart: squared distances near 1e10, above a "no neighbour yet" sentinel such as 1e9.
  // Classes are whole numbers of any size: 1e12 is a class like 0 (a vote table indexed by the
  // class would need 1e12 entries).
  const Matrix train = from_rows(3, 1, {1e5, -3e5, 5e5});
  Vector labels(3);
  labels << 1e12, 7, 0;
  const Matrix test = from_rows(2, 1, {0, 4e5});
  INPUTS(train, labels, test, 1);
  Vector p;
  const std::string thrown = thrown_by([&] { p = ch01::knn_predict(train, labels, test, 1); });
  REQUIRE_MESSAGE(thrown.empty(), "knn_predict threw \"" << thrown << "\" on valid input: the class 1e12 is a whole number "
                                  "0 or above, and squared distances near 1e10 are ordinary distances");
  Vector expected(2);
  expected << 1e12, 0;
  CHECK_MESSAGE(near(p, expected, 0.0), said("knn_predict with k = 1 for 0 and 4e5 among 1e5 (class 1e12), -3e5 (class 7) and 5e5 "
                                             "(class 0) must predict 1e12 and 0",
                                             knn_mistakes(p, train, labels, test, 1)));
}

TEST_CASE("1.5 the largest-range feature dominates unscaled distances") {
  // Feature 0 separates the classes (0 vs 1); feature 1 is noise a thousand times larger.
  const Matrix train = from_rows(4, 2, {0, 1000, 0, 3000, 1, 1100, 1, 2900});
  Vector labels(4);
  labels << 0, 0, 1, 1;
  const Matrix test = from_rows(1, 2, {0, 1120});
  INPUTS(train, labels, test);
  const Vector p = ch01::knn_predict(train, labels, test, 1);
  CHECK_MESSAGE(near(p, Vector::Constant(1, 1.0), 0.0),
                said("unscaled, the nearest training row to (0, 1120) is (1, 1100), of class 1: the distance is Euclidean on the "
                     "raw values", knn_mistakes(p, train, labels, test, 1)));
}

TEST_CASE("1.5 k out of range, bad shapes and bad classes throw") {
  const Matrix train = Matrix::Zero(3, 2), test = Matrix::Zero(1, 2);
  const Vector labels = Vector::Zero(3);
  constexpr char kK[] = "k must be between 1 and the number of training rows";
  constexpr char kShapes[] = "train_x and test_x must have the same columns and train_y one class per training row";
  constexpr char kClasses[] = "every class must be a whole number 0 or above";
  CHECK_THROWS_CALL(ShapeError, kK, ch01::knn_predict, train, labels, test, 0);
  CHECK_THROWS_CALL(ShapeError, kK, ch01::knn_predict, train, labels, test, -1);
  CHECK_THROWS_CALL(ShapeError, kK, ch01::knn_predict, train, labels, test, std::numeric_limits<int>::min());
  CHECK_THROWS_CALL(ShapeError, kK, ch01::knn_predict, train, labels, test, 4);  // k > n
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::knn_predict, Matrix(0, 2), Vector(0), test, 1);
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::knn_predict, train, labels, Matrix(0, 2), 1);
  CHECK_THROWS_CALL(ShapeError, kEmpty, ch01::knn_predict, Matrix(3, 0), labels, Matrix(1, 0), 1);
  CHECK_THROWS_CALL(ShapeError, kShapes, ch01::knn_predict, train, labels, Matrix(Matrix::Zero(1, 3)), 1);
  CHECK_THROWS_CALL(ShapeError, kShapes, ch01::knn_predict, train, labels, Matrix(Matrix::Zero(1, 1)), 1);
  // test_x (2, 1) holds 2 entries, as a (1, 2) row would: only its columns tell it is wrong.
  CHECK_THROWS_CALL(ShapeError, kShapes, ch01::knn_predict, train, labels, Matrix(Matrix::Zero(2, 1)), 1);
  CHECK_THROWS_CALL(ShapeError, kShapes, ch01::knn_predict, train, Vector(Vector::Zero(4)), test, 1);
  CHECK_THROWS_CALL(ShapeError, kShapes, ch01::knn_predict, train, Vector(Vector::Zero(2)), test, 1);
  Vector bad_labels = labels;
  bad_labels(1) = 0.5;
  CHECK_THROWS_CALL(ValueError, kClasses, ch01::knn_predict, train, bad_labels, test, 1);
  bad_labels(1) = -1e-300;
  CHECK_THROWS_CALL(ValueError, kClasses, ch01::knn_predict, train, bad_labels, test, 1);
  bad_labels(1) = -1e300;
  CHECK_THROWS_CALL(ValueError, kClasses, ch01::knn_predict, train, bad_labels, test, 1);
  // A bad class in the first or the last row: the check must visit every label. Skipping that row
  // is what lets it through when a bad class in the middle row is caught.
  Vector middle = labels, first = labels, last = labels;
  middle(1) = first(0) = last(2) = 0.5;
  const bool checks_middle = testing::starts_with(testing::thrown_message<ValueError>([&] { ch01::knn_predict(train, middle, test, 1); }), "knn_predict: ");
  const auto if_middle = [&](const Named& mistake) { return checks_middle ? std::optional<Named>(mistake) : std::nullopt; };
  CHECK_THROWS_CALL(ValueError, Why(kClasses, if_middle(kClassFirstRow)), ch01::knn_predict, train, first, test, 1);
  CHECK_THROWS_CALL(ValueError, Why(kClasses, if_middle(kClassLastRow)), ch01::knn_predict, train, last, test, 1);
  Matrix bad = test;
  bad(0, 0) = kNaN;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::knn_predict, train, labels, bad, 1);
  Matrix bad_train = train;
  bad_train(2, 1) = kInf;
  CHECK_THROWS_CALL(ValueError, kNonFinite, ch01::knn_predict, bad_train, labels, test, 1);
}

}  // TEST_SUITE
