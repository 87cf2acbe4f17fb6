// Chapter 3 checks — why attention scores are divided by sqrt(d_k).
//
// Every expected value is derived here from its formula (a closed form, an explicit loop, the
// documented draw order), never copied from the reference's output. A failure names a known
// mistake only when the output is the one that mistake gives on the same input: the check
// computes it by applying the mistake to its own computation, and compares ("known mistake
// [divide_by_dk]: ..."); otherwise the message states the rule broken.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attention_scaling.hpp"
#include "scalebook/properties.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::format_number;
using scalebook::testing::Mistake;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::suspect;
using scalebook::testing::suspect_exact;
using scalebook::testing::Why;
namespace ch03 = scalebook::ch03;

// The generator as an input: its next draw says where it stands.
namespace doctest {
template <>
struct StringMaker<Rng> {
  static String convert(const Rng& rng) {
    Rng copy = rng;
    return ("Rng (next normal " + format_number(copy.normal()) + ")").c_str();
  }
};
}  // namespace doctest

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
constexpr int kIntMin = std::numeric_limits<int>::min();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kAlreadyScaled{"dot_scores_scaled", "the scores already divided by sqrt(d_k): 3.1 asks for the raw dot products (scaling is 3.2)"};
constexpr Named kTransposed{"scores_transposed", "K Q^T of shape (m, n) instead of Q K^T of shape (n, m): row i belongs to query i"};
constexpr Named kNoScaling{"no_scaling", "no scaling: the raw dot products"};
constexpr Named kByDk{"divide_by_dk", "the scores divided by d_k instead of sqrt(d_k)"};
constexpr Named kTimesRoot{"multiplied_by_sqrt_dk", "the scores multiplied by sqrt(d_k) instead of divided"};
constexpr Named kByRootM{"scale_by_sqrt_keys", "the scores divided by the square root of the number of keys m instead of d_k"};
constexpr Named kByRootN{"scale_by_sqrt_queries", "the scores divided by the square root of the number of queries n instead of d_k"};
constexpr Named kBySqrtSize{"scale_by_sqrt_size", "the scores divided by the square root of q's number of entries (n d_k, q.size()) instead of d_k (q.cols())"};
constexpr Named kIntegerSqrt{"scale_by_integer_sqrt", "the scores divided by sqrt(d_k) rounded down to a whole number"};
constexpr Named kCosine{"cosine_similarity", "the scores divided by the vectors' lengths (cosine similarity) instead of sqrt(d_k)"};
constexpr Named kChecksLeft{"scaled_scores_checks_left_to_dot_scores", "scaled_scores leaves its input checks to dot_scores, so its errors name dot_scores"};
constexpr Named kNoSameCols{"dot_scores_no_same_cols", "dot_scores checks empty and non-finite input but not that q and k have the same d_k"};
constexpr Named kNoChecks{"dot_scores_no_checks", "dot_scores checks none of its input: empty, mismatched or NaN input gets a result or Eigen's assertion"};
constexpr Named kOverColumns{"softmax_over_columns", "the softmax over columns instead of rows: each row must sum to 1"};
constexpr Named kNotNormalised{"softmax_not_normalised", "exp of the scores without dividing by the row's sum"};
constexpr Named kShiftedNotNormalised{"softmax_shifted_not_normalised", "exp(s - the row's max) without dividing by the row's sum"};
constexpr Named kWithoutExp{"softmax_without_exp", "the scores divided by their row sum, without exp"};
constexpr Named kOverMatrix{"softmax_over_matrix", "the exponentials divided by their sum over the whole matrix instead of each row's"};
constexpr Named kShiftNumeratorOnly{"softmax_shift_numerator_only", "exp(s - the row's max) divided by the sum of the unshifted exp(s): the shift must cancel, so subtract it in both"};
constexpr Named kNoMax{"softmax_no_max", "the softmax without subtracting each row's maximum: exp(1000) overflows to inf and exp(-1000) underflows to 0"};
constexpr Named kSubtractFirst{"softmax_subtract_first", "each row's first entry subtracted instead of its maximum: exp overflows when a later score is far above it"};
constexpr Named kSubtractMean{"softmax_subtract_mean", "each row's mean subtracted instead of its maximum: exp overflows when the scores spread far"};
constexpr Named kSubtractMin{"softmax_subtract_min", "each row's minimum subtracted instead of its maximum: exp overflows when the scores spread far"};
constexpr Named kSubtractMatrixMax{"softmax_subtract_matrix_max", "the whole matrix's maximum subtracted instead of each row's: a row far below it underflows to 0 / 0"};
constexpr Named kPopulation{"variance_population", "the population variance: divided by samples instead of samples - 1"};
constexpr Named kZeroMean{"variance_zero_mean", "the mean assumed to be 0 instead of the sample mean subtracted"};
constexpr Named kZeroMeanPopulation{"variance_zero_mean_population", "the mean assumed to be 0 and the sum divided by samples"};
constexpr Named kInterleaved{"variance_interleaved_draws", "q's and k's components drawn interleaved instead of all of q, then all of k"};
constexpr Named kQueriesFirst{"variance_queries_first", "every sample's q drawn before every k instead of q then k per sample"};
constexpr Named kScaledWhenNot{"variance_scaled_when_unscaled", "the dot products divided by sqrt(d_k) although scaled is false"};
constexpr Named kVarianceByDk{"variance_scaled_by_dk", "scaled: the dot products divided by d_k instead of sqrt(d_k)"};
constexpr Named kVarianceNotScaled{"variance_not_scaled", "scaled is true but the dot products are not divided by sqrt(d_k)"};
constexpr Named kVarianceDivided{"variance_divided_not_scores", "the variance divided by sqrt(d_k) instead of each dot product"};
constexpr Named kStandardDeviation{"variance_standard_deviation", "the standard deviation (the square root of the sample variance) instead of the variance"};
constexpr Named kNegativeDk{"variance_dk_zero_only", "d_k = 0 rejected but a negative d_k reaches Eigen: d_k < 1 must throw ShapeError"};
constexpr Named kBits{"entropy_bits", "the entropy in bits (log2) instead of nats (natural log)"};
constexpr Named kDigits{"entropy_log10", "the entropy in decimal digits (log10) instead of nats (natural log)"};
constexpr Named kNoMinus{"entropy_sign", "the minus sign left out: H = -sum w ln w is never negative"};
constexpr Named kNormalised{"entropy_normalised", "the entropy divided by ln m (normalised): 3.5 asks for nats"};
constexpr Named kEntropyMean{"entropy_averaged", "-sum w ln w divided by the number of weights m (a mean) instead of the sum"};
constexpr Named kNanAtZero{"entropy_nan_at_zero", "0 * ln 0 evaluated as 0 * (-inf) = NaN: a zero weight must add 0 (the limit of w ln w as w -> 0)"};
constexpr Named kSkipsTiny{"entropy_skips_tiny_weights", "weights below a small threshold skipped: only a weight of exactly 0 adds nothing"};
constexpr Named kLooseTolerance{"entropy_loose_tolerance", "rows whose sum is off by more than 1e-9 accepted: a tolerance looser than the contract's 1e-9"};
constexpr Named kNoSumCheck{"entropy_no_sum_check", "rows that do not sum to 1 accepted: the row sums are not checked"};
constexpr Named kTinyNegative{"entropy_tiny_negative_allowed", "a tiny negative weight let through as rounding: any weight below 0 is invalid"};

// The contract's rules, as the throw checks state them.
constexpr char kRuleEmpty[] = "an empty input (no rows or no columns) must throw ShapeError";
constexpr char kRuleSameCols[] = "q and k must have the same number of columns (d_k), else ShapeError";
constexpr char kRuleFinite[] = "NaN or infinity in the input must throw ValueError";

// A matrix written row by row: from_rows(2, 3, {1, 2, 3, 4, 5, 6}).
using scalebook::testing::from_rows;

// q (n, d_k), k (m, d_k) -> (n, m), by the definition: (i, j) = sum over c of q(i, c) k(j, c).
Matrix dots_by_definition(const Matrix& q, const Matrix& k) {
  Matrix s = Matrix::Zero(q.rows(), k.rows());
  for (Index i = 0; i < q.rows(); ++i)
    for (Index j = 0; j < k.rows(); ++j)
      for (Index c = 0; c < q.cols(); ++c) s(i, j) += q(i, c) * k(j, c);
  return s;
}

// exp(s(i, j)) / sum over j' of exp(s(i, j')) for moderate scores (no overflow possible here).
Matrix softmax_by_definition(const Matrix& s) {
  Matrix w = s.array().exp().matrix();
  for (Index i = 0; i < w.rows(); ++i) w.row(i) /= w.row(i).sum();
  return w;
}

// The classic mistake of 3.3: normalising each column instead of each row (each column's maximum
// subtracted, so that it stays finite wherever a stable softmax over the column would).
Matrix softmax_over_columns(const Matrix& s) {
  Matrix w = s;
  for (Index j = 0; j < s.cols(); ++j) {
    w.col(j) = (s.col(j).array() - s.col(j).maxCoeff()).exp().matrix();
    w.col(j) /= w.col(j).sum();
  }
  return w;
}

