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
#include <utility>

#include <algorithm>
#include <cmath>
#include <exception>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "feature_scaling.hpp"
#include "scalebook/properties.hpp"
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
constexpr Named kVarianceAsScale{"variance_as_scale", "the variance as the scale: the square root of the mean squared deviation left out"};
constexpr Named kConstant{"constant_divides_by_zero", "a constant feature keeps scale 0, so scaling it divides by zero: its scale must be 1"};
constexpr Named kTinySpreadIsOne{"tiny_spread_unscaled", "a tiny but non-zero spread replaced by scale 1, as if the feature were constant"};
constexpr Named kOnePass{"one_pass_variance", "the variance as mean(x^2) - mean(x)^2, which loses every digit to cancellation for large values: subtract the mean first, then square"};
constexpr Named kFloat{"float_accumulator", "the means and the sums of squares kept in a float (about 7 significant digits) instead of a double (about 16)"};
constexpr Named kMultiplied{"multiplied_by_scale", "the centred values multiplied by the scale instead of divided by it"};
constexpr Named kDividedFirst{"divided_then_centred", "x / scale - mean instead of (x - mean) / scale: subtract the mean first, then divide"};
constexpr Named kOwnMean{"centred_on_own_mean", "x centred on its own column means instead of the fitted ones: the scaling's mean is what is subtracted"};
constexpr Named kApplyFloat{"apply_in_float", "the scaling computed in float: (x - mean) / scale rounded to about 7 significant digits"};
constexpr Named kScaleThreshold{"scale_threshold", "a tiny positive scale rejected as if it were 0: every scale above 0 is valid, however small"};
constexpr Named kAllRows{"stats_from_all_rows", "statistics from all rows (train and test together): the test rows leak into the scaling"};
constexpr Named kTestOwnStats{"test_scaled_by_own_statistics", "the test rows scaled with statistics fitted on the test rows themselves: they must use the training rows' scaling"};
constexpr Named kTestRows{"fitted_on_test", "the scaling fitted on the test rows: it must come from the training rows only"};
constexpr Named kNoOneOverN{"gradient_not_averaged", "the gradient summed over the rows instead of averaged (not divided by n)"};
constexpr Named kNoHalf{"loss_without_half", "the loss without its 1/2: L = (1/2n) sum r^2, so that its gradient is X^T r / n"};
constexpr Named kBiasFixed{"bias_not_updated", "the bias never updated: b -= learning_rate g_b belongs to every step"};
constexpr Named kLossNotAveraged{"loss_not_averaged", "the loss summed over the rows (r^2 / 2) instead of averaged: L = (1/2n) sum r^2"};
constexpr Named kOneUpdateMore{"one_update_more", "max_iterations + 1 updates: the limit tested after updating instead of before"};
constexpr Named kSequential{"sequential_update", "the bias's gradient taken after the weights were updated: both gradients come from the same point"};
constexpr Named kLimitFirst{"limit_before_convergence", "max_iterations tested before the gradient: a run that converges at its last allowed update must say converged = true"};
constexpr Named kNoFinalLoss{"diverged_loss_dropped", "the non-finite loss that stopped a diverging run left out of loss: record it, then stop"};
constexpr Named kRateThreshold{"rate_threshold", "a tiny positive learning rate or tolerance rejected: every value above 0 is valid, however small"};
constexpr Named kManhattan{"manhattan_distance", "the Manhattan distance (sum of absolute differences) instead of the Euclidean one"};
constexpr Named kOneNeighbour{"one_neighbour", "the class of the single nearest neighbour, whatever k: the k nearest vote"};
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
// SCALED: the deviations divided by the largest before they are squared (as the reference does).
ch01::Scaling float_scaling(const Matrix& x, bool scaled = false) {
  ch01::Scaling s{RowVector(x.cols()), RowVector(x.cols())};
  for (Index c = 0; c < x.cols(); ++c) {
    float sum = 0.0f;
    for (Index i = 0; i < x.rows(); ++i) sum += static_cast<float>(x(i, c));
    s.mean(c) = sum / static_cast<float>(x.rows());
    double largest = 0.0;
    for (Index i = 0; scaled && i < x.rows(); ++i) largest = std::max(largest, std::abs(x(i, c) - s.mean(c)));
    const double unit = largest > 0.0 ? largest : 1.0;
    float squares = 0.0f;
    for (Index i = 0; i < x.rows(); ++i) squares += ((x(i, c) - s.mean(c)) / unit) * ((x(i, c) - s.mean(c)) / unit);
    const double sd = unit * std::sqrt(squares / static_cast<double>(x.rows()));
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



// ---- the known mistakes of each exercise, told apart on batteries of inputs ------------------------
// (scalebook/diagnosis.hpp: a mistake is named only when the output agrees with it on the failing
// input and on every input of its exercise's battery; the build proves each battery separates.)

// A scaling as one matrix: its means in row 0, its scales in row 1.
Matrix as_rows(const RowVector& mean, const RowVector& scale) {
  Matrix m(2, mean.cols());
  if (mean.cols() == scale.cols()) m << mean, scale;
  else m = Matrix::Constant(2, 1, kNaN);  // no scaling at all: matches nothing
  return m;
}
Matrix as_rows(const ch01::Scaling& s) { return as_rows(s.mean, s.scale); }
// The contract's scale of a standard deviation: 1 for a spread of 0.
RowVector contract_scale(RowVector sd) {
  for (Index c = 0; c < sd.cols(); ++c) sd(c) = sd(c) > 0.0 ? sd(c) : 1.0;
  return sd;
}

std::vector<std::tuple<Matrix>> scaling_battery() {
  return {{from_rows(4, 2, {1, 10, 2, 10, 3, 30, 4, 30})},
          {from_rows(3, 3, {1, 0, 5, 2, 0, 7, 6, 3, 0})},
          {from_rows(3, 2, {5, 1, 5, 2, 5, 3})},
          {from_rows(4, 1, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4})},
          {from_rows(4, 1, {1e-12, 2e-12, 3e-12, 4e-12})},
          {gaussian_rows(7, 3, 3.0, 2.0, 15)}};
}

const testing::Diagnosis<Matrix, Matrix> kScalingSlips{
    "1.1", [](const Matrix& x) { return as_rows(ch01::fit_scaling(x)); },
    [](const Matrix& x) { return as_rows(column_means(x), contract_scale(column_sds(x, 0.0))); },
    {{kDdof1, [](const Matrix& x) { return as_rows(column_means(x), contract_scale(column_sds(x, 1.0))); }},
     {kPerSample, [](const Matrix& x) {
        const Matrix t = x.transpose();
        return as_rows(column_means(t), contract_scale(column_sds(t, 0.0)));
      }},
     {kConstant, [](const Matrix& x) { return as_rows(column_means(x), column_sds(x, 0.0)); }},
     {kTinySpreadIsOne, [](const Matrix& x) {
        RowVector sd = column_sds(x, 0.0);
        for (Index c = 0; c < sd.cols(); ++c) sd(c) = sd(c) > 1e-9 ? sd(c) : 1.0;
        return as_rows(column_means(x), sd);
      }},
     {kOnePass, [](const Matrix& x) { return as_rows(column_means(x), one_pass_sds(x)); }},
     {kFloat, [](const Matrix& x) { return as_rows(float_scaling(x)); }},
     {kFloat, [](const Matrix& x) { return as_rows(float_scaling(x, true)); }},
     {kVarianceAsScale, [](const Matrix& x) {
        return as_rows(column_means(x), contract_scale(RowVector(column_sds(x, 0.0).array().square())));
      }}},
    scaling_battery, testing::same_matrix(1e-12)};

// 1.2's (x - mean) / scale and its known mistakes, entry by entry.
Matrix applied_by(const Matrix& x, const RowVector& mean, const RowVector& scale,
                  const std::function<double(double, double, double)>& entry) {
  Matrix out(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i)
    for (Index c = 0; c < x.cols(); ++c) out(i, c) = entry(x(i, c), mean(c), scale(c));
  return out;
}

const testing::Diagnosis<Matrix, Matrix, RowVector, RowVector> kApplySlips{
    "1.2", [](const Matrix& x, const RowVector& mean, const RowVector& scale) { return ch01::apply_scaling(x, {mean, scale}); },
    [](const Matrix& x, const RowVector& mean, const RowVector& scale) {
      return applied_by(x, mean, scale, [](double v, double m, double s) { return (v - m) / s; });
    },
    {{kMultiplied, [](const Matrix& x, const RowVector& mean, const RowVector& scale) {
        return applied_by(x, mean, scale, [](double v, double m, double s) { return (v - m) * s; });
      }},
     {kApplyFloat, [](const Matrix& x, const RowVector& mean, const RowVector& scale) {
        return applied_by(x, mean, scale, [](double v, double m, double s) {
          return static_cast<double>(static_cast<float>(v - m) / static_cast<float>(s));
        });
      }},
     {kDividedFirst, [](const Matrix& x, const RowVector& mean, const RowVector& scale) {
        return applied_by(x, mean, scale, [](double v, double m, double s) { return v / s - m; });
      }},
     {kOwnMean, [](const Matrix& x, const RowVector&, const RowVector& scale) {
        return applied_by(x, column_means(x), scale, [](double v, double m, double s) { return (v - m) / s; });
      }}},
    [] {
      return std::vector<std::tuple<Matrix, RowVector, RowVector>>{
          {from_rows(2, 3, {3, -2, 100, 0, 0, 101}), row({1, -2, 100}), row({2, 0.5, 1})},
          {gaussian_rows(4, 3, 1.0, 2.0, 12), row({0.1, -1.0 / 3.0, 12345.678}), row({3, 0.7, 1e-3})},
          {from_rows(3, 2, {1, 5, 2, 6, 4, 9}), row({1.5, 7}), row({4, 0.25})}};
    },
    testing::same_matrix(1e-14)};

// A split as one matrix: the scaled training rows, the scaled test rows, the means, the scales.
Matrix as_rows(const Matrix& train, const Matrix& test, const RowVector& mean, const RowVector& scale) {
  if (train.cols() != test.cols() || train.cols() != mean.cols() || mean.cols() != scale.cols())
    return Matrix::Constant(1, 1, kNaN);
  Matrix m(train.rows() + test.rows() + 2, train.cols());
  m << train, test, mean, scale;
  return m;
}
// The split whose training rows are scaled by FIT and test rows by TEST_FIT, reporting FIT.
Matrix split_by(const Matrix& train, const Matrix& test, const Matrix& fit, const Matrix& test_fit) {
  const RowVector mean = column_means(fit), scale = contract_scale(column_sds(fit, 0.0));
  const RowVector test_mean = column_means(test_fit), test_scale = contract_scale(column_sds(test_fit, 0.0));
  return as_rows(scaled_by(train, mean, scale), scaled_by(test, test_mean, test_scale), mean, scale);
}

const testing::Diagnosis<Matrix, Matrix, Matrix> kSplitSlips{
    "1.3",
    [](const Matrix& train, const Matrix& test) {
      const ch01::ScaledSplit s = ch01::scale_train_test(train, test);
      return as_rows(s.train, s.test, s.scaling.mean, s.scaling.scale);
    },
    [](const Matrix& train, const Matrix& test) { return split_by(train, test, train, train); },
    {{kAllRows, [](const Matrix& train, const Matrix& test) { const Matrix all = stack(train, test); return split_by(train, test, all, all); }},
     {kTestRows, [](const Matrix& train, const Matrix& test) { return split_by(train, test, test, test); }},
     {kTestOwnStats, [](const Matrix& train, const Matrix& test) { return split_by(train, test, train, test); }}},
    [] {
      return std::vector<std::tuple<Matrix, Matrix>>{{gaussian_rows(8, 3, 0.0, 1.0, 11), gaussian_rows(3, 3, 100.0, 10.0, 12)},
                                                     {from_rows(3, 2, {1, 2, 3, 4, 5, 9}), from_rows(2, 2, {0, 0, 10, -4})}};
    },
    testing::same_matrix(1e-10)};

using DescentInput = std::tuple<Matrix, Vector, double, double, int>;
Vector column(std::initializer_list<double> values) { return row(values).transpose(); }

// gradient_descent by the contract with the new known mistakes of 1.4 too.
ch01::DescentResult descent_with(const Matrix& x, const Vector& y, double lr, double tolerance, int max_iterations,
                                 const Named& mistake) {
  if (std::string(mistake.id) == kBiasFixed.id || std::string(mistake.id) == kLossNotAveraged.id ||
      std::string(mistake.id) == kOneUpdateMore.id) {
    const double n = static_cast<double>(x.rows());
    ch01::DescentResult r;
    r.weights = Vector::Zero(x.cols());
    for (int guard = 0; guard < 1000000; ++guard) {
      const Vector residual = (x * r.weights).array() + r.bias - y.array();
      const double loss = residual.squaredNorm() / 2.0 / (std::string(mistake.id) == kLossNotAveraged.id ? 1.0 : n);
      r.loss.push_back(loss);
      if (!std::isfinite(loss)) return r;
      const Vector g_w = x.transpose() * residual / n;
      const double g_b = residual.sum() / n;
      if (std::sqrt(g_w.squaredNorm() + g_b * g_b) <= tolerance) {
        r.converged = true;
        return r;
      }
      if (std::string(mistake.id) != kOneUpdateMore.id && r.iterations == max_iterations) return r;
      r.weights -= lr * g_w;
      if (std::string(mistake.id) != kBiasFixed.id) r.bias -= lr * g_b;
      if (std::string(mistake.id) == kOneUpdateMore.id && r.iterations++ == max_iterations) return r;
      if (std::string(mistake.id) != kOneUpdateMore.id) ++r.iterations;
    }
    return r;
  }
  const Slip slip = std::string(mistake.id) == kNoOneOverN.id ? Slip::Summed
                    : std::string(mistake.id) == kNoHalf.id    ? Slip::NoHalf
                    : std::string(mistake.id) == kSequential.id ? Slip::Sequential
                    : std::string(mistake.id) == kLimitFirst.id ? Slip::LimitFirst
                                                                : Slip::DropFinalLoss;
  return descent_by_contract(x, y, lr, tolerance, max_iterations, slip);
}

const testing::Diagnosis<ch01::DescentResult, Matrix, Vector, double, double, int> kDescentSlips = [] {
  using D = testing::Diagnosis<ch01::DescentResult, Matrix, Vector, double, double, int>;
  std::vector<D::Slip> slips;
  for (const Named& mistake : {kNoOneOverN, kNoHalf, kSequential, kLimitFirst, kNoFinalLoss, kBiasFixed, kLossNotAveraged,
                               kOneUpdateMore})
    slips.push_back({mistake, [mistake](const Matrix& x, const Vector& y, const double& lr, const double& tol, const int& most) {
                       return descent_with(x, y, lr, tol, most, mistake);
                     }});
  return D{"1.4",
           [](const Matrix& x, const Vector& y, const double& lr, const double& tol, const int& most) {
             return ch01::gradient_descent(x, y, lr, tol, most);
           },
           [](const Matrix& x, const Vector& y, const double& lr, const double& tol, const int& most) {
             return descent_by_contract(x, y, lr, tol, most);
           },
           std::move(slips),
           [] {
             return std::vector<DescentInput>{{from_rows(2, 1, {-1, 1}), column({-2, 2}), 0.5, 1e-3, 100},
                                              {from_rows(2, 1, {-1, 1}), column({-2, 2}), 0.5, 1e-3, 11},
                                              {from_rows(3, 1, {1, 2, 4}), column({1, 3, 6}), 0.1, 1e-12, 40},
                                              {from_rows(4, 1, {-1, -1, 1, 1}), column({1, 1, 5, 5}), 0.5, 1e-9, 200},
                                              {from_rows(2, 1, {-1, 1}), column({-2, 2}), 10.0, 1e-3, 100000}};
           },
           same_run};
}();

using KnnInput = std::tuple<Matrix, Vector, Matrix, int>;

// The many-ties input of 1.5: 40 rows at distance 1 from 0, rows 0..6 class 3, the rest class 5.
KnnInput forty_ties() {
  Matrix train(40, 1);
  Vector labels(40);
  for (Index i = 0; i < 40; ++i) {
    train(i, 0) = i % 2 == 0 ? 1.0 : -1.0;
    labels(i) = i < 7 ? 3.0 : 5.0;
  }
  return {train, labels, from_rows(1, 1, {0}), 7};
}

const testing::Diagnosis<Matrix, Matrix, Vector, Matrix, int> kKnnSlips{
    "1.5", [](const Matrix& tx, const Vector& ty, const Matrix& q, const int& k) { return Matrix(ch01::knn_predict(tx, ty, q, k)); },
    [](const Matrix& tx, const Vector& ty, const Matrix& q, const int& k) { return Matrix(knn_by_contract(tx, ty, q, k)); },
    {{kManhattan, [](const Matrix& tx, const Vector& ty, const Matrix& q, const int& k) { return Matrix(knn_by_contract(tx, ty, q, k, KnnSlip::Manhattan)); }},
     {kTieLargest, [](const Matrix& tx, const Vector& ty, const Matrix& q, const int& k) { return Matrix(knn_by_contract(tx, ty, q, k, KnnSlip::TieLargest)); }},
     {kUnstableSort, [](const Matrix& tx, const Vector& ty, const Matrix& q, const int& k) { return Matrix(knn_by_contract(tx, ty, q, k, KnnSlip::UnstableSort)); }},
     {kOneNeighbour, [](const Matrix& tx, const Vector& ty, const Matrix& q, const int&) { return Matrix(knn_by_contract(tx, ty, q, 1)); }}},
    [] {
      // Besides those: a far last row of its own class (code that leaves a distance unset), ties of
      // three rows at one distance (an order other than the index's), one vote each for three
      // classes and a class that wins 3 to 1 (votes counted otherwise than one per neighbour).
      return std::vector<KnnInput>{{from_rows(3, 2, {3, 0, 2, 2, 0, 5}), column({0, 1, 0}), from_rows(1, 2, {0, 0}), 1},
                                   {from_rows(4, 2, {3, 0, 2, 2, 0, 5, 9, 9}), column({0, 1, 0, 2}), from_rows(1, 2, {0, 0}), 1},
                                   {from_rows(3, 1, {1, -1, 1}), column({0, 1, 2}), from_rows(1, 1, {0}), 1},
                                   {from_rows(3, 1, {1, 2, 3}), column({0, 1, 2}), from_rows(1, 1, {0}), 3},
                                   {from_rows(4, 1, {1, 2, 3, 4}), column({0, 0, 0, 1}), from_rows(1, 1, {0}), 4},
                                   {from_rows(4, 1, {-1, 1, 3, -3}), column({2, 1, 0, 1}), from_rows(1, 1, {0}), 2},
                                   {from_rows(6, 1, {1, 2, 3, 4, 5, 6}), column({0, 1, 1, 2, 2, 2}), from_rows(1, 1, {0}), 6},
                                   {from_rows(5, 1, {0, 1, 2, 10, 11}), column({0, 0, 0, 1, 1}), from_rows(3, 1, {0.5, 10.4, 6.5}), 3},
                                   forty_ties()};
    },
    testing::same_matrix(0.0)};
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
                                                kScalingSlips.name(train)));
  CHECK_MESSAGE(near(s.scale, row({std::sqrt(1.25), 10})),
                said("fit_scaling of the columns (1, 2, 3, 4) and (10, 10, 30, 30) must give the scales (sqrt(5 / 4), 10): "
                     "the population standard deviation divides the squared deviations by n = 4",
                     kScalingSlips.name(train)));
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
                     kScalingSlips.name(train)));
  CHECK_MESSAGE(near(s.scale, column_sds(train, 0.0)),
                said("fit_scaling of the 3 x 3 matrix below gave scales that are not its columns' population standard deviations",
                     kScalingSlips.name(train)));
}

