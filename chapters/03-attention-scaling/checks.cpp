// Chapter 3 checks — why attention scores are divided by sqrt(d_k).
//
// Every expected value is derived here from its formula (a closed form, an explicit loop, the
// documented draw order), never copied from the reference's output. Where a classic mistake has a
// recognisable output, the check computes that output too, so that its failure message can name
// the mistake ("looks like a known mistake: scores divided by d_k instead of sqrt(d_k)?").
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "attention_scaling.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::suspect;
using scalebook::testing::ScalarMistake;
namespace ch03 = scalebook::ch03;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
constexpr int kIntMin = std::numeric_limits<int>::min();

// The classic mistakes, as the failure messages name them.
constexpr char kNoScaling[] = "no scaling: the raw dot products?";
constexpr char kByDk[] = "scores divided by d_k instead of sqrt(d_k)?";
constexpr char kTimesRoot[] = "scores multiplied by sqrt(d_k) instead of divided?";
constexpr char kByRootM[] = "divided by the square root of the number of keys m instead of d_k?";
constexpr char kByRootN[] =
    "divided by the square root of the number of queries n instead of d_k?";
constexpr char kAlreadyScaled[] =
    "scores already divided by sqrt(d_k)? 3.1 asks for the raw dot products (scaling is 3.2)";
constexpr char kTransposed[] =
    "K Q^T of shape (m, n) instead of Q K^T of shape (n, m)? Row i belongs to query i";
constexpr char kOverColumns[] = "softmax over columns instead of rows? Each ROW must sum to 1";
constexpr char kPopulation[] = "population variance: divided by samples instead of samples - 1?";
constexpr char kZeroMean[] = "assumed the mean is 0 instead of subtracting the sample mean?";
constexpr char kBits[] = "entropy in bits (log2) instead of nats (natural log)?";

// What the bad-input checks suspect when nothing was thrown (CHECK_THROWS_TYPED names the type
// that was thrown instead, and requires the message to start with the function's name).
constexpr char kCheckEmpty[] = "empty input must throw ShapeError: a missing require_nonempty?";
constexpr char kCheckSameCols[] =
    "q and k with different d_k must throw ShapeError: a missing require_same_cols?";
constexpr char kCheckFinite[] = "NaN or infinity must throw ValueError: a missing require_finite?";

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

// A softmax without the max subtraction fails on scores like 1000 in one of two ways: with
// std::exp, exp(1000) overflows to inf (inf / inf = NaN) and exp(-1000) underflows to 0 (0 / 0 =
// NaN); Eigen 3.4.0's array exp() clamps its argument near +-709 instead, which gives finite but
// wrong weights. Either way the failure message names the mistake.
std::string large_score_diagnosis(const Matrix& scores, const Matrix& w) {
  const char* mistake = "softmax without subtracting each row's maximum? exp(1000) overflows to "
                        "inf and exp(-1000) underflows to 0";
  if (!w.allFinite()) {
    return std::string("looks like a known mistake: ") + mistake +
           " (subtracting something else, such as the row's first entry, its mean, 0 or the whole "
           "matrix's maximum, overflows too when the scores are far apart)";
  }
  Matrix naive = scores.array().exp().matrix();
  for (Index i = 0; i < naive.rows(); ++i) naive.row(i) /= naive.row(i).sum();
  return suspect(w, {{mistake, naive}});
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

// Like suspect(), for a measured value: names the first mistake whose typical value lies within
// a relative tolerance of the actual one.
struct TypicalValue {
  double value;
  const char* description;
};
std::string suspect_relative(double actual, std::initializer_list<TypicalValue> mistakes,
                             double relative_tolerance, const std::string& otherwise) {
  for (const TypicalValue& mistake : mistakes) {
    if (std::abs(actual / mistake.value - 1.0) <= relative_tolerance) {
      return std::string("looks like a known mistake: ") + mistake.description;
    }
  }
  return otherwise;
}

// -sum w ln w over one row, skipping zeros (0 ln 0 = 0), in nats.
double entropy_by_definition(std::initializer_list<double> row) {
  double h = 0.0;
  for (double w : row)
    if (w > 0.0) h -= w * std::log(w);
  return h;
}

std::string zero_weight_diagnosis(const Vector& h) {
  if (h.allFinite()) return "";
  return "looks like a known mistake: 0 * ln 0 evaluated as 0 * (-inf) = NaN? A zero weight must "
         "contribute 0 (the limit of w ln w as w -> 0)";
}

}  // namespace