// A softmax with each row shifted by SHIFT(row) instead of its maximum: the known ways to get the
// shift wrong, applied to the definition. EIGEN: exp of the whole row at once (Eigen's vectorised
// exp clamps its argument near +-709 and stays finite); otherwise std::exp entry by entry
// (inf / inf = NaN, 0 / 0 = NaN). Either is what a softmax with that shift returns.
Matrix softmax_shifted_by(const Matrix& s, const std::function<double(const RowVector&)>& shift, bool eigen) {
  Matrix w(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    const RowVector row = s.row(i);
    const double c = shift(row);
    if (eigen) {
      w.row(i) = (row.array() - c).exp().matrix();
    } else {
      for (Index j = 0; j < s.cols(); ++j) w(i, j) = std::exp(row(j) - c);
    }
    w.row(i) /= w.row(i).sum();
  }
  return w;
}

// Whether F threw E with the function's own message ("function: ..."), the contract's error.
template <class E, class F>
bool own_error(const std::string& function, F&& f) {
  return testing::starts_with(testing::thrown_message<E>(std::forward<F>(f)), function + ": ");
}

// The positions of a row's entries from smallest to largest, as a (1, m) matrix of indices.
Matrix order_of(const Matrix& row) {
  std::vector<Index> index(static_cast<std::size_t>(row.cols()));
  std::iota(index.begin(), index.end(), Index{0});
  std::sort(index.begin(), index.end(), [&](Index a, Index b) { return row(0, a) < row(0, b); });
  Matrix order(1, row.cols());
  for (std::size_t j = 0; j < index.size(); ++j) {
    order(0, static_cast<Index>(j)) = static_cast<double>(index[j]);
  }
  return order;
}

// The dot products z of 3.4, drawn by the contract's documented order with a fresh Rng(seed): for
// each sample, first the d_k components of q, then the d_k components of k.
std::vector<double> documented_dots(int d_k, int samples, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> z;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> q(static_cast<std::size_t>(d_k)), k(static_cast<std::size_t>(d_k));
    for (double& x : q) x = rng.normal();
    for (double& x : k) x = rng.normal();
    z.push_back(std::inner_product(q.begin(), q.end(), k.begin(), 0.0));
  }
  return z;
}

// The same draws in two wrong orders: components of q and k interleaved, or every q before every k.
std::vector<double> interleaved_dots(int d_k, int samples, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> z;
  for (int s = 0; s < samples; ++s) {
    double dot = 0.0;
    for (int c = 0; c < d_k; ++c) {
      const double q = rng.normal();
      dot += q * rng.normal();
    }
    z.push_back(dot);
  }
  return z;
}

std::vector<double> queries_first_dots(int d_k, int samples, std::uint64_t seed) {
  Rng rng(seed);
  const Matrix q = normal_matrix(samples, d_k, rng), k = normal_matrix(samples, d_k, rng);
  std::vector<double> z;
  for (int s = 0; s < samples; ++s) z.push_back(q.row(s).dot(k.row(s)));
  return z;
}

double mean_of(const std::vector<double>& z) {
  return std::accumulate(z.begin(), z.end(), 0.0) / static_cast<double>(z.size());
}

// sum (z - centre)^2 / divisor: the sample variance is centre = mean, divisor = N - 1.
double squares_about(const std::vector<double>& z, double centre, double divisor) {
  double sum = 0.0;
  for (double x : z) sum += (x - centre) * (x - centre);
  return sum / divisor;
}

double sample_variance(const std::vector<double>& z) {
  return squares_about(z, mean_of(z), static_cast<double>(z.size()) - 1.0);
}

std::vector<double> divided(std::vector<double> z, double by) {
  for (double& x : z) x /= by;
  return z;
}

// -sum w ln w over one row, skipping zeros (0 ln 0 = 0), in nats.
double entropy_by_definition(std::initializer_list<double> row) {
  double h = 0.0;
  for (double w : row)
    if (w > 0.0) h -= w * std::log(w);
  return h;
}

// The entropies of W's rows with each term TERM(w) (-w ln w for the right one).
Matrix entropies_by(const Matrix& w, const std::function<double(double)>& term) {
  Matrix out(w.rows(), 1);
  for (Index i = 0; i < w.rows(); ++i) {
    out(i, 0) = 0.0;
    for (Index j = 0; j < w.cols(); ++j) out(i, 0) += term(w(i, j));
  }
  return out;
}
Matrix nats_of(const Matrix& w) { return entropies_by(w, [](double x) { return x > 0.0 ? -x * std::log(x) : 0.0; }); }

// ---- the known mistakes of each exercise, told apart on batteries of inputs ------------------------
// (scalebook/diagnosis.hpp: a mistake is named only when the output agrees with it on the failing
// input and on every input of its exercise's battery; the build proves each battery separates.)

using Pair = std::tuple<Matrix, Matrix>;
Pair pair(const Matrix& q, const Matrix& k) { return {q, k}; }

// Queries and keys of shapes that are not small powers of two: n, m and d_k all differ.
std::vector<Pair> query_key_battery() {
  Rng rng(3003);
  std::vector<Pair> battery;
  for (auto [n, m, d] : {std::tuple{2, 3, 5}, {4, 1, 2}, {1, 5, 3}, {3, 2, 7}}) {
    const Matrix q = normal_matrix(n, d, rng), k = normal_matrix(m, d, rng);
    battery.push_back(pair(q, k));
  }
  return battery;
}

const testing::Diagnosis<Matrix, Matrix, Matrix> kDotSlips{
    "3.1", [](const Matrix& q, const Matrix& k) { return ch03::dot_scores(q, k); },
    [](const Matrix& q, const Matrix& k) { return dots_by_definition(q, k); },
    {{kAlreadyScaled, [](const Matrix& q, const Matrix& k) { return Matrix(dots_by_definition(q, k) / std::sqrt(static_cast<double>(q.cols()))); }},
     {kTransposed, [](const Matrix& q, const Matrix& k) { return Matrix(dots_by_definition(q, k).transpose()); }}},
    query_key_battery, testing::same_matrix(1e-12)};

Matrix cosine_of(const Matrix& q, const Matrix& k) {
  Matrix cosine = dots_by_definition(q, k);  // raw(i, j) / (|q_i| |k_j|)
  for (Index i = 0; i < cosine.rows(); ++i)
    for (Index j = 0; j < cosine.cols(); ++j) cosine(i, j) /= q.row(i).norm() * k.row(j).norm();
  return cosine;
}

// The raw dot products divided by DIVISOR(q, k).
std::function<Matrix(const Matrix&, const Matrix&)> raw_over(std::function<double(const Matrix&, const Matrix&)> divisor) {
  return [divisor](const Matrix& q, const Matrix& k) { return Matrix(dots_by_definition(q, k) / divisor(q, k)); };
}

const testing::Diagnosis<Matrix, Matrix, Matrix> kScaledSlips{
    "3.2", [](const Matrix& q, const Matrix& k) { return ch03::scaled_scores(q, k); },
    raw_over([](const Matrix& q, const Matrix&) { return std::sqrt(static_cast<double>(q.cols())); }),
    {{kNoScaling, raw_over([](const Matrix&, const Matrix&) { return 1.0; })},
     {kByDk, raw_over([](const Matrix& q, const Matrix&) { return static_cast<double>(q.cols()); })},
     {kTimesRoot, raw_over([](const Matrix& q, const Matrix&) { return 1.0 / std::sqrt(static_cast<double>(q.cols())); })},
     {kByRootM, raw_over([](const Matrix&, const Matrix& k) { return std::sqrt(static_cast<double>(k.rows())); })},
     {kByRootN, raw_over([](const Matrix& q, const Matrix&) { return std::sqrt(static_cast<double>(q.rows())); })},
     {kBySqrtSize, raw_over([](const Matrix& q, const Matrix&) { return std::sqrt(static_cast<double>(q.size())); })},
     {kIntegerSqrt, raw_over([](const Matrix& q, const Matrix&) { return std::floor(std::sqrt(static_cast<double>(q.cols()))); })},
     {kCosine, [](const Matrix& q, const Matrix& k) { return cosine_of(q, k); }}},
    query_key_battery, testing::same_matrix(1e-12)};

// Scores that tell the softmax's mistakes apart: each wrong shift (0, the first entry, the mean, the
// minimum, the whole matrix's maximum) overflows or underflows in rows of its own, with std::exp
// and with Eigen's vectorised exp; moderate scores show the others.
std::vector<std::tuple<Matrix>> softmax_battery() {
  Rng rng(3303);
  return {{from_rows(4, 3, {0, 800, 1,            // the maximum last: 0, the first entry and the minimum overflow
                            800, 0, 1,            // the maximum first: 0 and the minimum overflow
                            -800, 0, 800,         // a mean of 0: the mean overflows too
                            -1000, -999, -999.5})},  // far below the matrix's maximum: it underflows
          {from_rows(1, 2, {-1000, -999})},       // one row far below 0: 0 underflows, the matrix's maximum does not
          {Matrix(3.0 * normal_matrix(3, 5, rng))},
          {from_rows(2, 3, {1, 1, 2, 0.5, -0.25, 3})}};
}