TEST_CASE("1.1 a constant feature gets scale 1 and a single row is constant everywhere") {
  const Matrix train = from_rows(3, 2, {5, 1, 5, 2, 5, 3});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector zero_kept = row({0, std::sqrt(2.0 / 3.0)});
  CHECK_MESSAGE(near(s.scale, row({1, std::sqrt(2.0 / 3.0)})),
                said("fit_scaling of the columns (5, 5, 5) and (1, 2, 3) must give the scales (1, sqrt(2 / 3)): a constant "
                     "feature (standard deviation 0) gets scale 1",
                     kScalingSlips.name(train)));
  const Matrix one_row = from_rows(1, 3, {-1, 0, 7});
  INPUTS(one_row);
  const ch01::Scaling one = ch01::fit_scaling(one_row);  // n = 1: sd 0 everywhere
  CHECK_MESSAGE(near(one.scale, row({1, 1, 1})),
                said("fit_scaling of the single row (-1, 0, 7) must give the scales (1, 1, 1): with one row every feature is constant",
                     kScalingSlips.name(Matrix(from_rows(1, 3, {-1, 0, 7})))));
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
                     kScalingSlips.name(train)));
  CHECK_MESSAGE(std::abs(s.scale(0) - std::sqrt(1.25)) < 1e-9,
                said("fit_scaling of one feature 1e9 + (1, 2, 3, 4) gave the scale " + format_number(s.scale(0)) +
                         ", not sqrt(1.25) = " + format_number(std::sqrt(1.25)) + " as for 1, 2, 3, 4: the deviations from "
                         "the mean are small, their squares must keep their digits",
                     kScalingSlips.name(train)));
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
                     kScalingSlips.name(train)));
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
                     kScalingSlips.name(train)));
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
                                         kScalingSlips.name(train)));
  CHECK_MESSAGE(near(s.scale, sd), said("fit_scaling of 50 rows drawn from N(3, 4) gave scales that differ from the population "
                                        "standard deviations" + digits_of_agreement(s.scale, sd),
                                        kScalingSlips.name(train)));
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
                                        kApplySlips.name(x, s.mean, s.scale)));
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
                     kApplySlips.name(x, s.mean, s.scale)));
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
  // What a threshold above 0 gives on this input: a ValueError instead of a result, where the same
  // rows with the scales (1, 1, 1) are scaled (code that refuses every input refuses both).
  const bool ordinary_scaled = thrown_by([&] { ch01::apply_scaling(x, ch01::Scaling{s.mean, row({1, 1, 1})}); }).empty();
  REQUIRE_MESSAGE(thrown.empty(), said("apply_scaling with the scales (1e-12, 1, 1e-310) threw \"" + thrown + "\": every scale "
                                       "above 0 is valid, however small",
                                       suspect_exact(thrown.empty() || !ordinary_scaled, {{kScaleThreshold, false}})));
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
                     kSplitSlips.name(train, test)));
  CHECK_MESSAGE(near(split.scaling.scale, sd, 1e-10),
                said("scale_train_test's scaling.scale differs from the training rows' population standard deviations",
                     kSplitSlips.name(train, test)));
  CHECK_MESSAGE(near(split.test, scaled_by(test, mean, sd), 1e-10),
                said("scale_train_test's test rows differ from (test - the training means) / the training standard deviations",
                     kSplitSlips.name(train, test)));
  CHECK_MESSAGE(near(split.train, scaled_by(train, mean, sd), 1e-10),
                said("scale_train_test's training rows differ from (train - the training means) / the training standard deviations",
                     kSplitSlips.name(train, test)));
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
  const std::string named = kDescentSlips.name(x, y, 0.5, 1e-3, 100);
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
                     kDescentSlips.name(x, y, 0.5, 1e-3, 11)));
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
  const std::string named = kDescentSlips.name(x, y, 0.5, 1e-9, 200);
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
  const std::string named = kDescentSlips.name(x, y, 0.1, 1e-12, 40);
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
                                    kDescentSlips.name(x, y, 0.5, 1e-10, 10000)));
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
  const std::string named = kDescentSlips.name(x, y, 10.0, 1e-3, 100000);
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
  // Named where the same descent with learning_rate 0.1 and tolerance 1e-6 runs.
  const bool ordinary_runs = thrown_by([&] { ch01::gradient_descent(x, y, 0.1, 1e-6, 3); }).empty();
  REQUIRE_MESSAGE(thrown.empty(), said("gradient_descent with learning_rate 1e-12 and tolerance 1e-300 threw \"" + thrown +
                                           "\": every value above 0 is valid, however small",
                                       suspect_exact(thrown.empty() || !ordinary_runs, {{kRateThreshold, false}})));
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
                     kKnnSlips.name(train, labels, test, 1)));
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
                     kKnnSlips.name(train, labels, test, 6)));
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
                     kKnnSlips.name(train, labels, test, 1)));
  const Vector k2 = ch01::knn_predict(train, labels, test, 2);  // votes: class 2 and class 1
  CHECK_MESSAGE(near(k2, Vector::Constant(1, 1.0), 0.0),
                said("knn_predict with k = 2: the neighbours' classes are 2 and 1, one vote each, and a tie goes to the "
                     "smallest class, 1",
                     kKnnSlips.name(train, labels, test, 2)));
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
                     kKnnSlips.name(train, labels, test, 7)));
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
                                        kKnnSlips.name(train, labels, test, 1)));
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
                                             kKnnSlips.name(train, labels, test, 1)));
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
                     "raw values", kKnnSlips.name(train, labels, test, 1)));
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

