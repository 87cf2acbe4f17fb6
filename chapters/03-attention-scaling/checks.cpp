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
#include <vector>

#include "attention_scaling.hpp"
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
constexpr Named kCosine{"cosine_similarity", "the scores divided by the vectors' lengths (cosine similarity) instead of sqrt(d_k)"};
constexpr Named kChecksLeft{"scaled_scores_checks_left_to_dot_scores", "scaled_scores leaves its input checks to dot_scores, so its errors name dot_scores"};
constexpr Named kNoSameCols{"dot_scores_no_same_cols", "dot_scores checks empty and non-finite input but not that q and k have the same d_k"};
constexpr Named kNoChecks{"dot_scores_no_checks", "dot_scores checks none of its input: empty, mismatched or NaN input gets a result or Eigen's assertion"};
constexpr Named kOverColumns{"softmax_over_columns", "the softmax over columns instead of rows: each row must sum to 1"};
constexpr Named kNotNormalised{"softmax_not_normalised", "exp of the scores without dividing by the row's sum"};
constexpr Named kShiftedNotNormalised{"softmax_shifted_not_normalised", "exp(s - the row's max) without dividing by the row's sum"};
constexpr Named kWithoutExp{"softmax_without_exp", "the scores divided by their row sum, without exp"};
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
constexpr Named kNegativeDk{"variance_dk_zero_only", "d_k = 0 rejected but a negative d_k reaches Eigen: d_k < 1 must throw ShapeError"};
constexpr Named kBits{"entropy_bits", "the entropy in bits (log2) instead of nats (natural log)"};
constexpr Named kDigits{"entropy_log10", "the entropy in decimal digits (log10) instead of nats (natural log)"};
constexpr Named kNoMinus{"entropy_sign", "the minus sign left out: H = -sum w ln w is never negative"};
constexpr Named kNormalised{"entropy_normalised", "the entropy divided by ln m (normalised): 3.5 asks for nats"};
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