const testing::Diagnosis<Matrix, Matrix> kSoftmaxSlips = [] {
  using Shift = std::function<double(const RowVector&, double)>;  // (row, the matrix's maximum) -> what is subtracted
  std::vector<testing::Diagnosis<Matrix, Matrix>::Slip> slips = {
      {kOverColumns, [](const Matrix& s) { return softmax_over_columns(s); }},
      {kNotNormalised, [](const Matrix& s) { return Matrix(s.array().exp().matrix()); }},
      {kShiftedNotNormalised, [](const Matrix& s) { Matrix w = s; for (Index i = 0; i < s.rows(); ++i) w.row(i) = (s.row(i).array() - s.row(i).maxCoeff()).exp().matrix(); return w; }},
      {kWithoutExp, [](const Matrix& s) { Matrix w = s; for (Index i = 0; i < s.rows(); ++i) w.row(i) /= s.row(i).sum(); return w; }},
      {kOverMatrix, [](const Matrix& s) {
         Matrix w = s;
         for (Index i = 0; i < s.rows(); ++i) w.row(i) = (s.row(i).array() - s.row(i).maxCoeff()).exp().matrix();
         return Matrix(w / w.sum());
       }},
      {kShiftNumeratorOnly, [](const Matrix& s) {
         Matrix w = s;
         for (Index i = 0; i < s.rows(); ++i)
           w.row(i) = (s.row(i).array() - s.row(i).maxCoeff()).exp().matrix() / s.row(i).array().exp().sum();
         return w;
       }}};
  for (bool eigen : {false, true}) {
    for (const auto& [mistake, shift] : std::vector<std::pair<Named, Shift>>{
             {kNoMax, [](const RowVector&, double) { return 0.0; }},
             {kSubtractFirst, [](const RowVector& r, double) { return r(0); }},
             {kSubtractMean, [](const RowVector& r, double) { return r.mean(); }},
             {kSubtractMin, [](const RowVector& r, double) { return r.minCoeff(); }},
             {kSubtractMatrixMax, [](const RowVector&, double top) { return top; }}}) {
      slips.push_back({mistake, [shift = shift, eigen](const Matrix& s) {
                         const double top = s.maxCoeff();
                         return softmax_shifted_by(s, [&](const RowVector& r) { return shift(r, top); }, eigen);
                       }});
    }
  }
  return testing::Diagnosis<Matrix, Matrix>{
      "3.3", [](const Matrix& s) { return ch03::softmax_rows(s); },
      [](const Matrix& s) { return softmax_shifted_by(s, [](const RowVector& r) { return r.maxCoeff(); }, false); },
      std::move(slips), softmax_battery, testing::same_matrix(1e-12)};
}();

using Draw = std::function<std::vector<double>(int, int, std::uint64_t)>;

// 3.4's variance of the draws DRAW, each divided by DIVIDE, about the sample mean or about 0, over
// samples - 1 or samples.
double variance_of(const Draw& draw, int d_k, int samples, std::uint64_t seed, double divide, bool about_mean, bool minus_one) {
  const std::vector<double> z = divided(draw(d_k, samples, seed), divide);
  const double n = samples;
  return squares_about(z, about_mean ? mean_of(z) : 0.0, minus_one ? n - 1 : n);
}

using VarianceInput = std::tuple<int, int, bool, std::uint64_t>;
double root_of(int d_k) { return std::sqrt(static_cast<double>(d_k)); }

const testing::Diagnosis<double, int, int, bool, std::uint64_t> kVarianceSlips{
    "3.4",
    [](const int& d_k, const int& samples, const bool& scaled, const std::uint64_t& seed) {
      Rng rng(seed);
      return ch03::dot_product_variance(d_k, samples, scaled, rng);
    },
    [](const int& d_k, const int& samples, const bool& scaled, const std::uint64_t& seed) {
      return variance_of(documented_dots, d_k, samples, seed, scaled ? root_of(d_k) : 1.0, true, true);
    },
    {{kPopulation, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, scaled ? root_of(d) : 1.0, true, false); }},
     {kZeroMean, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, scaled ? root_of(d) : 1.0, false, true); }},
     {kZeroMeanPopulation, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, scaled ? root_of(d) : 1.0, false, false); }},
     {kInterleaved, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(interleaved_dots, d, n, seed, scaled ? root_of(d) : 1.0, true, true); }},
     {kQueriesFirst, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(queries_first_dots, d, n, seed, scaled ? root_of(d) : 1.0, true, true); }},
     {kScaledWhenNot, [](const int& d, const int& n, const bool&, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, root_of(d), true, true); }},
     {kVarianceByDk, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, scaled ? static_cast<double>(d) : 1.0, true, true); }},
     {kVarianceNotScaled, [](const int& d, const int& n, const bool&, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, 1.0, true, true); }},
     {kVarianceDivided, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return variance_of(documented_dots, d, n, seed, 1.0, true, true) / (scaled ? root_of(d) : 1.0); }},
     {kStandardDeviation, [](const int& d, const int& n, const bool& scaled, const std::uint64_t& seed) { return std::sqrt(variance_of(documented_dots, d, n, seed, scaled ? root_of(d) : 1.0, true, true)); }}},
    [] {
      return std::vector<VarianceInput>{{3, 5, true, 2024}, {3, 5, false, 2024}, {2, 4, true, 7}, {5, 3, false, 11}, {7, 6, true, 5}};
    },
    [](const double& a, const double& b) { return testing::same_output_number(a, b, 1e-12); }};

// Rows of weights that tell 3.5's mistakes apart: zero weights, tiny ones, and widths m that are
// not powers of two.
std::vector<std::tuple<Matrix>> entropy_battery() {
  return {{from_rows(2, 4, {0.25, 0.25, 0.25, 0.25, 0.1, 0.2, 0.3, 0.4})},
          {from_rows(2, 3, {0, 1, 0, 0.5, 0, 0.5})},
          {from_rows(1, 5, {1 - 4e-10 - 0.5, 0.5, 1e-10, 2e-10, 1e-10})},
          {from_rows(1, 3, {0.7, 0.2, 0.1})}};
}

const testing::Diagnosis<Matrix, Matrix> kEntropySlips{
    "3.5", [](const Matrix& w) { return Matrix(ch03::row_entropy(w)); }, nats_of,
    {{kBits, [](const Matrix& w) { return entropies_by(w, [](double x) { return x > 0.0 ? -x * std::log2(x) : 0.0; }); }},
     // The same in code that keeps each entropy within [0, ln m], as the contract promises: a spread
     // row's bits, 1.44 times its nats, pass ln m and are cut there.
     {kBits, [](const Matrix& w) {
        return Matrix(entropies_by(w, [](double x) { return x > 0.0 ? -x * std::log2(x) : 0.0; })
                          .cwiseMax(0.0)
                          .cwiseMin(std::log(static_cast<double>(w.cols()))));
      }},
     {kDigits, [](const Matrix& w) { return entropies_by(w, [](double x) { return x > 0.0 ? -x * std::log10(x) : 0.0; }); }},
     {kNoMinus, [](const Matrix& w) { return Matrix(-nats_of(w)); }},
     {kNormalised, [](const Matrix& w) { return Matrix(nats_of(w) / std::log(static_cast<double>(w.cols()))); }},
     {kNanAtZero, [](const Matrix& w) { return entropies_by(w, [](double x) { return -x * std::log(x); }); }},
     {kEntropyMean, [](const Matrix& w) { return Matrix(nats_of(w) / static_cast<double>(w.cols())); }},
     {kSkipsTiny, [](const Matrix& w) { return entropies_by(w, [](double x) { return x > 1e-9 ? -x * std::log(x) : 0.0; }); }}},
    entropy_battery, testing::same_matrix(1e-14)};

Matrix stack_rows(const Matrix& a, const Matrix& b) {
  Matrix s(a.rows() + b.rows(), a.cols());
  s << a, b;
  return s;
}

// What row_entropy does with the weights W: 'a' it returned, 'r' it threw its own ValueError
// ("row_entropy: ..."), 'x' anything else (another error, another type).
char entropy_outcome(const Matrix& w) {
  const testing::CallInput during([&] { return "input: w = " + testing::show(w); });
  try {
    ch03::row_entropy(w);
    return 'a';
  } catch (const ValueError& e) {
    return testing::starts_with(e.what(), "row_entropy: ") ? 'r' : 'x';
  } catch (...) {
    return 'x';
  }
}