TEST_CASE("1.1 spreads at both ends of the double range are kept") {
  // A spread of 1e-300 (or 5e-311, a subnormal one) is tiny but not 0: it is kept. Squared, such
  // deviations underflow to 0 (1e-600 is no double), and deviations of 1e200 overflow to infinity
  // (1e400 is none either), while the standard deviations themselves are ordinary doubles: the
  // deviations must be scaled (by the largest, say) before they are squared.
  const Matrix train = from_rows(4, 3, {1e-300, -1e200, 0,
                                        2e-300, 1e200, 1e-310,
                                        3e-300, -1e200, 0,
                                        4e-300, 1e200, 1e-310});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  const RowVector expected = row({1e-300 * std::sqrt(1.25), 1e200, 5e-311});
  CHECK_MESSAGE(near(s.scale, expected, 1e-9),
                said("fit_scaling of the features 1e-300 (1, 2, 3, 4), 1e200 (-1, 1, -1, 1) and (0, 1e-310, 0, 1e-310) must "
                     "give the scales (1e-300 sqrt(1.25), 1e200, 5e-311): only a spread of exactly 0 becomes 1, and squares "
                     "that leave the double range must not decide it (scale the deviations before squaring them)",
                     kScalingSlips.name(train)));
  CHECK_MESSAGE(near(s.mean, row({2.5e-300, 0, 5e-311}), 1e-12), "fit_scaling of the same features must give the means (2.5e-300, 0, 5e-311)");
}