TEST_SUITE("03-attention-scaling") {

// ---- 3.1 dot_scores -------------------------------------------------------------------------

TEST_CASE("3.1 dot scores of the worked example") {
  const Matrix q = from_rows(1, 2, {1, 1});
  const Matrix k = from_rows(3, 2, {1, 0,    // key 0
                                    0, 1,    // key 1
                                    1, 1});  // key 2
  // 1·1 + 1·0 = 1, 1·0 + 1·1 = 1, 1·1 + 1·1 = 2
  const Matrix expected = from_rows(1, 3, {1, 1, 2});
  const Matrix s = ch03::dot_scores(q, k);
  CHECK_MESSAGE(near(s, expected),
                said("dot_scores of q = (1, 1) and the keys (1, 0), (0, 1), (1, 1) must give (1, 1, 2): score j is q dotted with key j (row j of k), not yet scaled", suspect(s, {{kAlreadyScaled, expected / std::sqrt(2.0)},
                            {kTransposed, expected.transpose()}})));
}

TEST_CASE("3.1 row i column j holds query i dotted with key j") {
  Rng rng(31);
  const Matrix q = normal_matrix(3, 4, rng);  // n = 3 queries, d_k = 4
  const Matrix k = normal_matrix(5, 4, rng);  // m = 5 keys
  const Matrix expected = dots_by_definition(q, k);
  const Matrix s = ch03::dot_scores(q, k);
  CHECK_MESSAGE(near(s, expected),
                said("dot_scores of 3 random queries and 5 keys (d_k = 4) is wrong: entry (i, j) must be row i of q dotted with row j of k, a 3 x 5 matrix; compare your entry (0, 0) with q.row(0).dot(k.row(0))", suspect(s, {{kTransposed, expected.transpose()},
                            {kAlreadyScaled, expected / 2.0}})));  // sqrt(4) = 2
}

TEST_CASE("3.1 one query and one key give a single score") {
  const Matrix s = ch03::dot_scores(from_rows(1, 3, {2, -1, 0.5}), from_rows(1, 3, {-4, 3, 8}));
  CHECK_MESSAGE(near(s, from_rows(1, 1, {-8 - 3 + 4})), "2 * -4 + -1 * 3 + 0.5 * 8 = -7");
}

TEST_CASE("3.1 mismatched or empty shapes throw ShapeError") {
  const Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  // k's d_k smaller and larger than q's: a loop over q's columns reads past a smaller k (Eigen
  // stops it) but silently ignores the extra columns of a larger one.
  CHECK_THROWS_TYPED(ch03::dot_scores(q, Matrix::Ones(4, 2)), ShapeError, "dot_scores",
                     kCheckSameCols);
  CHECK_THROWS_TYPED(ch03::dot_scores(q, Matrix::Ones(4, 5)), ShapeError, "dot_scores",
                     kCheckSameCols);
  CHECK_THROWS_TYPED(ch03::dot_scores(Matrix::Ones(2, 4), k), ShapeError, "dot_scores",
                     kCheckSameCols);
  // Each dimension empty on its own: n = 0, m = 0, d_k = 0.
  CHECK_THROWS_TYPED(ch03::dot_scores(Matrix(0, 3), k), ShapeError, "dot_scores", kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::dot_scores(q, Matrix(0, 3)), ShapeError, "dot_scores", kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::dot_scores(Matrix(2, 0), Matrix(4, 0)), ShapeError, "dot_scores",
                     kCheckEmpty);
}

TEST_CASE("3.1 NaN or infinity in the input throws ValueError") {
  Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  q(1, 2) = kNaN;
  CHECK_THROWS_TYPED(ch03::dot_scores(q, k), ValueError, "dot_scores", kCheckFinite);
  q(1, 2) = kInf;
  CHECK_THROWS_TYPED(ch03::dot_scores(q, k), ValueError, "dot_scores", kCheckFinite);
  q(1, 2) = 1.0;
  k(3, 0) = -kInf;
  CHECK_THROWS_TYPED(ch03::dot_scores(q, k), ValueError, "dot_scores", kCheckFinite);
  k(3, 0) = kNaN;
  CHECK_THROWS_TYPED(ch03::dot_scores(q, k), ValueError, "dot_scores", kCheckFinite);
}

// ---- 3.2 scaled_scores ----------------------------------------------------------------------

TEST_CASE("3.2 scaled scores of the worked example") {
  const Matrix q = from_rows(1, 2, {1, 1});
  const Matrix k = from_rows(3, 2, {1, 0, 0, 1, 1, 1});
  const double r2 = std::sqrt(2.0);  // d_k = 2
  const Matrix expected = from_rows(1, 3, {1 / r2, 1 / r2, 2 / r2});  // 0.7071, 0.7071, 1.4142
  const Matrix s = ch03::scaled_scores(q, k);
  CHECK_MESSAGE(near(s, expected),
                said("scaled_scores of q = (1, 1) and the keys (1, 0), (0, 1), (1, 1) must give (1, 1, 2) / sqrt(2): the dot scores divided by sqrt(d_k), where d_k = 2 is the number of columns of q", suspect(s, {{kNoScaling, from_rows(1, 3, {1, 1, 2})},
                            {kByDk, from_rows(1, 3, {0.5, 0.5, 1})},
                            {kTimesRoot, from_rows(1, 3, {r2, r2, 2 * r2})},
                            {kByRootM, from_rows(1, 3, {1, 1, 2}) / std::sqrt(3.0)}})));
}

TEST_CASE("3.2 scores are divided by the square root of d_k for several d_k") {
  Rng rng(32);
  for (int d_k : {2, 9, 64}) {
    CAPTURE(d_k);
    const Matrix q = normal_matrix(3, d_k, rng), k = normal_matrix(5, d_k, rng);
    const double d = d_k;
    const Matrix raw = dots_by_definition(q, k);
    const Matrix expected = raw / std::sqrt(d);
    Matrix cosine = raw;  // raw(i, j) / (|q_i| |k_j|)
    for (Index i = 0; i < cosine.rows(); ++i)
      for (Index j = 0; j < cosine.cols(); ++j) cosine(i, j) /= q.row(i).norm() * k.row(j).norm();
    const Matrix s = ch03::scaled_scores(q, k);
    CHECK_MESSAGE(near(s, expected),
                  said("scaled_scores of 3 random queries and 5 keys with d_k = " + std::to_string(d_k) + " is wrong: each score must be the dot product divided by sqrt(d_k), d_k being the columns of q and k", suspect(s, {{kNoScaling, raw},
                              {kByDk, raw / d},
                              {kTimesRoot, raw * std::sqrt(d)},
                              {kByRootM, raw / std::sqrt(5.0)},
                              {kByRootN, raw / std::sqrt(3.0)},
                              {"divided by the vectors' lengths (cosine similarity) instead of "
                               "sqrt(d_k)?", cosine}})));
  }
}

TEST_CASE("3.2 scaling keeps the order of the scores") {
  // Keys of very different lengths: a scaling that is the same for every score keeps their order;
  // dividing each score by its key's length (cosine similarity) would not.
  Rng rng(323);
  const Matrix q = normal_matrix(2, 6, rng);
  Matrix k = normal_matrix(8, 6, rng);
  for (Index j = 0; j < k.rows(); ++j) k.row(j) *= std::pow(3.0, static_cast<double>(j % 4) - 1.5);
  const Matrix raw = dots_by_definition(q, k);
  const Matrix s = ch03::scaled_scores(q, k);
  REQUIRE_MESSAGE((s.rows() == 2 && s.cols() == 8), "scaled_scores of 2 queries and 8 keys must be (2, 8), got " << shape_of(s));
  for (Index i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(near(order_of(s.row(i)), order_of(raw.row(i)), 0.0),
                  "the order of query i's scores changed: divided each score by something that "
                  "depends on the key (its length?) instead of the same sqrt(d_k) for all");
  }
}

TEST_CASE("3.2 a zero query scores every key 0") {
  Rng rng(324);
  const Matrix q = Matrix::Zero(2, 5), k = normal_matrix(6, 5, rng);
  CHECK_MESSAGE(near(ch03::scaled_scores(q, k), Matrix::Zero(2, 6), 0.0), "scaled_scores of a zero query must score every key exactly 0");
}

TEST_CASE("3.2 with d_k = 1 there is nothing to scale") {
  // sqrt(1) = 1: the scores are the plain products. A divisor of d_k - 1 or an integer sqrt would
  // show here (0 or a division by zero).
  const Matrix s = ch03::scaled_scores(from_rows(2, 1, {3, -2}), from_rows(3, 1, {1, -0.5, 4}));
  CHECK_MESSAGE(near(s, from_rows(2, 3, {3, -1.5, 12, -2, 1, -8})), "scaled_scores with d_k = 1 must be the plain products (sqrt(1) = 1)");
}

TEST_CASE("3.2 bad input throws ShapeError or ValueError") {
  const Matrix q = Matrix::Ones(2, 3), k = Matrix::Ones(4, 3);
  CHECK_THROWS_TYPED(ch03::scaled_scores(q, Matrix::Ones(4, 5)), ShapeError, "scaled_scores",
                     kCheckSameCols);
  CHECK_THROWS_TYPED(ch03::scaled_scores(q, Matrix::Ones(4, 2)), ShapeError, "scaled_scores",
                     kCheckSameCols);
  CHECK_THROWS_TYPED(ch03::scaled_scores(Matrix(0, 3), k), ShapeError, "scaled_scores",
                     kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::scaled_scores(q, Matrix(0, 3)), ShapeError, "scaled_scores",
                     kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::scaled_scores(Matrix(2, 0), Matrix(4, 0)), ShapeError, "scaled_scores",
                     kCheckEmpty);  // d_k = 0: there is no sqrt(d_k) to divide by
  Matrix bad = k;
  bad(2, 1) = kNaN;
  CHECK_THROWS_TYPED(ch03::scaled_scores(q, bad), ValueError, "scaled_scores", kCheckFinite);
  bad(2, 1) = kInf;
  CHECK_THROWS_TYPED(ch03::scaled_scores(bad, q), ValueError, "scaled_scores", kCheckFinite);
  bad(2, 1) = -kInf;
  CHECK_THROWS_TYPED(ch03::scaled_scores(q, bad), ValueError, "scaled_scores", kCheckFinite);
}

// ---- 3.3 softmax_rows -----------------------------------------------------------------------

TEST_CASE("3.3 softmax of the worked example with and without scaling") {
  const double a = 1 / std::sqrt(2.0);
  const Matrix s = from_rows(2, 3, {1, 1, 2,             // unscaled scores
                                    a, a, 2 * a});       // scaled scores
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
                said("softmax_rows of the rows (1, 1, 2) and (1, 1, 2) / sqrt(2) is wrong: each row must be exp(s - the row's max) divided by that row's sum, so every row sums to 1", suspect(w, {{kOverColumns, softmax_over_columns(s)},
                            {"exp without dividing by the row's sum?", exp_only},
                            {"exp(s - max) without dividing by the row's sum?", exp_shifted},
                            {"scores divided by their row sum, without exp?", no_exp}})));
}