// Which known mistake of 3.5's sum check row_entropy's outcomes show, if one does. The rows: off
// by +1.1e-9, -1.1e-9, +1e-5, -1e-5, +0.1, -0.1 from a sum of 1, then ten weights of 0.1 (valid:
// their sum is 1 to 1e-16, while a float's sum of them is off by 1.2e-7). No check at all accepts
// every row; a looser tolerance accepts both 1.1e-9 rows, rejects both 0.1 rows and the same way
// on both sides in between, and accepts the valid one. A one-sided test or a sum kept in float is
// neither: nothing is named for them.
std::optional<Named> sum_check_mistake() {
  // Each row is tried as the second of two rows and as the first (a check that skips the first or
  // the last row is neither mistake), with the off weight last and first.
  const auto outcome = [](double off) {
    const char a = entropy_outcome(from_rows(2, 2, {0.5, 0.5, 0.5, 0.5 + off}));
    const char b = entropy_outcome(from_rows(2, 2, {0.5 + off, 0.5, 0.5, 0.5}));
    return a == b ? a : '?';
  };
  std::string outcomes;
  for (double off : {1.1e-9, -1.1e-9, 1e-5, -1e-5, 0.1, -0.1}) outcomes += outcome(off);
  outcomes += entropy_outcome(Matrix::Constant(2, 10, 0.1));
  if (outcomes == "aaaaaaa") return kNoSumCheck;
  if (outcomes[0] == 'a' && outcomes[1] == 'a' && outcomes[2] == outcomes[3] && outcomes[2] != '?' && outcomes[4] == 'r' &&
      outcomes[5] == 'r' && outcomes[6] == 'a')
    return kLooseTolerance;
  return std::nullopt;
}

// Which known mistake of 3.5's negative-weight check the outcomes show: a threshold below 0
// rejects (1.5, -0.5) but accepts the tiny negatives -1e-300 and -1e-30 (a weight kept in float,
// where -1e-300 is -0 but -1e-30 stays negative, is not that mistake).
std::optional<Named> negative_check_mistake() {
  // Each negative weight first and last in its row, in the first row and in the second.
  const auto all = [](std::initializer_list<double> weights, char wanted) {
    const std::vector<double> w(weights);
    const Matrix forward = from_rows(1, 2, {w[0], w[1]}), backward = from_rows(1, 2, {w[1], w[0]});
    const Matrix ok = from_rows(1, 2, {0.5, 0.5});
    for (const Matrix& r : {forward, backward})
      for (const Matrix& m : {Matrix(stack_rows(ok, r)), Matrix(stack_rows(r, ok))})
        if (entropy_outcome(m) != wanted) return false;
    return true;
  };
  if (all({1.5, -0.5}, 'r') && all({1, -1e-300}, 'a') && all({1, -1e-30}, 'a')) return kTinyNegative;
  return std::nullopt;
}

// Queries (1 to 4) and keys (1 to 5) of one width d_k from 1 to MAX_D, entries in steps of 1/8.
rc::Gen<std::pair<Matrix, Matrix>> gen_queries_keys(Index max_d) {
  return rc::gen::mapcat(testing::gen_size(1, max_d), [](Index d) {
    return rc::gen::pair(testing::gen_matrix({1, 4}, {d, d}, testing::gen_number(-4, 4)),
                         testing::gen_matrix({1, 5}, {d, d}, testing::gen_number(-4, 4)));
  });
}

// Weights for 3.5's properties: each row of non-negative whole numbers (at least one positive)
// divided by its sum, so that every row sums to 1 within a few ulps.
rc::Gen<Matrix> gen_weights() {
  return rc::gen::map(testing::gen_matrix({1, 3}, {1, 6}, testing::gen_whole(0, 9)), [](Matrix a) {
    for (Index i = 0; i < a.rows(); ++i) {
      if (a.row(i).sum() == 0) a(i, 0) = 1;
      a.row(i) /= a.row(i).sum();
    }
    return a;
  });
}

}  // namespace