TEST_CASE("1.1 features near the largest double have a mean and a spread") {
  // 1.5e308 + 1.7e308 overflows to infinity (the largest double is 1.8e308), while their mean
  // 1.6e308 and spread 1e307 are ordinary doubles; in the first and in the last feature, so that
  // every feature's mean is looked at.
  const Matrix train = from_rows(2, 3, {1.5e308, 1, -1.7e308,
                                        1.7e308, 2, -1.5e308});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  CHECK_MESSAGE(near(s.mean, row({1.6e308, 1.5, -1.6e308}), 1e-12),
                said("fit_scaling of the features (1.5e308, 1.7e308), (1, 2) and (-1.7e308, -1.5e308) must give the means "
                     "(1.6e308, 1.5, -1.6e308): a sum past the largest double must not decide a mean that is a double",
                     kScalingSlips.name(train)));
  CHECK_MESSAGE(near(s.scale, row({1e307, 0.5, 1e307}), 1e-12),
                said("fit_scaling of the same features must give the scales (1e307, 0.5, 1e307)", kScalingSlips.name(train)));
}

TEST_CASE("1.1 a spread of one unit in the last place is kept where the mean rounds to the other rows") {
  // Feature 0 is (1 + 2^-52, 1, 1), feature 1 (1, 1, 1 - 2^-53): their sums round to 3, so their
  // means are exactly 1 and a single row deviates, in the first and in the last row, upwards and
  // downwards. The spread (2^-52 / sqrt(3) and 2^-53 / sqrt(3) from the mean 1) is not 0: code
  // that finds the largest deviation without looking at every row, or at its size, sees none.
  const double u = std::ldexp(1.0, -52);
  const Matrix train = from_rows(3, 2, {1 + u, 1,
                                        1, 1,
                                        1, 1 - u / 2});
  INPUTS(train);
  const ch01::Scaling s = ch01::fit_scaling(train);
  // Between 0.4 and 0.7 units: a mean that rounds otherwise moves the spread between the values'
  // own sqrt(2) / 3 = 0.47 and 1 / sqrt(3) = 0.58 of the unit.
  const auto kept = [&](Index c, double unit) { return s.scale(c) >= 0.4 * unit && s.scale(c) <= 0.7 * unit; };
  CHECK_MESSAGE((s.scale.size() == 2 && kept(0, u) && kept(1, u / 2)),
                said("fit_scaling of the features (1 + 2^-52, 1, 1) and (1, 1, 1 - 2^-53) gave the scales " + show(s.scale) +
                         ", not about 0.58 (2^-52, 2^-53): a spread however small is kept, and only a spread of exactly 0 "
                         "becomes 1",
                     kScalingSlips.name(train)));
}