TEST_CASE("3.3 large scores neither overflow nor underflow") {
  const double l3 = std::log(3.0);
  const Matrix s = from_rows(3, 2, {1000, 1000 + l3,     // exp(1000) overflows a double
                                    -1000, -1000 + l3,   // exp(-1000) underflows to 0
                                    1000, 0});
  // Only differences matter: exp(x) : exp(x + ln 3) = 1 : 3, and exp(-1000) / 1 rounds to 0.
  const Matrix expected = from_rows(3, 2, {0.25, 0.75, 0.25, 0.75, 1, 0});
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, expected), large_score_diagnosis(s, w));
}

TEST_CASE("3.3 the largest score may sit in any position and differ by far more than exp's range") {
  // Row p has its maximum at position p. exp overflows above about 709.8 and underflows to 0 below
  // about -745, so spreads of 1e4 and 1e300 are far beyond its range in both directions. Only the
  // row's own maximum is safe to subtract: the first entry, the row's mean, its minimum, 0 or the
  // whole matrix's maximum all send some exponent past the range here.
  const Index m = 4;
  const double l3 = std::log(3.0);
  for (double spread : {1e4, 1e300}) {
    CAPTURE(spread);
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
    const Matrix w = ch03::softmax_rows(s);
    CHECK_MESSAGE(near(w, expected), large_score_diagnosis(s, w));
  }
}