TEST_SUITE("03-attention-scaling") {

// ---- 3.1 dot_scores -------------------------------------------------------------------------

TEST_CASE("3.1 dot scores of the worked example") {
  const Matrix q = from_rows(1, 2, {1, 1});
  const Matrix k = from_rows(3, 2, {1, 0,    // key 0
                                    0, 1,    // key 1
                                    1, 1});  // key 2
  INPUTS(q, k);
  // 1·1 + 1·0 = 1, 1·0 + 1·1 = 1, 1·1 + 1·1 = 2
  const Matrix expected = from_rows(1, 3, {1, 1, 2});
  const Matrix s = ch03::dot_scores(q, k);
  CHECK_MESSAGE(near(s, expected),
                said("dot_scores of q = (1, 1) and the keys (1, 0), (0, 1), (1, 1) must give (1, 1, 2): score j is q dotted with "
                     "key j (row j of k), not yet scaled",
                     kDotSlips.name(q, k)));
}

TEST_CASE("3.1 row i column j holds query i dotted with key j") {
  Rng rng(31);
  const Matrix q = normal_matrix(3, 4, rng);  // n = 3 queries, d_k = 4
  const Matrix k = normal_matrix(5, 4, rng);  // m = 5 keys
  INFO("q (3, 4) and k (5, 4) drawn from N(0, 1) with Rng(31), in that order");
  INPUTS(q, k);
  const Matrix expected = dots_by_definition(q, k);
  const Matrix s = ch03::dot_scores(q, k);
  CHECK_MESSAGE(near(s, expected, 1e-12, testing::Parts{"query", 1, "key", 1}),
                said("dot_scores of 3 queries and 5 keys (d_k = 4) differs from the dot products: entry (i, j) must be row i "
                     "of q dotted with row j of k, a 3 x 5 matrix",
                     kDotSlips.name(q, k)));
}

TEST_CASE("3.1 one query and one key give a single score") {
  const Matrix q = from_rows(1, 3, {2, -1, 0.5}), k = from_rows(1, 3, {-4, 3, 8});
  INPUTS(q, k);
  CHECK_MESSAGE(near(ch03::dot_scores(q, k), from_rows(1, 1, {-8 - 3 + 4})),
                "dot_scores of (2, -1, 0.5) and (-4, 3, 8) must be 2 * -4 + -1 * 3 + 0.5 * 8 = -7");
}

TEST_CASE("3.1 mismatched or empty shapes throw ShapeError") {
  const Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  // Which of dot_scores's own checks work: the evidence that tells its missing checks apart.
  const bool checks_empty = own_error<ShapeError>("dot_scores", [&] { ch03::dot_scores(Matrix(0, 3), k); });
  const bool checks_finite = own_error<ValueError>("dot_scores", [&] { ch03::dot_scores(Matrix::Constant(2, 3, kNaN), k); });
  const bool checks_cols = own_error<ShapeError>("dot_scores", [&] { ch03::dot_scores(q, Matrix::Ones(4, 2)); });
  const std::optional<Named> no_cols = checks_empty && checks_finite ? std::optional<Named>(kNoSameCols) : std::nullopt;
  const std::optional<Named> none = !checks_empty && !checks_finite && !checks_cols ? std::optional<Named>(kNoChecks) : std::nullopt;
  // k's d_k smaller and larger than q's: a loop over q's columns reads past a smaller k (Eigen
  // stops it) but silently ignores the extra columns of a larger one.
  const Why cols(kRuleSameCols, no_cols ? no_cols : none, no_cols ? no_cols : none);
  CHECK_THROWS_CALL(ShapeError, cols, ch03::dot_scores, q, Matrix(Matrix::Ones(4, 2)));
  CHECK_THROWS_CALL(ShapeError, cols, ch03::dot_scores, q, Matrix(Matrix::Ones(4, 5)));
  CHECK_THROWS_CALL(ShapeError, cols, ch03::dot_scores, Matrix(Matrix::Ones(2, 4)), k);
  // k transposed: (3, 2) has q's count of entries (6) but not its columns.
  CHECK_THROWS_CALL(ShapeError, cols, ch03::dot_scores, q, Matrix(Matrix::Ones(3, 2)));
  // Each dimension empty on its own: n = 0, m = 0, d_k = 0.
  const Why empty(kRuleEmpty, none, none);
  CHECK_THROWS_CALL(ShapeError, empty, ch03::dot_scores, Matrix(0, 3), k);
  CHECK_THROWS_CALL(ShapeError, empty, ch03::dot_scores, q, Matrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, empty, ch03::dot_scores, Matrix(2, 0), Matrix(4, 0));
}

TEST_CASE("3.1 NaN or infinity in the input throws ValueError") {
  Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  const bool checks_empty = own_error<ShapeError>("dot_scores", [&] { ch03::dot_scores(Matrix(0, 3), k); });
  const bool checks_cols = own_error<ShapeError>("dot_scores", [&] { ch03::dot_scores(q, Matrix::Ones(4, 2)); });
  const Why finite(kRuleFinite, !checks_empty && !checks_cols ? std::optional<Named>(kNoChecks) : std::nullopt);
  q(1, 2) = kNaN;
  CHECK_THROWS_CALL(ValueError, finite, ch03::dot_scores, q, k);
  q(1, 2) = kInf;
  CHECK_THROWS_CALL(ValueError, finite, ch03::dot_scores, q, k);
  q(1, 2) = 1.0;
  k(3, 0) = -kInf;
  CHECK_THROWS_CALL(ValueError, finite, ch03::dot_scores, q, k);
  k(3, 0) = kNaN;
  CHECK_THROWS_CALL(ValueError, finite, ch03::dot_scores, q, k);
  k(3, 0) = 1.0;
  k(0, 0) = kNaN;  // the first entry
  CHECK_THROWS_CALL(ValueError, finite, ch03::dot_scores, q, k);
}

// ---- 3.2 scaled_scores ----------------------------------------------------------------------

TEST_CASE("3.2 scaled scores of the worked example") {
  const Matrix q = from_rows(1, 2, {1, 1});
  const Matrix k = from_rows(3, 2, {1, 0, 0, 1, 1, 1});
  INPUTS(q, k);
  const double r2 = std::sqrt(2.0);  // d_k = 2
  const Matrix expected = from_rows(1, 3, {1 / r2, 1 / r2, 2 / r2});  // 0.7071, 0.7071, 1.4142
  const Matrix s = ch03::scaled_scores(q, k);
  CHECK_MESSAGE(near(s, expected),
                said("scaled_scores of q = (1, 1) and the keys (1, 0), (0, 1), (1, 1) must give (1, 1, 2) / sqrt(2): the dot "
                     "scores divided by sqrt(d_k), where d_k = 2 is the number of columns of q",
                     kScaledSlips.name(q, k)));
}

TEST_CASE("3.2 scores are divided by the square root of d_k for several d_k") {
  Rng rng(32);
  for (int d_k : {2, 9, 64}) {
    const Matrix q = normal_matrix(3, d_k, rng), k = normal_matrix(5, d_k, rng);
    INFO("q (3, d_k) and k (5, d_k) drawn from N(0, 1) with Rng(32), d_k = 2, 9, 64 in turn");
    INPUTS(d_k, q, k);
    const double d = d_k;
    const Matrix raw = dots_by_definition(q, k);
    const Matrix expected = raw / std::sqrt(d);
    const Matrix s = ch03::scaled_scores(q, k);
    CHECK_MESSAGE(near(s, expected),
                  said("scaled_scores of 3 queries and 5 keys with d_k = " + std::to_string(d_k) + " differs from the dot "
                       "products divided by sqrt(d_k), d_k being the columns of q and k",
                       kScaledSlips.name(q, k)));
  }
}

TEST_CASE("3.2 scaling keeps the order of the scores") {
  // Keys of very different lengths: a scaling that is the same for every score keeps their order;
  // dividing each score by its key's length (cosine similarity) would not.
  Rng rng(323);
  const Matrix q = normal_matrix(2, 6, rng);
  Matrix k = normal_matrix(8, 6, rng);
  for (Index j = 0; j < k.rows(); ++j) k.row(j) *= std::pow(3.0, static_cast<double>(j % 4) - 1.5);
  INFO("q (2, 6) and k (8, 6) drawn from N(0, 1) with Rng(323), key j then multiplied by 3^(j % 4 - 1.5)");
  INPUTS(q, k);
  const Matrix raw = dots_by_definition(q, k);
  const Matrix s = ch03::scaled_scores(q, k);
  REQUIRE_MESSAGE((s.rows() == 2 && s.cols() == 8), "scaled_scores of 2 queries and 8 keys must be (2, 8), got " << shape_of(s));
  for (Index i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(near(order_of(s.row(i)), order_of(raw.row(i)), 0.0),
                  "the order of query " << i << "'s scores (the keys from lowest to highest score) changed: each score "
                  "must be divided by the same sqrt(d_k), whatever its key");
  }
}

TEST_CASE("3.2 a zero query scores every key 0") {
  Rng rng(324);
  const Matrix q = Matrix::Zero(2, 5), k = normal_matrix(6, 5, rng);
  INPUTS(q, k);
  CHECK_MESSAGE(near(ch03::scaled_scores(q, k), Matrix::Zero(2, 6), 0.0), "scaled_scores of a zero query must score every key exactly 0");
}

TEST_CASE("3.2 with d_k = 1 there is nothing to scale") {
  // sqrt(1) = 1: the scores are the plain products. A divisor of d_k - 1 or an integer sqrt would
  // show here (0 or a division by zero).
  const Matrix q = from_rows(2, 1, {3, -2}), k = from_rows(3, 1, {1, -0.5, 4});
  INPUTS(q, k);
  const Matrix s = ch03::scaled_scores(q, k);
  CHECK_MESSAGE(near(s, from_rows(2, 3, {3, -1.5, 12, -2, 1, -8})),
                said("scaled_scores with d_k = 1 must be the plain products (sqrt(1) = 1)",
                     kScaledSlips.name(q, k)));
}

TEST_CASE("3.2 bad input throws ShapeError or ValueError") {
  const Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  // An error from dot_scores (not from scaled_scores's own checks) is what leaving the checks to it gives.
  const Why cols(kRuleSameCols, std::nullopt, kChecksLeft), empty(kRuleEmpty, std::nullopt, kChecksLeft),
      finite(kRuleFinite, std::nullopt, kChecksLeft);
  CHECK_THROWS_CALL(ShapeError, cols, ch03::scaled_scores, q, Matrix(Matrix::Ones(4, 5)));
  CHECK_THROWS_CALL(ShapeError, cols, ch03::scaled_scores, q, Matrix(Matrix::Ones(4, 2)));
  CHECK_THROWS_CALL(ShapeError, cols, ch03::scaled_scores, q, Matrix(Matrix::Ones(3, 2)));  // 6 entries, as q
  CHECK_THROWS_CALL(ShapeError, empty, ch03::scaled_scores, Matrix(0, 3), k);
  CHECK_THROWS_CALL(ShapeError, empty, ch03::scaled_scores, q, Matrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, empty, ch03::scaled_scores, Matrix(2, 0), Matrix(4, 0));  // d_k = 0: there is no sqrt(d_k) to divide by
  Matrix bad = k;
  bad(2, 1) = kNaN;
  CHECK_THROWS_CALL(ValueError, finite, ch03::scaled_scores, q, bad);
  bad(2, 1) = kInf;
  CHECK_THROWS_CALL(ValueError, finite, ch03::scaled_scores, bad, q);
  bad(2, 1) = -kInf;
  CHECK_THROWS_CALL(ValueError, finite, ch03::scaled_scores, q, bad);
}

// ---- 3.3 softmax_rows -----------------------------------------------------------------------

TEST_CASE("3.3 softmax of the worked example with and without scaling") {
  const double a = 1 / std::sqrt(2.0);
  const Matrix s = from_rows(2, 3, {1, 1, 2,             // unscaled scores
                                    a, a, 2 * a});       // scaled scores
  INPUTS(s);
  // Divide numerator and denominator by exp(s_0): a row (x, x, 2x) has weights
  // 1 / (2 + e^x), 1 / (2 + e^x), e^x / (2 + e^x).
  const double e1 = std::exp(1.0), ea = std::exp(a);
  const Matrix expected = from_rows(2, 3, {1 / (2 + e1), 1 / (2 + e1), e1 / (2 + e1),
                                           1 / (2 + ea), 1 / (2 + ea), ea / (2 + ea)});
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, expected),
                said("softmax_rows of the rows (1, 1, 2) and (1, 1, 2) / sqrt(2) must give each row's exp(s - its max) divided "
                     "by that row's sum: (1, 1, e) / (2 + e) and (1, 1, e^a) / (2 + e^a) with a = 1 / sqrt(2)",
                     kSoftmaxSlips.name(s)));
}

TEST_CASE("3.3 large scores neither overflow nor underflow") {
  const double l3 = std::log(3.0);
  const Matrix s = from_rows(3, 2, {1000, 1000 + l3,     // exp(1000) overflows a double
                                    -1000, -1000 + l3,   // exp(-1000) underflows to 0
                                    1000, 0});
  INPUTS(s);
  // Only differences matter: exp(x) : exp(x + ln 3) = 1 : 3, and exp(-1000) / 1 rounds to 0.
  const Matrix expected = from_rows(3, 2, {0.25, 0.75, 0.25, 0.75, 1, 0});
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, expected),
                said("softmax_rows of the rows (1000, 1000 + ln 3), (-1000, -1000 + ln 3), (1000, 0) must give (1/4, 3/4), "
                     "(1/4, 3/4), (1, 0): subtract each row's maximum before exp, so that no exponent leaves its range",
                     kSoftmaxSlips.name(s)));
}

TEST_CASE("3.3 the largest score may sit in any position and differ by far more than exp's range") {
  // Row p has its maximum at position p. exp overflows above about 709.8 and underflows to 0 below
  // about -745, so spreads of 1e4 and 1e300 are far beyond its range in both directions. Only the
  // row's own maximum is safe to subtract: the first entry, the row's mean, its minimum, 0 or the
  // whole matrix's maximum all send some exponent past the range here.
  const Index m = 4;
  const double l3 = std::log(3.0);
  for (double spread : {1e4, 1e300}) {
    // Rows 0..m-1: one huge score at p, every other one hugely negative: all weight on p.
    // Rows m..2m-1: the whole row near +1e4 (p even) or -1e4 (p odd), position p ln 3 above the
    // others: weights 3 / (3 + m - 1) at p and 1 / (3 + m - 1) elsewhere.
    Matrix s(2 * m, m), expected(2 * m, m);
    for (Index p = 0; p < m; ++p) {
      s.row(p).setConstant(-spread);
      s(p, p) = spread;
      expected.row(p).setZero();
      expected(p, p) = 1.0;
      const double level = p % 2 == 0 ? 1e4 : -1e4;
      s.row(m + p).setConstant(level);
      s(m + p, p) = level + l3;
      const double e = std::exp(s(m + p, p) - level);  // 3, up to the rounding of level + ln 3
      expected.row(m + p).setConstant(1.0 / (e + static_cast<double>(m - 1)));
      expected(m + p, p) = e / (e + static_cast<double>(m - 1));
    }
    INFO("rows 0..3: one score +spread at position p, the others -spread; rows 4..7: every score 1e4 (p even) or "
         "-1e4 (p odd), position p ln 3 above the others");
    INPUTS(spread, s);
    const Matrix w = ch03::softmax_rows(s);
    CHECK_MESSAGE(near(w, expected),
                  said("softmax_rows of rows whose largest score moves from position to position, " + format_number(spread) +
                       " from the others or at levels of +-1e4, must give all weight to the largest score in rows 0..3 and "
                       "3 / 6 : 1 / 6 in rows 4..7: subtract each row's own maximum",
                       kSoftmaxSlips.name(s)));
  }
}