TEST_CASE("1.1 property: the fitted scaling turns the training rows into mean 0 and standard deviation 1") {
  testing::check_property(
      "for any training rows, scaling them with their own fit_scaling gives each non-constant feature mean 0 and "
      "population standard deviation 1 (to 1e-9), a constant one all 0, and the statistics ignore the order of the rows",
      "train",
      [](const Matrix& train) -> std::string {
        const ch01::Scaling s = ch01::fit_scaling(train);
        if (s.mean.cols() != train.cols() || s.scale.cols() != train.cols())
          return "the scaling has " + std::to_string(s.mean.cols()) + " means and " + std::to_string(s.scale.cols()) +
                 " scales for " + std::to_string(train.cols()) + " features";
        const Matrix z = scaled_by(train, s.mean, s.scale);
        const RowVector sd = column_sds(train, 0.0), zm = column_means(z), zs = column_sds(z, 0.0);
        for (Index c = 0; c < train.cols(); ++c) {
          const double want = sd(c) > 0.0 ? 1.0 : 0.0;
          if (!(std::abs(zm(c)) <= 1e-9) || !(std::abs(zs(c) - want) <= 1e-9))
            return "feature " + std::to_string(c) + " scaled has mean " + format_number(zm(c)) + " and standard deviation " +
                   format_number(zs(c)) + " (the scale is " + format_number(s.scale(c)) + ")";
        }
        const ch01::Scaling reversed = ch01::fit_scaling(Matrix(train.colwise().reverse()));
        if (!near(reversed.mean, s.mean, 1e-12) || !near(reversed.scale, s.scale, 1e-12))
          return "the rows in reverse order give other statistics";
        return "";
      },
      testing::gen_matrix({1, 6}, {1, 4}, testing::gen_number(-100, 100)));
}