TEST_CASE("3.3 each row is a distribution over its own keys") {
  Rng rng(33);
  Matrix s = 3.0 * normal_matrix(3, 5, rng);
  const Matrix expected = softmax_by_definition(s);  // each row non-negative, summing to 1
  const Matrix w = ch03::softmax_rows(s);
  CHECK_MESSAGE(near(w, expected), said("softmax_rows of 3 rows of 5 scores differs from the softmax by its definition",
                                      suspect(w, {{kOverColumns, softmax_over_columns(s)}})));
  // Adding a constant to one row changes none of the weights (it cancels in the ratio).
  s.row(1).array() += 50.0;
  CHECK_MESSAGE(near(ch03::softmax_rows(s), expected), "softmax_rows changed when a constant was added to one row: it cancels in the ratio");
}

TEST_CASE("3.3 equal scores such as those of a zero query give uniform weights") {
  Matrix s = Matrix::Zero(2, 6);
  s.row(1).setConstant(7.0);
  CHECK_MESSAGE(near(ch03::softmax_rows(s), Matrix::Constant(2, 6, 1.0 / 6.0)), "softmax_rows of equal scores must give uniform weights 1/6");
}

TEST_CASE("3.3 bad input throws ShapeError or ValueError") {
  CHECK_THROWS_TYPED(ch03::softmax_rows(Matrix(0, 3)), ShapeError, "softmax_rows", kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::softmax_rows(Matrix(3, 0)), ShapeError, "softmax_rows", kCheckEmpty);
  Matrix s = Matrix::Zero(2, 3);
  s(1, 1) = kNaN;
  CHECK_THROWS_TYPED(ch03::softmax_rows(s), ValueError, "softmax_rows", kCheckFinite);
  s(1, 1) = kInf;
  CHECK_THROWS_TYPED(ch03::softmax_rows(s), ValueError, "softmax_rows", kCheckFinite);
  s(1, 1) = -kInf;  // a masked score is chapter 4's subject: here it is bad input
  CHECK_THROWS_TYPED(ch03::softmax_rows(s), ValueError, "softmax_rows", kCheckFinite);
}