TEST_CASE("3.3 each row is a distribution over its own keys") {
  Rng rng(33);
  Matrix s = 3.0 * normal_matrix(3, 5, rng);
  INFO("s: 3 x 5 scores of 3 N(0, 1), Rng(33)");
  INPUTS(s);
  const Matrix expected = softmax_by_definition(s);  // each row non-negative, summing to 1
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, expected), said("softmax_rows of 3 rows of 5 scores differs from exp(s) / its row's sum",
                                      kSoftmaxSlips.name(s)));
  // Adding a constant to one row changes none of the weights (it cancels in the ratio).
  s.row(1).array() += 50.0;
  CHECK_MESSAGE(near(ch03::softmax_rows(s), expected), "softmax_rows changed when 50 was added to every score of row 1: a constant cancels in the ratio");
}

TEST_CASE("3.3 equal scores such as those of a zero query give uniform weights") {
  Matrix s = Matrix::Zero(2, 6);
  s.row(1).setConstant(7.0);
  INPUTS(s);
  CHECK_MESSAGE(near(ch03::softmax_rows(s), Matrix::Constant(2, 6, 1.0 / 6.0)), "softmax_rows of equal scores (rows of 0 and of 7) must give uniform weights 1/6");
}

TEST_CASE("3.3 bad input throws ShapeError or ValueError") {
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch03::softmax_rows, Matrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch03::softmax_rows, Matrix(3, 0));
  Matrix s = Matrix::Zero(2, 3);
  s(1, 1) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::softmax_rows, s);
  s(1, 1) = kInf;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::softmax_rows, s);
  s(1, 1) = -kInf;  // a masked score is chapter 4's subject: here it is bad input
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::softmax_rows, s);
}

// ---- 3.4 dot_product_variance ---------------------------------------------------------------

TEST_CASE("3.4 exact sample variance of a small case in the documented draw order") {
  const int d_k = 3, samples = 5;
  const std::uint64_t seed = 2024;
  const std::vector<double> z = documented_dots(d_k, samples, seed);
  const double root = std::sqrt(static_cast<double>(d_k));

  SUBCASE("unscaled") {
    Rng rng(seed);
    INPUTS(d_k, samples, false, seed);
    const double v = ch03::dot_product_variance(d_k, samples, false, rng);
    const double expected = sample_variance(z);
    CHECK_MESSAGE(near(v, expected),
                  said("dot_product_variance(3, 5, false, Rng(2024)) must be the sample variance (divided by samples - 1) of "
                       "5 dot products, each drawing q's 3 normals, then k's 3: " + format_number(expected),
                       kVarianceSlips.name(d_k, samples, false, seed)));
    // The generator moved on by exactly 2 · d_k · samples normals, no more, no fewer.
    Rng replica(seed);
    for (int i = 0; i < 2 * d_k * samples; ++i) replica.normal();
    CHECK_MESSAGE(rng.normal() == replica.normal(),
                  "rng must advance by exactly 2 * d_k * samples = 30 calls to rng.normal()");
  }

  SUBCASE("scaled") {
    Rng rng(seed);
    INPUTS(d_k, samples, true, seed);
    const double v = ch03::dot_product_variance(d_k, samples, true, rng);
    const double expected = sample_variance(divided(z, root));  // Var(z / sqrt(d_k)) = Var(z) / d_k
    CHECK_MESSAGE(near(v, expected),
                  said("dot_product_variance(3, 5, true, Rng(2024)) must divide each of the 5 dot products by sqrt(3) before "
                       "their sample variance (divided by samples - 1): " + format_number(expected),
                       kVarianceSlips.name(d_k, samples, true, seed)));
  }
}

TEST_CASE("3.4 unscaled variance grows like d_k and scaled variance stays near 1") {
  // How close must a correct answer be? z = q·k is a sum of d iid products q_c k_c, each with
  // mean 0, variance 1 and fourth moment E[q^4] E[k^4] = 3 · 3 = 9. So Var z = d and
  // E z^4 = 9d + 3d(d - 1) = 3d^2 + 6d. The sample variance of N values has variance about
  // (E z^4 - (Var z)^2) / N = (2d^2 + 6d) / N: a relative standard error of sqrt((2 + 6/d) / N),
  // the same for z / sqrt(d). With N = 1000 that is 5.9 % at d = 4 and 4.5 % at d = 1024. We allow
  // 5 standard errors: a correct implementation misses by chance with probability about 1e-6 (and
  // with the seed fixed, never), while the mistakes land at 1/d_k or d_k, off by 75 % or more.
  const int samples = 1000;
  for (int d_k : {4, 16, 64, 256, 1024}) {
    const double d = d_k;
    const double tolerance = 5.0 * std::sqrt((2.0 + 6.0 / d) / samples);
    INPUTS(d_k, samples, 34);
    Rng rng_unscaled(34), rng_scaled(34);
    const double unscaled = ch03::dot_product_variance(d_k, samples, false, rng_unscaled);
    const double scaled = ch03::dot_product_variance(d_k, samples, true, rng_scaled);
    CHECK_MESSAGE(std::abs(unscaled / d - 1.0) <= tolerance,
                  said("dot_product_variance(" + std::to_string(d_k) + ", 1000, false, Rng(34)) gave " + format_number(unscaled) +
                           ", more than 5 standard errors (" + format_number(tolerance * 100) + " %) from d_k = " +
                           std::to_string(d_k),
                       kVarianceSlips.name(d_k, samples, false, std::uint64_t{34})));
    CHECK_MESSAGE(std::abs(scaled - 1.0) <= tolerance,
                  said("dot_product_variance(" + std::to_string(d_k) + ", 1000, true, Rng(34)) gave " + format_number(scaled) +
                           ", more than 5 standard errors (" + format_number(tolerance * 100) + " %) from 1",
                       kVarianceSlips.name(d_k, samples, true, std::uint64_t{34})));
  }
}

TEST_CASE("3.4 d_k below 1 or fewer than 2 samples throw ShapeError") {
  constexpr char check_dk[] = "d_k below 1 must throw ShapeError";
  constexpr char check_samples[] = "fewer than 2 samples must throw ShapeError (one value has no sample variance)";
  Rng rng(0);
  // At the edge (0, 1), a little below it (-1) and far below it (the most negative int). A
  // negative d_k that reaches Eigen is what rejecting d_k = 0 alone gives.
  const bool rejects_zero = own_error<ShapeError>("dot_product_variance", [&] { ch03::dot_product_variance(0, 10, false, rng); });
  const Why dk(check_dk, std::nullopt, rejects_zero ? std::optional<Named>(kNegativeDk) : std::nullopt);
  for (int d_k : {0, -1, -3, kIntMin}) CHECK_THROWS_CALL(ShapeError, dk, ch03::dot_product_variance, d_k, 10, false, rng);
  for (int samples : {1, 0, -1, kIntMin}) CHECK_THROWS_CALL(ShapeError, check_samples, ch03::dot_product_variance, 4, samples, true, rng);
  INPUTS(1, 2, true);
  const std::string smallest = testing::thrown_by([&] { ch03::dot_product_variance(1, 2, true, rng); });
  CHECK_MESSAGE(smallest.empty(), "dot_product_variance(1, 2, true, rng), the smallest valid case, threw \"" << smallest << "\"");
}

// ---- 3.5 row_entropy ------------------------------------------------------------------------

TEST_CASE("3.5 entropy in nats of uniform and spread out rows") {
  const Matrix w = from_rows(3, 4, {0.25, 0.25, 0.25, 0.25,
                                    0.1, 0.2, 0.3, 0.4,
                                    0.7, 0.1, 0.1, 0.1});
  INPUTS(w);
  Matrix expected(3, 1);
  expected << std::log(4.0),  // uniform over m keys: ln m, the largest possible
      entropy_by_definition({0.1, 0.2, 0.3, 0.4}), entropy_by_definition({0.7, 0.1, 0.1, 0.1});
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected),
                said("row_entropy of the rows (0.25, 0.25, 0.25, 0.25), (0.1, 0.2, 0.3, 0.4), (0.7, 0.1, 0.1, 0.1) must give "
                     "-sum w ln w per row, in nats (ln 4 = 1.386 for the uniform row)",
                     kEntropySlips.name(w)));
}