TEST_CASE("1.3 property: the test rows never change the scaling") {
  testing::check_property(
      "for any training and test rows, scale_train_test's scaling equals fit_scaling of the training rows alone, and "
      "its scaled test rows are apply_scaling of the test rows with it (to 1e-12)",
      "train, test",
      [](const Matrix& train, const Matrix& test) -> std::string {
        const ch01::ScaledSplit split = ch01::scale_train_test(train, test);
        const RowVector mean = column_means(train), scale = contract_scale(column_sds(train, 0.0));
        if (!near(split.scaling.mean, mean, 1e-12) || !near(split.scaling.scale, scale, 1e-12))
          return "the scaling is not the training rows' own (means " + testing::show(split.scaling.mean) + ", scales " +
                 testing::show(split.scaling.scale) + ")";
        if (!near(split.test, scaled_by(test, mean, scale), 1e-12)) return "the test rows are not scaled with the training rows' statistics";
        return "";
      },
      rc::gen::mapcat(testing::gen_size(1, 3), [](Index d) {
        return rc::gen::pair(testing::gen_matrix({1, 5}, {d, d}, testing::gen_number(-20, 20)),
                             testing::gen_matrix({1, 4}, {d, d}, testing::gen_number(-500, 500)));
      }));
}

TEST_CASE("1.4 property: a small enough learning rate never increases the loss") {
  // With lr at most 1 / lambda, lambda the largest eigenvalue of the loss's curvature
  // [X 1]^T [X 1] / n, every step of gradient descent on least squares lowers the loss (or keeps
  // it): the losses must never grow, there is one more loss than updates, and the first is y^T y / 2n.
  testing::check_property(
      "gradient_descent from w = 0, b = 0 with a learning rate at most 1 / (the curvature's largest eigenvalue) records "
      "iterations + 1 losses, the first y.y / 2n, none larger than the one before",
      "x, y",
      [](const Matrix& x, const Matrix& y_column) -> std::string {
        const Vector y = y_column.col(0);
        Matrix design(x.rows(), x.cols() + 1);
        design << x, Matrix::Ones(x.rows(), 1);
        const Matrix curvature = design.transpose() * design / static_cast<double>(x.rows());
        const double lambda = Eigen::SelfAdjointEigenSolver<Matrix>(curvature).eigenvalues().maxCoeff();
        const double lr = 1.0 / std::max(lambda, 1e-12);
        const ch01::DescentResult r = ch01::gradient_descent(x, y, lr, 1e-6, 25);
        if (r.loss.size() != static_cast<std::size_t>(r.iterations) + 1)
          return std::to_string(r.loss.size()) + " losses for " + std::to_string(r.iterations) + " updates";
        if (!near(r.loss[0], y.squaredNorm() / (2.0 * static_cast<double>(x.rows())), 1e-12))
          return "the first loss is " + format_number(r.loss[0]) + ", not y.y / 2n";
        for (std::size_t i = 1; i < r.loss.size(); ++i)
          if (r.loss[i] > r.loss[i - 1] * (1 + 1e-12) + 1e-300)
            return "the loss grew from " + format_number(r.loss[i - 1]) + " to " + format_number(r.loss[i]) + " at update " + std::to_string(i);
        return "";
      },
      rc::gen::mapcat(testing::gen_size(1, 5), [](Index n) {
        return rc::gen::pair(testing::gen_matrix({n, n}, {1, 2}, testing::gen_number(-3, 3)),
                             testing::gen_matrix_of(n, 1, testing::gen_number(-5, 5)));
      }));
}