// ---- 3.4 dot_product_variance ---------------------------------------------------------------

TEST_CASE("3.4 exact sample variance of a small case in the documented draw order") {
  const int d_k = 3, samples = 5;
  const std::uint64_t seed = 2024;
  const std::vector<double> z = documented_dots(d_k, samples, seed);
  const double n = samples, root = std::sqrt(static_cast<double>(d_k));

  SUBCASE("unscaled") {
    Rng rng(seed);
    const double v = ch03::dot_product_variance(d_k, samples, false, rng);
    const double expected = sample_variance(z);
    CHECK_MESSAGE(near(v, expected),
                  said("dot_product_variance(3, 5, false, Rng(2024)) is wrong: it must be the sample variance (divided by samples - 1) of 5 dot products, each drawing q's 3 normals, then k's 3; check the draw order and the divisor", suspect(v, {{kPopulation, squares_about(z, mean_of(z), n)},
                              {kZeroMean, squares_about(z, 0.0, n - 1)},
                              {"assumed mean 0 and divided by samples?", squares_about(z, 0.0, n)},
                              {"q and k components drawn interleaved instead of q first, then k?",
                               sample_variance(interleaved_dots(d_k, samples, seed))},
                              {"every sample's q drawn before every k? Draw q then k per sample",
                               sample_variance(queries_first_dots(d_k, samples, seed))},
                              {"scaled although scaled is false?", expected / d_k}})));
    // The generator moved on by exactly 2 · d_k · samples normals, no more, no fewer.
    Rng replica(seed);
    for (int i = 0; i < 2 * d_k * samples; ++i) replica.normal();
    CHECK_MESSAGE(rng.normal() == replica.normal(),
                  "rng must advance by exactly 2 * d_k * samples calls to rng.normal()");
  }

  SUBCASE("scaled") {
    Rng rng(seed);
    const double v = ch03::dot_product_variance(d_k, samples, true, rng);
    const double expected = sample_variance(divided(z, root));  // Var(z / sqrt(d_k)) = Var(z) / d_k
    CHECK_MESSAGE(near(v, expected),
                  said("dot_product_variance(3, 5, true, Rng(2024)) is wrong: scaled, each of the 5 dot products is divided by sqrt(3) before their sample variance (divided by samples - 1) is taken", suspect(v, {{kNoScaling, sample_variance(z)},
                              {kByDk, sample_variance(divided(z, d_k))},
                              {"the variance divided by sqrt(d_k) instead of the scores?",
                               sample_variance(z) / root},
                              {kPopulation, sample_variance(divided(z, root)) * (n - 1) / n},
                              {kZeroMean, squares_about(divided(z, root), 0.0, n - 1)}})));
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
    CAPTURE(d_k);
    const double d = d_k;
    const double tolerance = 5.0 * std::sqrt((2.0 + 6.0 / d) / samples);
    Rng rng_unscaled(34), rng_scaled(34);
    const double unscaled = ch03::dot_product_variance(d_k, samples, false, rng_unscaled);
    const double scaled = ch03::dot_product_variance(d_k, samples, true, rng_scaled);
    CAPTURE(unscaled);
    CAPTURE(scaled);
    CHECK_MESSAGE(std::abs(unscaled / d - 1.0) <= tolerance,
                  suspect_relative(unscaled, {{1.0, "scaled although scaled is false?"}}, tolerance,
                                   "the unscaled variance is more than 5 standard errors from "
                                   "d_k"));
    CHECK_MESSAGE(std::abs(scaled - 1.0) <= tolerance,
                  suspect_relative(scaled, {{1.0 / d, kByDk}, {d, kNoScaling}}, tolerance,
                                   "the scaled variance is more than 5 standard errors from 1"));
  }
}