TEST_CASE("3.5 a weight of zero contributes nothing") {
  const Matrix w = from_rows(3, 4, {0, 1, 0, 0,        // all weight on one key: entropy 0
                                    0.5, 0, 0.5, 0,    // two keys: ln 2
                                    0, 0, 0, 1});
  INPUTS(w);
  Matrix expected(3, 1);
  expected << 0.0, std::log(2.0), 0.0;
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected),
                said("row_entropy of the rows (0, 1, 0, 0), (0.5, 0, 0.5, 0), (0, 0, 0, 1) must give 0, ln 2, 0: "
                     "a weight of 0 adds nothing (0 ln 0 = 0)",
                     kEntropySlips.name(w)));
}

TEST_CASE("3.5 a tiny weight still counts") {
  // Only w = 0 adds nothing. A weight of 1e-10 adds -1e-10 ln 1e-10 = 2.3e-9, one of 1e-13 adds
  // 3.0e-12: far above the tolerance 1e-15 here, so skipping weights below a small threshold (to
  // keep ln away from 0) shows. The expected values use the same doubles as the input rows.
  const double a = 1 - 2e-10, b = 1 - 1e-13;
  const Matrix w = from_rows(2, 3, {a, 1e-10, 1e-10,
                                    b, 1e-13, 0});
  INPUTS(w);
  const auto term = [](double x) { return -x * std::log(x); };
  const Matrix expected = from_rows(2, 1, {term(a) + 2 * term(1e-10), term(b) + term(1e-13)});
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected, 1e-15),
                said("row_entropy of the rows (1 - 2e-10, 1e-10, 1e-10) and (1 - 1e-13, 1e-13, 0) must give about "
                     "4.8e-9 and 3.1e-12: every weight above 0 adds -w ln w, however small; only w = 0 adds nothing",
                     kEntropySlips.name(w)));
}

TEST_CASE("3.5 scaled scores give the worked example a more spread out attention") {
  // The worked example's weights in closed form (see 3.3): a row (x, x, 2x) of scores has weights
  // 1/(2 + e^x) twice and e^x/(2 + e^x); x = 1 unscaled, x = 1/sqrt(2) scaled.
  Matrix w(2, 3);
  double expected_h[2];
  const double xs[2] = {1.0, 1.0 / std::sqrt(2.0)};
  for (int i = 0; i < 2; ++i) {
    const double ex = std::exp(xs[i]), small = 1 / (2 + ex), large = ex / (2 + ex);
    w.row(i) << small, small, large;
    expected_h[i] = -2 * small * std::log(small) - large * std::log(large);
  }
  INPUTS(w);
  const Matrix expected = from_rows(2, 1, {expected_h[0], expected_h[1]});
  const Vector h = ch03::row_entropy(w);
  REQUIRE_MESSAGE(h.size() == 2, "row_entropy of 2 rows must give 2 entropies, got " << h.size());
  CHECK_MESSAGE(near(h, expected), said("row_entropy of the softmax rows of (1, 1, 2) and (1, 1, 2) / sqrt(2) must give "
                                        "-sum w ln w per row, in nats",
                                        kEntropySlips.name(w)));
  CHECK_MESSAGE(h(1) > h(0), "the flatter row (the scaled scores' softmax) must have the higher entropy");
  CHECK_MESSAGE(h(1) < std::log(3.0), "a row that is not uniform must have entropy below ln 3");
}

TEST_CASE("3.5 bad weights throw ShapeError or ValueError") {
  constexpr char check_negative[] = "a negative weight, however small, must throw ValueError";
  constexpr char check_sum[] = "a row that does not sum to 1 (within 1e-9) must throw ValueError";
  // Each dimension empty on its own: no rows, and rows of no weights (which sum to 0, but the
  // shape is what is wrong: ShapeError, not ValueError).
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch03::row_entropy, Matrix(0, 4));
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch03::row_entropy, Matrix(4, 0));
  // Negative weights, large and tiny, in rows that still sum to 1: no distribution either way
  // (a tolerance for "slightly negative" rounding is not in the contract). Letting the tiny one
  // through while catching the large one is what a tolerance below 0 gives.
  const std::optional<Named> tiny = negative_check_mistake();
  CHECK_THROWS_CALL(ValueError, check_negative, ch03::row_entropy, from_rows(1, 2, {1.5, -0.5}));
  CHECK_THROWS_CALL(ValueError, check_negative, ch03::row_entropy, from_rows(1, 3, {-1e15, 1e15, 1}));
  CHECK_THROWS_CALL(ValueError, Why(check_negative, tiny), ch03::row_entropy, from_rows(1, 2, {1, -1e-300}));
  CHECK_THROWS_CALL(ValueError, Why(check_negative, tiny), ch03::row_entropy, from_rows(1, 2, {1, -1e-30}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {kNaN, 1}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {kInf, 0}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {1, -kInf}));
  const std::optional<Named> sum = sum_check_mistake();
  CHECK_THROWS_CALL(ValueError, Why(check_sum, sum), ch03::row_entropy, from_rows(2, 2, {0.5, 0.5, 0.6, 0.3}));  // row 1 sums to 0.9
  // A first weight of exactly 1 says nothing about the rest: (1, 0.5) sums to 1.5.
  CHECK_THROWS_CALL(ValueError, Why(check_sum, sum), ch03::row_entropy, from_rows(1, 3, {1, 0.5, 0}));
  CHECK_THROWS_CALL(ValueError, Why(check_sum, sum), ch03::row_entropy, from_rows(1, 2, {1, 1e-6}));
}

TEST_CASE("3.5 the row-sum tolerance 1e-9 is kept on both sides") {
  // Just inside (|sum - 1| = 0.9e-9, 0.995e-9) is a distribution; just outside (1.1e-9, 1.005e-9)
  // is not. A looser or tighter tolerance (1e-8, 1e-6, 1.01e-9, 0.99e-9), a one-sided test, or exact
  // equality shows here. The sums are exact to about 1e-16, far below the 0.005e-9 margin.
  constexpr char check_sum[] = "a row whose sum is off by more than 1e-9 must throw ValueError";
  for (double off : {0.9e-9, -0.9e-9, 0.995e-9, -0.995e-9}) {
    const Matrix w = from_rows(1, 2, {0.5, 0.5 + off});
    INPUTS(off, w);
    Vector h;
    const std::string thrown = testing::thrown_by([&] { h = ch03::row_entropy(w); });
    REQUIRE_MESSAGE(thrown.empty(), "row_entropy of (0.5, 0.5 + " << format_number(off) << ") threw \"" << thrown
                                    << "\": a row summing to 1 within 1e-9 is a distribution");
    CHECK_MESSAGE(near(h(0), std::log(2.0), 1e-8), "row_entropy of (0.5, 0.5 + " << format_number(off) << ") must be about ln 2");
  }
  // Which known mistake the outcomes on both sides show, if one does (see sum_check_mistake).
  const std::optional<Named> mistake = sum_check_mistake();
  for (double off : {1.1e-9, -1.1e-9, 1.005e-9, -1.005e-9, 1e-6, -1e-6})
    CHECK_THROWS_CALL(ValueError, Why(check_sum, mistake), ch03::row_entropy, from_rows(2, 2, {0.5, 0.5, 0.5, 0.5 + off}));
  // A valid row whose float sum is off by 1.2e-7: the sum must be kept in double.
  const Matrix tenths = Matrix::Constant(1, 10, 0.1);
  INPUTS(tenths);
  const std::string thrown = testing::thrown_by([&] { ch03::row_entropy(tenths); });
  CHECK_MESSAGE(thrown.empty(), "row_entropy of ten weights of 0.1 (their sum is 1 to 1e-16) threw \"" << thrown
                                << "\": add the weights up in double (a float's sum of them is off by 1.2e-7)");
}

TEST_CASE("3.5 a weight of -0 is a weight of 0, and a subnormal weight counts") {
  // -0.0 == 0.0: not negative, adds nothing. 5e-324, the smallest double, adds -w ln w = 3.7e-321
  // (ln(1 / w) is finite, but 1 / w overflows to infinity).
  const double tiny = std::numeric_limits<double>::denorm_min();
  const Matrix w = from_rows(2, 3, {0.5, -0.0, 0.5, 1 - tiny, tiny, 0});
  INPUTS(w);
  Vector h;
  const std::string thrown = testing::thrown_by([&] { h = ch03::row_entropy(w); }, [&] { return "input: w = " + testing::show(w); });
  REQUIRE_MESSAGE(thrown.empty(), "row_entropy of (0.5, -0, 0.5) and (1 - 5e-324, 5e-324, 0) threw \"" << thrown
                                  << "\": -0 is a weight of 0 (not negative), and any weight above 0 is valid");
  const Matrix expected = from_rows(2, 1, {std::log(2.0), -tiny * std::log(tiny)});
  CHECK_MESSAGE(near(h, expected, 1e-15),
                said("row_entropy of (0.5, -0, 0.5) and (1 - 5e-324, 5e-324, 0) must give ln 2 and 3.7e-321: -0 adds "
                     "nothing, and -w ln w of the smallest double is finite (ln w, not ln(1 / w), which overflows)",
                     kEntropySlips.name(w)));
}