// The classic mistake of 3.3: normalising each column instead of each row.
Matrix softmax_over_columns(const Matrix& s) {
  return softmax_by_definition(s.transpose()).transpose();
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

// The named shift mistakes of 3.3 whose output on S equals W.
std::string shift_mistakes(const Matrix& s, const Matrix& w) {
  const double top = s.maxCoeff();
  std::vector<Mistake> mistakes;
  for (bool eigen : {false, true}) {
    mistakes.push_back({kNoMax, softmax_shifted_by(s, [](const RowVector&) { return 0.0; }, eigen)});
    mistakes.push_back({kSubtractFirst, softmax_shifted_by(s, [](const RowVector& r) { return r(0); }, eigen)});
    mistakes.push_back({kSubtractMean, softmax_shifted_by(s, [](const RowVector& r) { return r.mean(); }, eigen)});
    mistakes.push_back({kSubtractMin, softmax_shifted_by(s, [](const RowVector& r) { return r.minCoeff(); }, eigen)});
    mistakes.push_back({kSubtractMatrixMax, softmax_shifted_by(s, [top](const RowVector&) { return top; }, eigen)});
  }
  // A shift that gives the right weights on this input proves nothing: left out.
  const Matrix right = softmax_shifted_by(s, [](const RowVector& r) { return r.maxCoeff(); }, false);
  std::vector<Mistake> telling;
  for (const Mistake& m : mistakes)
    if (!near(m.output, right, 1e-12)) telling.push_back(m);
  return suspect(w, telling, 1e-12);
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

// The named mistakes of 3.5 whose entropies on W equal H.
std::string entropy_mistakes(const Vector& h, const Matrix& w) {
  const auto entropies = [&](const std::function<double(double)>& term) {
    Vector out(w.rows());
    for (Index i = 0; i < w.rows(); ++i) {
      out(i) = 0.0;
      for (Index j = 0; j < w.cols(); ++j) out(i) += term(w(i, j));
    }
    return out;
  };
  const Vector nats = entropies([](double x) { return x > 0.0 ? -x * std::log(x) : 0.0; });
  std::vector<Mistake> mistakes = {
      {kBits, entropies([](double x) { return x > 0.0 ? -x * std::log2(x) : 0.0; })},
      {kDigits, entropies([](double x) { return x > 0.0 ? -x * std::log10(x) : 0.0; })},
      {kNoMinus, -nats},
      {kNormalised, nats / std::log(static_cast<double>(w.cols()))},
      {kNanAtZero, entropies([](double x) { return -x * std::log(x); })},
      {kSkipsTiny, entropies([](double x) { return x > 1e-9 ? -x * std::log(x) : 0.0; })}};
  std::vector<Mistake> telling;
  for (const Mistake& m : mistakes)
    if (!near(m.output, nats, 1e-15)) telling.push_back(m);
  return suspect(h, telling, 1e-14);
}

// The named mistakes of 3.4 whose result for (d_k, samples, scaled, Rng(seed)) equals V: each
// computed exactly from the same draws.
std::string variance_mistakes(double v, int d_k, int samples, bool scaled, std::uint64_t seed) {
  const std::vector<double> z = documented_dots(d_k, samples, seed);
  const double n = samples, root = std::sqrt(static_cast<double>(d_k));
  const std::vector<double> zs = scaled ? divided(z, root) : z;
  std::vector<testing::ScalarMistake> mistakes = {
      {kPopulation, squares_about(zs, mean_of(zs), n)},
      {kZeroMean, squares_about(zs, 0.0, n - 1)},
      {kZeroMeanPopulation, squares_about(zs, 0.0, n)},
      {kInterleaved, sample_variance(scaled ? divided(interleaved_dots(d_k, samples, seed), root) : interleaved_dots(d_k, samples, seed))},
      {kQueriesFirst, sample_variance(scaled ? divided(queries_first_dots(d_k, samples, seed), root) : queries_first_dots(d_k, samples, seed))}};
  if (scaled) {
    mistakes.push_back({kVarianceByDk, sample_variance(divided(z, d_k))});
    mistakes.push_back({kVarianceNotScaled, sample_variance(z)});
    mistakes.push_back({kVarianceDivided, sample_variance(z) / root});
  } else {
    mistakes.push_back({kScaledWhenNot, sample_variance(divided(z, root))});
  }
  const double right = sample_variance(zs);
  std::string found;
  for (const auto& m : mistakes) {  // a mistake whose value is the right one here proves nothing
    if (near(m.output, right, 1e-12)) continue;
    const std::string one = testing::suspect(v, {m}, 1e-12);
    if (!one.empty()) found += (found.empty() ? "" : " | ") + one;
  }
  return found;
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
                     suspect(s, {{kAlreadyScaled, expected / std::sqrt(2.0)}, {kTransposed, expected.transpose()}})));
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
                     suspect(s, {{kTransposed, expected.transpose()}, {kAlreadyScaled, expected / 2.0}})));  // sqrt(4) = 2
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
                     suspect(s, {{kNoScaling, from_rows(1, 3, {1, 1, 2})},
                                 {kByDk, from_rows(1, 3, {0.5, 0.5, 1})},
                                 {kTimesRoot, from_rows(1, 3, {r2, r2, 2 * r2})},
                                 {kByRootM, from_rows(1, 3, {1, 1, 2}) / std::sqrt(3.0)}})));
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
    Matrix cosine = raw;  // raw(i, j) / (|q_i| |k_j|)
    for (Index i = 0; i < cosine.rows(); ++i)
      for (Index j = 0; j < cosine.cols(); ++j) cosine(i, j) /= q.row(i).norm() * k.row(j).norm();
    const Matrix s = ch03::scaled_scores(q, k);
    CHECK_MESSAGE(near(s, expected),
                  said("scaled_scores of 3 queries and 5 keys with d_k = " + std::to_string(d_k) + " differs from the dot "
                       "products divided by sqrt(d_k), d_k being the columns of q and k",
                       suspect(s, {{kNoScaling, raw}, {kByDk, raw / d}, {kTimesRoot, raw * std::sqrt(d)},
                                   {kByRootM, raw / std::sqrt(5.0)}, {kByRootN, raw / std::sqrt(3.0)}, {kCosine, cosine}})));
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
                     suspect(s, {{kByRootM, from_rows(2, 3, {3, -1.5, 12, -2, 1, -8}) / std::sqrt(3.0)},
                                 {kByRootN, from_rows(2, 3, {3, -1.5, 12, -2, 1, -8}) / std::sqrt(2.0)}})));
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
  Matrix exp_only = s.array().exp().matrix(), exp_shifted = exp_only, no_exp = s;
  for (Index i = 0; i < 2; ++i) {
    exp_shifted.row(i) /= exp_only.row(i).maxCoeff();  // exp(s - row max), not normalised
    no_exp.row(i) /= s.row(i).sum();
  }
  CHECK_MESSAGE(near(w, expected),
                said("softmax_rows of the rows (1, 1, 2) and (1, 1, 2) / sqrt(2) must give each row's exp(s - its max) divided "
                     "by that row's sum: (1, 1, e) / (2 + e) and (1, 1, e^a) / (2 + e^a) with a = 1 / sqrt(2)",
                     suspect(w, {{kOverColumns, softmax_over_columns(s)}, {kNotNormalised, exp_only},
                                 {kShiftedNotNormalised, exp_shifted}, {kWithoutExp, no_exp}})));
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
                     shift_mistakes(s, w)));
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
                       shift_mistakes(s, w)));
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
                                      suspect(w, {{kOverColumns, softmax_over_columns(s)}})));
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
                       variance_mistakes(v, d_k, samples, false, seed)));
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
                       variance_mistakes(v, d_k, samples, true, seed)));
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
                       variance_mistakes(unscaled, d_k, samples, false, 34)));
    CHECK_MESSAGE(std::abs(scaled - 1.0) <= tolerance,
                  said("dot_product_variance(" + std::to_string(d_k) + ", 1000, true, Rng(34)) gave " + format_number(scaled) +
                           ", more than 5 standard errors (" + format_number(tolerance * 100) + " %) from 1",
                       variance_mistakes(scaled, d_k, samples, true, 34)));
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
                     entropy_mistakes(h, w)));
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
                     entropy_mistakes(h, w)));
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
                     entropy_mistakes(h, w)));
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
                                        entropy_mistakes(h, w)));
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
  const bool rejects_large = own_error<ValueError>("row_entropy", [&] { ch03::row_entropy(from_rows(1, 2, {1.5, -0.5})); });
  CHECK_THROWS_CALL(ValueError, check_negative, ch03::row_entropy, from_rows(1, 2, {1.5, -0.5}));
  CHECK_THROWS_CALL(ValueError, check_negative, ch03::row_entropy, from_rows(1, 3, {-1e15, 1e15, 1}));
  CHECK_THROWS_CALL(ValueError, Why(check_negative, rejects_large ? std::optional<Named>(kTinyNegative) : std::nullopt),
                    ch03::row_entropy, from_rows(1, 2, {1, -1e-300}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {kNaN, 1}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {kInf, 0}));
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch03::row_entropy, from_rows(1, 2, {1, -kInf}));
  CHECK_THROWS_CALL(ValueError, Why(check_sum, kNoSumCheck), ch03::row_entropy, from_rows(2, 2, {0.5, 0.5, 0.6, 0.3}));  // row 1 sums to 0.9
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
  // Off by 1e-6 caught while 1.1e-9 passes: that is a looser tolerance; not even 1e-6: no check.
  const bool catches_far = own_error<ValueError>("row_entropy", [&] { ch03::row_entropy(from_rows(2, 2, {0.5, 0.5, 0.5, 0.5 + 1e-6})); });
  for (double off : {1.1e-9, -1.1e-9, 1.005e-9, -1.005e-9, 1e-6, -1e-6}) {
    const bool far = std::abs(off) >= 1e-6;
    const std::optional<Named> mistake = far ? std::optional<Named>(kNoSumCheck)
                                             : catches_far ? std::optional<Named>(kLooseTolerance) : std::nullopt;
    CHECK_THROWS_CALL(ValueError, Why(check_sum, mistake), ch03::row_entropy, from_rows(2, 2, {0.5, 0.5, 0.5, 0.5 + off}));
  }
}

}  // TEST_SUITE