TEST_CASE("3.4 d_k below 1 or fewer than 2 samples throw ShapeError") {
  constexpr char check_dk[] = "d_k < 1 must throw ShapeError: a missing require_positive check?";
  constexpr char check_samples[] =
      "samples < 2 must throw ShapeError (one value has no sample variance): a missing check?";
  Rng rng(0);
  // At the edge (0, 1), a little below it (-1) and far below it (the most negative int).
  for (int d_k : {0, -1, -3, kIntMin}) {
    CAPTURE(d_k);
    CHECK_THROWS_TYPED(ch03::dot_product_variance(d_k, 10, false, rng), ShapeError,
                       "dot_product_variance", check_dk);
  }
  for (int samples : {1, 0, -1, kIntMin}) {
    CAPTURE(samples);
    CHECK_THROWS_TYPED(ch03::dot_product_variance(4, samples, true, rng), ShapeError,
                       "dot_product_variance", check_samples);
  }
  CHECK_NOTHROW(ch03::dot_product_variance(1, 2, true, rng));  // the smallest valid case
}

// ---- 3.5 row_entropy ------------------------------------------------------------------------

TEST_CASE("3.5 entropy in nats of uniform and spread out rows") {
  const Matrix w = from_rows(3, 4, {0.25, 0.25, 0.25, 0.25,
                                    0.1, 0.2, 0.3, 0.4,
                                    0.7, 0.1, 0.1, 0.1});
  Matrix expected(3, 1);
  expected << std::log(4.0),  // uniform over m keys: ln m, the largest possible
      entropy_by_definition({0.1, 0.2, 0.3, 0.4}), entropy_by_definition({0.7, 0.1, 0.1, 0.1});
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected),
                said("row_entropy of the rows (0.25, 0.25, 0.25, 0.25), (0.1, 0.2, 0.3, 0.4), (0.7, 0.1, 0.1, 0.1) is wrong: each must be -sum w ln w over its row, in nats (ln 4 = 1.386 for the uniform row)", suspect(h, {{kBits, expected / std::log(2.0)},
                            {"entropy in decimal digits (log10) instead of nats (natural log)?",
                             expected / std::log(10.0)},
                            {"missing the minus sign? H = -sum w ln w is never negative",
                             -expected},
                            {"divided by ln m (a normalised entropy)? 3.5 asks for nats",
                             expected / std::log(4.0)}})));
}