TEST_CASE("1.5 property: with k = n every test row gets the majority class, and permuted test rows permuted classes") {
  testing::check_property(
      "for any training rows, knn_predict with k = n_train predicts for every test row the class most training rows "
      "have (the smallest on a tie), and reversing the test rows reverses the predictions",
      "train_x, train_y, test_x",
      [](const Matrix& tx, const Matrix& ty, const Matrix& q) -> std::string {
        const Vector labels = ty.col(0);
        const int n = static_cast<int>(tx.rows());
        const Vector all = ch01::knn_predict(tx, labels, q, n);
        std::vector<double> sorted(labels.data(), labels.data() + labels.size());
        std::sort(sorted.begin(), sorted.end());
        double best = sorted[0];
        std::size_t best_count = 0;
        for (std::size_t i = 0; i < sorted.size();) {
          std::size_t j = i;
          while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
          if (j - i > best_count) {
            best = sorted[i];
            best_count = j - i;
          }
          i = j;
        }
        for (Index t = 0; t < all.size(); ++t)
          if (all(t) != best) return "test row " + std::to_string(t) + " got class " + format_number(all(t)) + ", the majority is " + format_number(best);
        const Vector one = ch01::knn_predict(tx, labels, q, 1);
        const Vector back = ch01::knn_predict(tx, labels, Matrix(q.colwise().reverse()), 1);
        if (!(back.reverse().array() == one.array()).all()) return "reversing the test rows does not reverse the predictions (k = 1)";
        return "";
      },
      rc::gen::mapcat(rc::gen::pair(testing::gen_size(1, 6), testing::gen_size(1, 2)), [](std::pair<Index, Index> nd) {
        return rc::gen::tuple(testing::gen_matrix_of(nd.first, nd.second, testing::gen_number(-4, 4)),
                              testing::gen_matrix_of(nd.first, 1, testing::gen_whole(0, 3)),
                              testing::gen_matrix({1, 3}, {nd.second, nd.second}, testing::gen_number(-4, 4)));
      }));
}