TEST_CASE("3.5 entropies stay between 0 and ln m for rows summing to 1 within 1e-9") {
  // The contract promises 0 <= H <= ln m for every valid row, also one whose sum is 1 + 5e-10:
  // -sum w ln w of (1 + 5e-10, 0, 0) is -5e-10, of m weights (1 + 9e-10) / m a little above ln m.
  const Matrix w = from_rows(3, 3, {1 + 5e-10, 0, 0,
                                    (1 + 9e-10) / 3, (1 + 9e-10) / 3, (1 + 9e-10) / 3,
                                    1 - 9e-10, 0, 0});
  INPUTS(w);
  const Vector h = ch03::row_entropy(w);
  for (Index i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK_MESSAGE((h(i) >= 0.0 && h(i) <= std::log(3.0)),
                  "row_entropy of row " << i << " gave " << format_number(h(i)) << ", outside [0, ln 3 = "
                  << format_number(std::log(3.0)) << "]: an entropy is never negative nor above ln m, also for a row "
                  "whose sum is off by up to 1e-9 (keep the result within the bounds)");
  }
  CHECK_MESSAGE(near(h, nats_of(w), 1e-8), "row_entropy of rows summing to 1 within 1e-9 must stay within 1e-8 of -sum w ln w");
}

TEST_CASE("3.5 property: every entropy lies between 0 and ln m and ignores the order of the weights") {
  testing::check_property(
      "for rows of weights summing to 1, row_entropy gives 0 <= H <= ln m (to 1e-15), and the same H when a row's weights "
      "are reversed",
      "w",
      [](const Matrix& w) -> std::string {
        const Vector h = ch03::row_entropy(w);
        if (h.size() != w.rows()) return "gave " + std::to_string(h.size()) + " entropies for " + std::to_string(w.rows()) + " rows";
        const Matrix reversed = w.rowwise().reverse();
        const Vector back = ch03::row_entropy(reversed);
        for (Index i = 0; i < w.rows(); ++i) {
          const double top = std::log(static_cast<double>(w.cols()));
          if (!(h(i) >= -1e-15 && h(i) <= top + 1e-15))
            return "row " + std::to_string(i) + " has H = " + format_number(h(i)) + ", outside [0, ln " +
                   std::to_string(w.cols()) + "]";
          if (!testing::same_output_number(back(i), h(i), 1e-14))
            return "row " + std::to_string(i) + " has H = " + format_number(h(i)) + ", reversed " + format_number(back(i));
        }
        return "";
      },
      gen_weights());
}

TEST_CASE("3.3 property: rows are distributions, keep the order of their scores and ignore a constant added") {
  // Scores in steps of 1/8 up to 50 and constants c that are multiples of 1024 up to 2^40: every
  // s + c is exact, so the softmax of s + c must equal that of s (to 1e-12), however far c takes
  // the scores past exp's range.
  testing::check_property(
      "for any finite scores s, softmax_rows(s) has rows of non-negative weights summing to 1 (to 1e-12), a larger "
      "score never gets a smaller weight, and softmax_rows(s + c) = softmax_rows(s) for a constant c",
      "s, c",
      [](const Matrix& s, double c) -> std::string {
        const Matrix w = ch03::softmax_rows(s);
        if (w.rows() != s.rows() || w.cols() != s.cols()) return "the weights are " + shape_of(w) + " for scores " + shape_of(s);
        for (Index i = 0; i < w.rows(); ++i) {
          if (!((w.row(i).array() >= 0.0).all()) || !(std::abs(w.row(i).sum() - 1.0) <= 1e-12))
            return "row " + std::to_string(i) + " is " + testing::show(RowVector(w.row(i))) + ", summing to " + format_number(w.row(i).sum());
          for (Index j = 0; j < w.cols(); ++j)
            for (Index l = 0; l < w.cols(); ++l)
              if (s(i, j) > s(i, l) && w(i, j) < w(i, l))
                return "row " + std::to_string(i) + ": score " + format_number(s(i, j)) + " gets weight " + format_number(w(i, j)) +
                       ", less than the " + format_number(w(i, l)) + " of the smaller score " + format_number(s(i, l));
        }
        const Matrix shifted = ch03::softmax_rows(Matrix(s.array() + c));
        if (!testing::same_output_matrix(shifted, w, 1e-12))
          return "adding " + format_number(c) + " to every score changed the weights: " + near(shifted, w).report.substr(0, 200);
        return "";
      },
      testing::gen_matrix({1, 3}, {1, 5}, testing::gen_number(-50, 50)),
      rc::gen::map(rc::gen::inRange(-(1 << 30), (1 << 30) + 1), [](int k) { return 1024.0 * k; }));
}

TEST_CASE("3.3 scores at both ends of the double range, and a row of one score") {
  // The largest finite scores, and a gap as wide as the double range: row max subtracted, the
  // smaller score's exponent is -inf in effect and its weight exactly 0. A row of one score has
  // weight 1, whatever the score.
  const double big = std::numeric_limits<double>::max();
  const Matrix s = from_rows(3, 2, {-big, big, big, big, -1e-300, 1e-300});
  INPUTS(s);
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, from_rows(3, 2, {0, 1, 0.5, 0.5, 0.5, 0.5})),
                said("softmax_rows of (-max, max), (max, max) and (-1e-300, 1e-300), max the largest double, must give "
                     "(0, 1), (1/2, 1/2), (1/2, 1/2): subtract each row's maximum, and nothing overflows",
                     kSoftmaxSlips.name(s)));
  const Matrix one = from_rows(3, 1, {big, -big, 0});
  INPUTS(one);
  CHECK_MESSAGE(near(ch03::softmax_rows(one), Matrix::Ones(3, 1)),
                said("softmax_rows of rows of a single score (the largest double, the lowest, 0) must give weight 1 each",
                     kSoftmaxSlips.name(one)));
}

TEST_CASE("3.1 property: entry (i, j) is q_i . k_j, and swapping q and k transposes the scores") {
  testing::check_property(
      "for any q (n, d_k) and k (m, d_k), dot_scores(q, k) is (n, m) with entry (i, j) the dot product of row i of q and "
      "row j of k (to 1e-12), and dot_scores(k, q) is its transpose",
      "q, k",
      [](const Matrix& q, const Matrix& k) -> std::string {
        const Matrix s = ch03::dot_scores(q, k), back = ch03::dot_scores(k, q);
        const testing::MatrixMatch match = near(s, dots_by_definition(q, k));
        if (!match) return "the scores are not the dot products: " + match.report.substr(0, 200);
        if (!testing::same_output_matrix(back, s.transpose(), 1e-12)) return "dot_scores(k, q) is not dot_scores(q, k) transposed";
        return "";
      },
      gen_queries_keys(6));
}

TEST_CASE("3.2 property: the dot products over sqrt(d_k), for every d_k") {
  testing::check_property(
      "for any q (n, d_k) and k (m, d_k), scaled_scores(q, k) is dot_scores(q, k) divided by sqrt(d_k), d_k = q.cols() "
      "(to 1e-12)",
      "q, k",
      [](const Matrix& q, const Matrix& k) -> std::string {
        const Matrix s = ch03::scaled_scores(q, k);
        const testing::MatrixMatch match = near(s, dots_by_definition(q, k) / std::sqrt(static_cast<double>(q.cols())));
        return match ? "" : "the scores are not the dot products over sqrt(" + std::to_string(q.cols()) + "): " + match.report.substr(0, 200);
      },
      gen_queries_keys(12));
}

TEST_CASE("3.4 property: the generator moves on by exactly 2 d_k samples normals, and the variance is the documented one") {
  testing::check_property(
      "for any d_k >= 1, samples >= 2 and seed, dot_product_variance draws exactly 2 * d_k * samples normals from rng and "
      "returns the sample variance of the documented draws (to 1e-12)",
      "d_k, samples, scaled, seed",
      [](int d_k, int samples, bool scaled, std::uint64_t seed) -> std::string {
        Rng rng(seed), replica(seed);
        const double v = ch03::dot_product_variance(d_k, samples, scaled, rng);
        for (int i = 0; i < 2 * d_k * samples; ++i) replica.normal();
        if (rng.normal() != replica.normal()) return "rng did not move on by exactly 2 * d_k * samples normals";
        const double expected = variance_of(documented_dots, d_k, samples, seed, scaled ? root_of(d_k) : 1.0, true, true);
        if (!testing::same_output_number(v, expected, 1e-12))
          return "the variance is " + format_number(v) + ", the documented draws' sample variance " + format_number(expected);
        return "";
      },
      rc::gen::inRange(1, 9), rc::gen::inRange(2, 13), rc::gen::arbitrary<bool>(),
      rc::gen::map(rc::gen::inRange(0, 1000), [](int s) { return static_cast<std::uint64_t>(s); }));
}

}  // TEST_SUITE