TEST_CASE("3.5 a weight of zero contributes nothing") {
  const Matrix w = from_rows(3, 4, {0, 1, 0, 0,        // all weight on one key: entropy 0
                                    0.5, 0, 0.5, 0,    // two keys: ln 2
                                    0, 0, 0, 1});
  Matrix expected(3, 1);
  expected << 0.0, std::log(2.0), 0.0;
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected),
                said("row_entropy of the rows (0, 1, 0, 0), (0.5, 0, 0.5, 0), (0, 0, 0, 1) must give 0, ln 2, 0: "
                     "a weight of 0 adds nothing (0 ln 0 = 0), so look at how your loop treats w = 0",
                     zero_weight_diagnosis(h) + suspect(h, {{kBits, expected / std::log(2.0)}})));
}

TEST_CASE("3.5 a tiny weight still counts") {
  // Only w = 0 adds nothing. A weight of 1e-10 adds -1e-10 ln 1e-10 = 2.3e-9, one of 1e-13 adds
  // 3.0e-12: far above the tolerance 1e-15 here, so skipping weights below a small threshold (to
  // keep ln away from 0) shows. The expected values use the same doubles as the input rows.
  const double a = 1 - 2e-10, b = 1 - 1e-13;
  const Matrix w = from_rows(2, 3, {a, 1e-10, 1e-10,
                                    b, 1e-13, 0});
  const auto term = [](double x) { return -x * std::log(x); };
  const Matrix expected = from_rows(2, 1, {term(a) + 2 * term(1e-10), term(b) + term(1e-13)});
  const Matrix skipped = from_rows(2, 1, {term(a), term(b)});
  const Vector h = ch03::row_entropy(w);
  CHECK_MESSAGE(near(h, expected, 1e-15),
                said("row_entropy of the rows (1 - 2e-10, 1e-10, 1e-10) and (1 - 1e-13, 1e-13, 0) must give about "
                     "4.8e-9 and 3.1e-12: every weight above 0 adds -w ln w, however small; only w = 0 adds nothing",
                     suspect(h, {{"weights below a small threshold skipped? Only a weight of exactly 0 adds nothing",
                                  skipped}}, 1e-15)));
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
  const Matrix expected = from_rows(2, 1, {expected_h[0], expected_h[1]});
  const Vector h = ch03::row_entropy(w);
  REQUIRE_MESSAGE(h.size() == 2, "row_entropy of 2 rows must give 2 entropies, got " << h.size());
  CHECK_MESSAGE(near(h, expected), said("row_entropy of two rows worked in the comment is wrong", suspect(h, {{kBits, expected / std::log(2.0)}})));
  CHECK_MESSAGE(h(1) > h(0), "the flatter row must have the higher entropy");
  CHECK_MESSAGE(h(1) < std::log(3.0), "a row that is not uniform must have entropy below ln 3");
}