TEST_CASE("1.5 near ties, the class -0 and classes past 2^63") {
  // 1 + 2e-9 and -(1 + 1e-9) from 0: squared distances 1 + 4e-9 and 1 + 2e-9, different doubles
  // (a float holds both as 1, a tie). -0 is the class 0 (not negative). 1e19 and 1e300 are whole
  // numbers 0 or above, beyond any 64-bit integer.
  const Matrix train = from_rows(4, 1, {1 + 2e-9, -(1 + 1e-9), 50, 80});
  Vector labels(4);
  labels << 1e19, -0.0, 1e300, 7;
  const Matrix test = from_rows(3, 1, {0, 52, 79});
  INPUTS(train, labels, test, 1);
  Vector p;
  const std::string thrown = thrown_by([&] { p = ch01::knn_predict(train, labels, test, 1); });
  REQUIRE_MESSAGE(thrown.empty(), "knn_predict threw \"" << thrown << "\" on valid classes: -0 is the class 0, and 1e19 and 1e300 "
                                  "are whole numbers 0 or above (beyond any 64-bit integer, but classes all the same)");
  Vector expected(3);
  expected << 0, 1e300, 7;
  CHECK_MESSAGE(near(p, expected, 0.0),
                said("knn_predict with k = 1 for 0, 52 and 79 among 1 + 2e-9 (class 1e19), -(1 + 1e-9) (class -0), 50 (class "
                     "1e300) and 80 (class 7) must predict 0, 1e300, 7: -(1 + 1e-9) is the nearer of the first two by 1e-9, "
                     "which a double's squared distance keeps",
                     kKnnSlips.name(train, labels, test, 1)));
}

}  // TEST_SUITE