TEST_CASE("3.5 bad weights throw ShapeError or ValueError") {
  constexpr char check_negative[] = "a negative weight must throw ValueError: a missing check?";
  constexpr char check_sum[] =
      "a row that does not sum to 1 (within 1e-9) must throw ValueError: a missing check?";
  // Each dimension empty on its own: no rows, and rows of no weights (which sum to 0, but the
  // shape is what is wrong: ShapeError, not ValueError).
  CHECK_THROWS_TYPED(ch03::row_entropy(Matrix(0, 4)), ShapeError, "row_entropy", kCheckEmpty);
  CHECK_THROWS_TYPED(ch03::row_entropy(Matrix(4, 0)), ShapeError, "row_entropy", kCheckEmpty);
  // Negative weights, large and tiny, in rows that still sum to 1: no distribution either way
  // (a tolerance for "slightly negative" rounding is not in the contract).
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 2, {1.5, -0.5})), ValueError, "row_entropy",
                     check_negative);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 3, {-1e15, 1e15, 1})), ValueError,
                     "row_entropy", check_negative);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 2, {1, -1e-300})), ValueError, "row_entropy",
                     check_negative);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 2, {kNaN, 1})), ValueError, "row_entropy",
                     kCheckFinite);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 2, {kInf, 0})), ValueError, "row_entropy",
                     kCheckFinite);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(1, 2, {1, -kInf})), ValueError, "row_entropy",
                     kCheckFinite);
  CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(2, 2, {0.5, 0.5, 0.6, 0.3})), ValueError,
                     "row_entropy", check_sum);  // row 1 sums to 0.9
}

TEST_CASE("3.5 the row-sum tolerance 1e-9 is kept on both sides") {
  // Just inside (|sum - 1| = 0.9e-9, 0.995e-9) is a distribution; just outside (1.1e-9, 1.005e-9)
  // is not. A looser or tighter tolerance (1e-8, 1e-6, 1.01e-9, 0.99e-9), a one-sided test, or exact
  // equality shows here. The sums are exact to about 1e-16, far below the 0.005e-9 margin.
  constexpr char check_sum[] =
      "a row that does not sum to 1 (within 1e-9) must throw ValueError: a missing check, or a "
      "looser tolerance than 1e-9?";
  for (double off : {0.9e-9, -0.9e-9, 0.995e-9, -0.995e-9}) {
    CAPTURE(off);
    const Vector h = ch03::row_entropy(from_rows(1, 2, {0.5, 0.5 + off}));
    CHECK_MESSAGE(near(h(0), std::log(2.0), 1e-8),
                  "a row summing to 1 within 1e-9 is a distribution: its entropy is about ln 2");
  }
  for (double off : {1.1e-9, -1.1e-9, 1.005e-9, -1.005e-9, 1e-6, -1e-6}) {
    CAPTURE(off);
    CHECK_THROWS_TYPED(ch03::row_entropy(from_rows(2, 2, {0.5, 0.5, 0.5, 0.5 + off})), ValueError,
                       "row_entropy", check_sum);
  }
}

}  // TEST_SUITE
