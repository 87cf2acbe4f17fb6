// Chapter 8 checks — normalisation: LayerNorm, RMSNorm and LayerNorm's backward pass.
//
// Every expected value is derived here from the contract's formula, evaluated in long double (a
// 64-bit significand and an exponent range far beyond a double's, so that no square of a double
// overflows and no sum of a row loses the digits the checks look at), or from PyTorch's own
// numbers (torch_fixtures.hpp, written by tools/maintainer/fixtures/ch08_torch_fixtures.py), never
// copied from the reference's output. A failure names a known mistake only when the output is the
// one that mistake gives on the same input: the check computes it by applying the mistake to the
// formula (in long double, or in double for the mistakes that are a double's own: squares that
// overflow, a difference that cancels), keeps only the mistakes whose output differs from the
// right one and from every other mistake's on that input, and compares ("known mistake
// [variance_unbiased]: ..."); otherwise the message states the rule broken.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "normalisation.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"
#include "torch_fixtures.hpp"

using namespace scalebook;
using scalebook::testing::from_rows;
using scalebook::testing::Mistake;
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::Parts;
using scalebook::testing::row;
using scalebook::testing::said;
using scalebook::testing::show;
using scalebook::testing::suspect;
namespace ch08 = scalebook::ch08;
namespace torch_fixture = scalebook::ch08::torch_fixture;

namespace doctest {
template <>
struct StringMaker<ch08::LayerNormGrads> {
  static String convert(const ch08::LayerNormGrads& g) {
    return ("LayerNormGrads{dx " + show(g.dx) + ", dgamma " + show(g.dgamma) + ", dbeta " + show(g.dbeta) + "}").c_str();
  }
};
}  // namespace doctest

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kLargest = std::numeric_limits<double>::max();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kUnbiased{"variance_unbiased", "the variance divided by d - 1 instead of d: LayerNorm (and nn.LayerNorm) takes the population variance"};
constexpr Named kEpsOutside{"eps_outside_root", "eps added to the standard deviation, sqrt(var) + eps, instead of inside the root, sqrt(var + eps)"};
constexpr Named kEpsLeftOut{"eps_left_out", "eps left out: sqrt(var) instead of sqrt(var + eps), so that a constant row gives 0 / 0"};
constexpr Named kNotCentred{"layer_norm_not_centred", "the row divided by its standard deviation without its mean subtracted first"};
constexpr Named kOverTokens{"statistics_over_tokens", "each feature (column) normalised over the tokens, chapter 1's axis, instead of each token (row) over its features"};
constexpr Named kGammaByToken{"gamma_beta_by_token", "gamma(i) and beta(i) of token i instead of gamma(j) and beta(j) of feature j"};
constexpr Named kGammaLeftOut{"gamma_left_out", "the gain gamma left out"};
constexpr Named kBetaLeftOut{"beta_left_out", "the bias beta left out"};
constexpr Named kSquaresOverflow{"squares_overflow", "the row squared in its own units: the squares of entries beyond 1e154 overflow to infinity"};
constexpr Named kOnePass{"one_pass_variance", "the variance in one pass, the mean of the squares minus the squared mean: it cancels when the mean is far above the spread"};
constexpr Named kRmsCentred{"rms_norm_centred", "the mean subtracted before dividing by the root mean square: RMSNorm keeps the mean (that is LayerNorm without beta)"};
constexpr Named kRmsEpsOutside{"rms_eps_outside_root", "eps added to the root mean square, sqrt(ms) + eps, instead of inside the root, sqrt(ms + eps)"};
constexpr Named kRmsEpsLeftOut{"rms_eps_left_out", "eps left out: sqrt(ms) instead of sqrt(ms + eps), so that a row of zeros gives 0 / 0"};
constexpr Named kRmsSumNotMean{"rms_sum_not_mean", "divided by the root of the sum of the squares (the row's length) instead of their mean"};
constexpr Named kRmsOverTokens{"rms_over_tokens", "each feature (column) divided by its root mean square over the tokens instead of each token (row) over its features"};
constexpr Named kRmsGammaByToken{"rms_gamma_by_token", "gamma(i) of token i instead of gamma(j) of feature j"};
constexpr Named kRmsGammaLeftOut{"rms_gamma_left_out", "the gain gamma left out"};
constexpr Named kRmsSquaresOverflow{"rms_squares_overflow", "the row squared in its own units: the squares of entries beyond 1e154 overflow to infinity"};
constexpr Named kNoMeanTerm{"backward_no_mean_term", "the mean of g not subtracted: layer_norm's output does not move when every x of a row moves alike"};
constexpr Named kNoVarianceTerm{"backward_no_variance_term", "the term x_hat * mean(g * x_hat) left out: the standard deviation treated as if it did not depend on x"};
constexpr Named kOnlyScaled{"backward_only_scaled", "dx = g / s: the mean and the standard deviation treated as if they did not depend on x"};
constexpr Named kGammaIgnored{"backward_gamma_ignored", "g = grad_out instead of grad_out * gamma: the gain left out of dx"};
constexpr Named kBackwardUnbiased{"backward_variance_unbiased", "s from the variance divided by d - 1 instead of d"};
constexpr Named kBackwardEpsLeftOut{"backward_eps_left_out", "s = sqrt(var) instead of sqrt(var + eps)"};
constexpr Named kBackwardSquaresOverflow{"backward_squares_overflow", "the row squared in its own units: the squares of entries beyond 1e154 overflow to infinity"};
constexpr Named kParamsAveraged{"parameter_grads_averaged", "dgamma and dbeta averaged over the tokens instead of summed: gamma and beta are shared by every token"};
constexpr Named kDgammaNoXhat{"dgamma_without_x_hat", "dgamma as the sum of grad_out (dbeta's formula) instead of the sum of grad_out * x_hat"};

// The contract's rules, as the throw checks state them.
constexpr char kRuleEmpty[] = "an empty x (no tokens or no features) must throw ShapeError";
constexpr char kRuleGamma[] = "gamma and beta must be (1, d), one entry per feature of x, else ShapeError";
constexpr char kRuleGrad[] = "grad_out must be (n, d), x's shape, else ShapeError";
constexpr char kRuleFinite[] = "NaN or infinity in x, gamma, beta or grad_out must throw ValueError";
constexpr char kRuleEps[] = "eps must be a finite number above 0, else ValueError";

using Long = long double;

// Row i's mean and sqrt(variance + eps), in long double (for the central differences).
struct LongStats {
  Long mean, root;
};

LongStats long_stats(const Matrix& x, Index i, double eps) {
  const Index d = x.cols();
  Long sum = 0;
  for (Index j = 0; j < d; ++j) sum += static_cast<Long>(x(i, j));
  const Long mean = sum / d;
  Long squares = 0;
  for (Index j = 0; j < d; ++j) squares += (x(i, j) - mean) * (x(i, j) - mean);
  return {mean, std::sqrt(squares / d + static_cast<Long>(eps))};
}

// ---- The mistakes, applied to the formulas -------------------------------------------------

// How a normalisation goes wrong. Each slip is applied to the formula in long double, so that it
// shows on rows of any size, except with in_double: the formula as written in double, the rows
// in their own units, so that squares beyond the largest double overflow (Slip{true} is that
// mistake alone) and a mean of squares near 1e18 rounds to a multiple of 128.
struct Slip {
  bool in_double = false;
  bool unbiased = false, eps_outside = false, eps_left_out = false, not_centred = false;
  bool over_tokens = false, gamma_by_token = false, no_gamma = false, no_beta = false;
  bool one_pass = false, rms = false, rms_centred = false, sum_not_mean = false;
};

// The normalisation of x's rows (or, with over_tokens, of its columns) as a slip computes it, in T.
template <class T>
Matrix normalise_as(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps, const Slip& slip) {
  const Matrix data = slip.over_tokens ? Matrix(x.transpose()) : x;
  const Index d = data.cols();
  Matrix y(data.rows(), d);
  for (Index i = 0; i < data.rows(); ++i) {
    T sum = 0, squares = 0;
    for (Index j = 0; j < d; ++j) sum += data(i, j);
    const T mean = sum / static_cast<T>(d);
    const bool centre = slip.rms ? slip.rms_centred : !slip.not_centred;
    T spread;
    if (slip.rms && !slip.rms_centred) {
      for (Index j = 0; j < d; ++j) squares += static_cast<T>(data(i, j)) * data(i, j);
      spread = squares / (slip.sum_not_mean ? T(1) : static_cast<T>(d));
    } else if (slip.one_pass) {
      for (Index j = 0; j < d; ++j) squares += static_cast<T>(data(i, j)) * data(i, j);
      spread = squares / static_cast<T>(d) - mean * mean;
    } else {
      for (Index j = 0; j < d; ++j) squares += (data(i, j) - mean) * (data(i, j) - mean);
      spread = squares / (slip.unbiased ? static_cast<T>(d - 1) : static_cast<T>(d));
    }
    const T root = slip.eps_left_out ? std::sqrt(spread)
                   : slip.eps_outside ? std::sqrt(spread) + static_cast<T>(eps)
                                      : std::sqrt(spread + static_cast<T>(eps));
    for (Index j = 0; j < d; ++j) y(i, j) = static_cast<double>((centre ? data(i, j) - mean : T(data(i, j))) / root);
  }
  if (slip.over_tokens) y.transposeInPlace();
  for (Index i = 0; i < y.rows(); ++i) {
    for (Index j = 0; j < y.cols(); ++j) {
      const Index p = slip.gamma_by_token ? i : j;  // which parameter entry the slip reads
      if (p >= gamma.cols()) return Matrix(0, 0);  // more tokens than features: not this slip's output
      if (!slip.no_gamma) y(i, j) *= gamma(p);
      if (!slip.rms && !slip.no_beta) y(i, j) += beta(p);
    }
  }
  return y;
}

Matrix normalise_with(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps, const Slip& slip) {
  return slip.in_double ? normalise_as<double>(x, gamma, beta, eps, slip) : normalise_as<Long>(x, gamma, beta, eps, slip);
}

Slip rms_slip() {
  Slip s;
  s.rms = true;
  return s;
}

// The backward pass as a slip computes it (Slip's in_double, unbiased and eps_left_out; `term`
// drops a term), in T.
enum class Term { None, Mean, Variance, Both, Gamma };

template <class T>
ch08::LayerNormGrads backward_as(const Matrix& x, const RowVector& gamma, double eps, const Matrix& grad,
                                 const Slip& slip, Term dropped, bool averaged, bool dgamma_plain) {
  const Index n = x.rows(), d = x.cols();
  ch08::LayerNormGrads out{Matrix(n, d), RowVector::Zero(d), RowVector::Zero(d)};
  std::vector<T> dgamma(static_cast<std::size_t>(d), 0), dbeta(static_cast<std::size_t>(d), 0);
  std::vector<T> x_hat(static_cast<std::size_t>(d)), g(static_cast<std::size_t>(d));
  for (Index i = 0; i < n; ++i) {
    T sum = 0, squares = 0;
    for (Index j = 0; j < d; ++j) sum += x(i, j);
    const T mean = sum / static_cast<T>(d);
    for (Index j = 0; j < d; ++j) squares += (x(i, j) - mean) * (x(i, j) - mean);
    const T var = squares / (slip.unbiased ? static_cast<T>(d - 1) : static_cast<T>(d));
    const T root = slip.eps_left_out ? std::sqrt(var) : std::sqrt(var + static_cast<T>(eps));
    T g_mean = 0, g_along = 0;
    for (Index j = 0; j < d; ++j) {
      const auto k = static_cast<std::size_t>(j);
      x_hat[k] = (x(i, j) - mean) / root;
      g[k] = dropped == Term::Gamma ? T(grad(i, j)) : static_cast<T>(grad(i, j)) * gamma(j);
      g_mean += g[k] / static_cast<T>(d);
      g_along += g[k] * x_hat[k] / static_cast<T>(d);
      dgamma[k] += dgamma_plain ? T(grad(i, j)) : grad(i, j) * x_hat[k];
      dbeta[k] += grad(i, j);
    }
    for (Index j = 0; j < d; ++j) {
      const auto k = static_cast<std::size_t>(j);
      T dx = g[k];
      if (dropped != Term::Mean && dropped != Term::Both) dx -= g_mean;
      if (dropped != Term::Variance && dropped != Term::Both) dx -= x_hat[k] * g_along;
      out.dx(i, j) = static_cast<double>(dx / root);
    }
  }
  for (Index j = 0; j < d; ++j) {
    const auto k = static_cast<std::size_t>(j);
    out.dgamma(j) = static_cast<double>(averaged ? dgamma[k] / static_cast<T>(n) : dgamma[k]);
    out.dbeta(j) = static_cast<double>(averaged ? dbeta[k] / static_cast<T>(n) : dbeta[k]);
  }
  return out;
}

ch08::LayerNormGrads backward_with(const Matrix& x, const RowVector& gamma, double eps, const Matrix& grad,
                                   const Slip& slip, Term dropped, bool averaged, bool dgamma_plain) {
  return slip.in_double ? backward_as<double>(x, gamma, eps, grad, slip, dropped, averaged, dgamma_plain)
                        : backward_as<Long>(x, gamma, eps, grad, slip, dropped, averaged, dgamma_plain);
}

// The contract's formulas: no slip, in long double.
Matrix layer_norm_exact(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps) {
  return normalise_as<Long>(x, gamma, beta, eps, Slip{});
}

Matrix rms_norm_exact(const Matrix& x, const RowVector& gamma, double eps) {
  return normalise_as<Long>(x, gamma, RowVector::Zero(x.cols()), eps, rms_slip());
}

ch08::LayerNormGrads backward_exact(const Matrix& x, const RowVector& gamma, double eps, const Matrix& grad) {
  return backward_as<Long>(x, gamma, eps, grad, Slip{}, Term::None, false, false);
}

// The mistakes that tell on this input: each one's output differs from the right one and from
// every other mistake's (two mistakes that agree here are told apart by another check), and is
// compared with the actual output.
std::string telling(const Matrix& actual, const Matrix& right, const std::vector<Mistake>& mistakes) {
  std::vector<Mistake> kept;
  const auto alike = [](const Matrix& a, const Matrix& b) {  // suspect()'s equality: NaN matches NaN
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Index i = 0; i < a.size(); ++i) {
      const double u = a.data()[i], v = b.data()[i];
      if (std::isnan(u) != std::isnan(v) || (!std::isnan(u) && !(std::abs(u - v) <= 1e-9 * std::max(1.0, std::abs(v)))))
        return false;
    }
    return true;
  };
  for (std::size_t k = 0; k < mistakes.size(); ++k) {
    if (mistakes[k].output.size() == 0 || alike(mistakes[k].output, right)) continue;
    bool unique = true;
    for (std::size_t l = 0; l < mistakes.size(); ++l)
      if (l != k && alike(mistakes[k].output, mistakes[l].output)) unique = false;
    if (unique) kept.push_back(mistakes[k]);
  }
  return suspect(actual, kept);
}

// The named mistakes of layer_norm whose output on (x, gamma, beta, eps) equals Y.
std::string layer_norm_mistakes(const Matrix& y, const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps) {
  const auto with = [&](auto set) {
    Slip s;
    set(s);
    return normalise_with(x, gamma, beta, eps, s);
  };
  return telling(y, layer_norm_exact(x, gamma, beta, eps),
                 {{kUnbiased, with([](Slip& s) { s.unbiased = true; })},
                  {kEpsOutside, with([](Slip& s) { s.eps_outside = true; })},
                  {kEpsLeftOut, with([](Slip& s) { s.eps_left_out = true; })},
                  {kNotCentred, with([](Slip& s) { s.not_centred = true; })},
                  {kOverTokens, with([](Slip& s) { s.over_tokens = true; })},
                  {kGammaByToken, with([](Slip& s) { s.gamma_by_token = true; })},
                  {kGammaLeftOut, with([](Slip& s) { s.no_gamma = true; })},
                  {kBetaLeftOut, with([](Slip& s) { s.no_beta = true; })},
                  {kSquaresOverflow, with([](Slip& s) { s.in_double = true; })},
                  {kOnePass, with([](Slip& s) { s.in_double = s.one_pass = true; })}});
}

// The named mistakes of rms_norm whose output on (x, gamma, eps) equals Y.
std::string rms_norm_mistakes(const Matrix& y, const Matrix& x, const RowVector& gamma, double eps) {
  const RowVector no_beta = RowVector::Zero(x.cols());
  const auto with = [&](auto set) {
    Slip s = rms_slip();
    set(s);
    return normalise_with(x, gamma, no_beta, eps, s);
  };
  return telling(y, rms_norm_exact(x, gamma, eps),
                 {{kRmsCentred, with([](Slip& s) { s.rms_centred = true; })},
                  {kRmsEpsOutside, with([](Slip& s) { s.eps_outside = true; })},
                  {kRmsEpsLeftOut, with([](Slip& s) { s.eps_left_out = true; })},
                  {kRmsSumNotMean, with([](Slip& s) { s.sum_not_mean = true; })},
                  {kRmsOverTokens, with([](Slip& s) { s.over_tokens = true; })},
                  {kRmsGammaByToken, with([](Slip& s) { s.gamma_by_token = true; })},
                  {kRmsGammaLeftOut, with([](Slip& s) { s.no_gamma = true; })},
                  {kRmsSquaresOverflow, with([](Slip& s) { s.in_double = true; })}});
}

// The named mistakes of layer_norm_backward whose FIELD (0 dx, 1 dgamma, 2 dbeta) equals OUT.
std::string backward_mistakes(const Matrix& out, int field, const Matrix& x, const RowVector& gamma, double eps,
                              const Matrix& grad) {
  const auto pick = [field](const ch08::LayerNormGrads& g) {
    return field == 0 ? g.dx : field == 1 ? Matrix(g.dgamma) : Matrix(g.dbeta);
  };
  const auto with = [&](Slip slip, Term term, bool averaged, bool plain) {
    return pick(backward_with(x, gamma, eps, grad, slip, term, averaged, plain));
  };
  Slip unbiased, no_eps, in_double;
  unbiased.unbiased = true;
  no_eps.eps_left_out = true;
  in_double.in_double = true;
  return telling(out, pick(backward_exact(x, gamma, eps, grad)),
                 {{kNoMeanTerm, with({}, Term::Mean, false, false)},
                  {kNoVarianceTerm, with({}, Term::Variance, false, false)},
                  {kOnlyScaled, with({}, Term::Both, false, false)},
                  {kGammaIgnored, with({}, Term::Gamma, false, false)},
                  {kBackwardUnbiased, with(unbiased, Term::None, false, false)},
                  {kBackwardEpsLeftOut, with(no_eps, Term::None, false, false)},
                  {kBackwardSquaresOverflow, with(in_double, Term::None, false, false)},
                  {kParamsAveraged, with({}, Term::None, true, false)},
                  {kDgammaNoXhat, with({}, Term::None, false, true)}});
}

// layer_norm(x, gamma, beta, eps) against the contract's formula; a failure leads with RULE.
void check_layer_norm(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps, const std::string& rule) {
  const Matrix y = ch08::layer_norm(x, gamma, beta, eps);
  CHECK_MESSAGE(near(y, layer_norm_exact(x, gamma, beta, eps), 1e-12, Parts{"token", 1, "feature", 1}),
                said(rule, layer_norm_mistakes(y, x, gamma, beta, eps)));
}

// rms_norm(x, gamma, eps) against the contract's formula; a failure leads with RULE.
void check_rms_norm(const Matrix& x, const RowVector& gamma, double eps, const std::string& rule) {
  const Matrix y = ch08::rms_norm(x, gamma, eps);
  CHECK_MESSAGE(near(y, rms_norm_exact(x, gamma, eps), 1e-12, Parts{"token", 1, "feature", 1}),
                said(rule, rms_norm_mistakes(y, x, gamma, eps)));
}

// Rows of very different means and spreads, as the tokens of a network differ: row i is
// offset(i) + spread(i) * N(0, 1).
Matrix tokens(Index n, Index d, Rng& rng) {
  Matrix x = normal_matrix(n, d, rng);
  for (Index i = 0; i < n; ++i) x.row(i) = (x.row(i) * std::pow(4.0, static_cast<double>(i % 5) - 2.0)).array() + (static_cast<double>(i) - 1.5);
  return x;
}

// Central differences of L = sum(G * layer_norm(x, gamma, beta, eps)) in x(i, j) (which 0),
// gamma(j) (1) or beta(j) (2), from the long double formula: with h = 1e-6 the error is about
// h^2 times the third derivative plus 1e-19 / h, far below the checks' 1e-7.
Matrix central_differences(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps, const Matrix& grad,
                           int which) {
  const auto loss = [&](const Matrix& xx, const RowVector& gg, const RowVector& bb) {
    Long total = 0;
    for (Index i = 0; i < xx.rows(); ++i) {
      const LongStats s = long_stats(xx, i, eps);
      for (Index j = 0; j < xx.cols(); ++j) total += grad(i, j) * ((xx(i, j) - s.mean) / s.root * gg(j) + bb(j));
    }
    return total;
  };
  const double h = 1e-6;
  Matrix out = which == 0 ? Matrix(x.rows(), x.cols()) : Matrix(1, x.cols());
  for (Index i = 0; i < out.rows(); ++i) {
    for (Index j = 0; j < out.cols(); ++j) {
      Matrix xp = x, xm = x;
      RowVector gp = gamma, gm = gamma, bp = beta, bm = beta;
      if (which == 0) {
        xp(i, j) += h;
        xm(i, j) -= h;
      } else if (which == 1) {
        gp(j) += h;
        gm(j) -= h;
      } else {
        bp(j) += h;
        bm(j) -= h;
      }
      out(i, j) = static_cast<double>((loss(xp, gp, bp) - loss(xm, gm, bm)) / (2 * h));
    }
  }
  return out;
}


}  // namespace

TEST_SUITE("08-normalisation") {

// ---- 8.1 layer_norm -------------------------------------------------------------------------

TEST_CASE("8.1 the worked example: each token centred and scaled by its own mean and deviation") {
  // eps = 1/2, so that each sqrt(var + eps) is a whole number. Row 0: mean 3, deviations
  // (-2, -1, 0, 3), var 3.5, root 2. Row 1: constant, every deviation 0. Row 2: mean 10,
  // deviations (-5, 1, 2, 2), var 8.5, root 3.
  const Matrix x = from_rows(3, 4, {1, 2, 3, 6, 5, 5, 5, 5, 5, 11, 12, 12});
  const RowVector gamma = row({1, 2, 0.5, -1}), beta = row({0, 1, -1, 0.5});
  const double eps = 0.5;
  INPUTS(x, gamma, beta, eps);
  // normalised rows (-1, -0.5, 0, 1.5), (0, 0, 0, 0) and (-5/3, 1/3, 2/3, 2/3), then * gamma + beta
  const Matrix expected = from_rows(3, 4, {-1, 0, -1, -1, 0, 1, -1, 0.5, -5.0 / 3, 1 + 2.0 / 3, -1 + 1.0 / 3, 0.5 - 2.0 / 3});
  const Matrix y = ch08::layer_norm(x, gamma, beta, eps);
  CHECK_MESSAGE(near(y, expected, 1e-12, Parts{"token", 1, "feature", 1}),
                said("layer_norm of the tokens (1, 2, 3, 6), (5, 5, 5, 5) and (5, 11, 12, 12) with eps = 0.5 must normalise "
                     "them to (-1, -0.5, 0, 1.5), (0, 0, 0, 0) and (-5/3, 1/3, 2/3, 2/3): each row less its mean, divided by "
                     "sqrt(its variance over d + eps), then times gamma(j) plus beta(j)",
                     layer_norm_mistakes(y, x, gamma, beta, eps)));
}

TEST_CASE("8.1 each token is normalised over its own features, whatever its mean and spread") {
  Rng rng(81);
  const Matrix x = tokens(5, 7, rng);
  const RowVector gamma = RowVector::Ones(7), beta = RowVector::Zero(7);
  INFO("x (5, 7): row i drawn from N(0, 1), times 4^(i mod 5 - 2), plus i - 1.5, with Rng(81); gamma 1, beta 0");
  INPUTS(x, gamma, beta);
  check_layer_norm(x, gamma, beta, 1e-5,
                   "layer_norm of 5 tokens of 7 features with eps = 1e-5 differs from the formula: every row must come out "
                   "with mean 0 and mean square var / (var + eps), each from its own statistics");
}

TEST_CASE("8.1 gamma and beta scale and shift each feature") {
  Rng rng(82);
  const Matrix x = tokens(3, 6, rng);
  const RowVector gamma = normal_matrix(1, 6, rng), beta = normal_matrix(1, 6, rng);
  INFO("x (3, 6): row i drawn from N(0, 1), times 4^(i mod 5 - 2), plus i - 1.5, then gamma and beta (1, 6) from N(0, 1), with Rng(82)");
  INPUTS(x, gamma, beta);
  check_layer_norm(x, gamma, beta, 1e-5,
                   "layer_norm of 3 tokens of 6 features with random gamma and beta differs from the formula: feature j "
                   "of every token is multiplied by gamma(j), then beta(j) is added");
}

TEST_CASE("8.1 a token of one feature gives beta") {
  const Matrix x = from_rows(3, 1, {4, -2.5, 1e300});
  const RowVector gamma = row({3}), beta = row({0.25});
  INPUTS(x, gamma, beta);
  const Matrix y = ch08::layer_norm(x, gamma, beta, 1e-5);
  CHECK_MESSAGE(near(y, Matrix::Constant(3, 1, 0.25)),
                said("layer_norm of tokens with d = 1 must give beta = 0.25 for each: a single feature is its own mean, "
                     "so x - mean = 0 (the variance divided by d = 1 is 0, and eps keeps the root above 0)",
                     layer_norm_mistakes(y, x, gamma, beta, 1e-5)));
}

TEST_CASE("8.1 a mean far above the spread: the variance in two passes") {
  // 1e9 + (-1.5, -0.5, 0.5, 1.5): the mean 1e9, the deviations and the variance 1.25 are exact in
  // a double, in any order of summation. The squares (about 1e18) are not: a double spaces its
  // values 128 apart there, so the mean of the squares minus the squared mean gives 0, not 1.25.
  const Matrix x = from_rows(2, 4, {1e9 - 1.5, 1e9 - 0.5, 1e9 + 0.5, 1e9 + 1.5, -3e8 + 2, -3e8 - 2, -3e8 + 1, -3e8 - 1});
  const RowVector gamma = RowVector::Ones(4), beta = RowVector::Zero(4);
  INPUTS(x, gamma, beta);
  check_layer_norm(x, gamma, beta, 1e-5,
                   "layer_norm of 1e9 + (-1.5, -0.5, 0.5, 1.5) must give (-1.5, -0.5, 0.5, 1.5) / sqrt(1.25 + 1e-5), "
                   "and of -3e8 + (2, -2, 1, -1) the same with the variance 2.5: take the mean first, then the mean of "
                   "the squared deviations");
}

TEST_CASE("8.1 entries beyond 1e154, whose squares overflow, normalise like any others") {
  const Matrix x = from_rows(6, 4, {1e200, 2e200, 3e200, 6e200,                         // (1, 2, 3, 6) times 1e200
                                    -1e250, 3e250, -1e250, 3e250,                       // deviations of 2e250
                                    1e155, 1e155, 1e155, 3e155,                         // a square just past the largest double
                                    kLargest, -kLargest, kLargest, -kLargest,           // the largest double, both signs
                                    0x1p1000, 0x1p1000, 0x1p1000, 0x1p1000,             // constant (2^1000): every deviation is 0
                                    0x1p1000, 0x1.00000000004p1000, 0x1p1000, 0x1.00000000004p1000});  // spread 2^-41 of the mean
  const RowVector gamma = row({1, 2, 0.5, -1}), beta = row({0, 1, -1, 0.5});
  INPUTS(x, gamma, beta);
  check_layer_norm(x, gamma, beta, 1e-5,
                   "layer_norm of rows of entries from 1e155 to the largest double must give what the same rows give "
                   "divided by a power of two (eps's share aside): finite, each row normalised, also a row whose "
                   "spread is 2^-41 of its mean (+-1); work in units of the row's largest magnitude so that no square "
                   "overflows");
}

TEST_CASE("8.1 eps goes inside the root, and any eps above 0 is valid") {
  // Spreads of 1e-3, near sqrt(eps) = 3.2e-3: sqrt(var + eps) and sqrt(var) + eps differ by a third.
  const Matrix x = from_rows(4, 4, {0, 0.001, 0.002, 0.003, 0.5, 0.5, 0.5, 0.5005, 0, 0, 0, 0, 0, 1e-12, 0, 1e-12});
  const RowVector gamma = RowVector::Ones(4), beta = RowVector::Zero(4);
  INPUTS(x, gamma, beta);
  check_layer_norm(x, gamma, beta, 1e-5,
                   "layer_norm of rows whose spread is about 1e-3 with eps = 1e-5 differs from the formula: eps is "
                   "added to the variance, inside the square root, and a row of zeros gives zeros");
  for (const double tiny : {1e-300, std::numeric_limits<double>::denorm_min()}) {
    CAPTURE(tiny);
    check_layer_norm(x, gamma, beta, tiny,
                     "layer_norm with a tiny eps above 0 must normalise by sqrt(var + eps): (0, 1e-12, 0, 1e-12) gives "
                     "(-1, 1, -1, 1), and a row of zeros 0 (the contract allows any eps above 0)");
  }
}

TEST_CASE("8.1 numbers equal PyTorch's nn.LayerNorm") {
  using torch_fixture::Random;
  using torch_fixture::Small;
  for (int k = 0; k < 2; ++k) {
    const Matrix x = k == 0 ? Random::x() : Small::x();
    const RowVector gamma = k == 0 ? Random::gamma() : Small::gamma(), beta = k == 0 ? Random::beta() : Small::beta();
    const Matrix torch_y = k == 0 ? Random::y() : Small::y();
    const double eps = k == 0 ? Random::eps : Small::eps;
    INFO((k == 0 ? "the fixture's 6 tokens of 8 features, each row with its own mean and spread"
                 : "the fixture's 4 tokens of 5 features, spreads of about 1e-3"));
    INPUTS(x, gamma, beta, eps);
    const Matrix y = ch08::layer_norm(x, gamma, beta, eps);
    CHECK_MESSAGE(near(y, torch_y, 1e-12, Parts{"token", 1, "feature", 1}),
                  said("layer_norm must equal PyTorch 1.13's nn.LayerNorm (float64) on the same input, weight gamma and "
                       "bias beta, to 1e-12",
                       layer_norm_mistakes(y, x, gamma, beta, eps)));
  }
}

TEST_CASE("8.1 empty inputs and shapes that do not fit throw ShapeError") {
  const Matrix x = Matrix::Ones(3, 4);
  const RowVector gamma = RowVector::Ones(4), beta = RowVector::Zero(4);
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::layer_norm, Matrix(0, 4), gamma, beta, 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::layer_norm, Matrix(3, 0), RowVector(0), RowVector(0), 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm, x, RowVector(RowVector::Ones(3)), beta, 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm, x, RowVector(RowVector::Ones(5)), beta, 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm, x, gamma, RowVector(RowVector::Zero(3)), 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm, x, gamma, RowVector(RowVector::Zero(5)), 1e-5);
  // One gain per token (3) instead of one per feature (4).
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm, x, RowVector(RowVector::Ones(3)), RowVector(RowVector::Zero(3)), 1e-5);
}

TEST_CASE("8.1 NaN or infinity in the input, or an eps not above 0, throws ValueError") {
  const Matrix x = Matrix::Ones(3, 4);
  const RowVector gamma = RowVector::Ones(4), beta = RowVector::Zero(4);
  Matrix bad = x;
  bad(2, 3) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm, bad, gamma, beta, 1e-5);
  bad(2, 3) = -kInf;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm, bad, gamma, beta, 1e-5);
  RowVector bad_gamma = gamma, bad_beta = beta;
  bad_gamma(0) = kInf;
  bad_beta(3) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm, x, bad_gamma, beta, 1e-5);
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm, x, gamma, bad_beta, 1e-5);
  for (const double eps : {0.0, -1e-300, -1e-5, kNaN, kInf})
    CHECK_THROWS_CALL(ValueError, kRuleEps, ch08::layer_norm, x, gamma, beta, eps);
}

// ---- 8.2 rms_norm ---------------------------------------------------------------------------

TEST_CASE("8.2 the worked example: each token divided by its own root mean square") {
  // eps = 1/4. Row 0: mean square (16 + 4 + 4 + 0) / 4 = 6, root 2.5. Row 1: mean square 2,
  // root 1.5. Row 2: zeros, root sqrt(eps) = 0.5, output 0.
  const Matrix x = from_rows(3, 4, {4, 2, 2, 0, 0, -2, 0, 2, 0, 0, 0, 0});
  const RowVector gamma = row({1, 2, 0.5, -1});
  const double eps = 0.25;
  INPUTS(x, gamma, eps);
  const Matrix expected = from_rows(3, 4, {1.6, 1.6, 0.4, 0, 0, -8.0 / 3, 0, -4.0 / 3, 0, 0, 0, 0});
  const Matrix y = ch08::rms_norm(x, gamma, eps);
  CHECK_MESSAGE(near(y, expected, 1e-12, Parts{"token", 1, "feature", 1}),
                said("rms_norm of the tokens (4, 2, 2, 0), (0, -2, 0, 2) and (0, 0, 0, 0) with eps = 0.25 must divide them "
                     "by 2.5, 1.5 and 0.5, the square roots of their mean squares plus eps, then multiply feature j by "
                     "gamma(j)",
                     rms_norm_mistakes(y, x, gamma, eps)));
}

TEST_CASE("8.2 the mean is kept, and each token is divided by its own root mean square") {
  Rng rng(83);
  const Matrix x = tokens(5, 6, rng);
  const RowVector gamma = normal_matrix(1, 6, rng);
  INFO("x (5, 6): row i drawn from N(0, 1), times 4^(i mod 5 - 2), plus i - 1.5, then gamma from N(0, 1), with Rng(83)");
  INPUTS(x, gamma);
  check_rms_norm(x, gamma, 1e-5,
                 "rms_norm of 5 tokens of 6 features with eps = 1e-5 differs from the formula: x(i, j) / sqrt(the mean "
                 "of row i's squares + eps) * gamma(j), nothing subtracted");
}

TEST_CASE("8.2 entries beyond 1e154, whose squares overflow, normalise like any others") {
  const Matrix x = from_rows(4, 4, {1e200, 2e200, 3e200, 6e200,
                                    -3e250, 1e250, 0, 5e250,
                                    2e154, -2e154, 2e154, 2e154,
                                    kLargest, -kLargest, kLargest, kLargest});
  const RowVector gamma = row({1, 2, 0.5, -1});
  INPUTS(x, gamma);
  check_rms_norm(x, gamma, 1e-5,
                 "rms_norm of rows of entries from 2e154 to the largest double must be finite and equal the formula: "
                 "work in units of the row's largest magnitude so that no square overflows");
}

TEST_CASE("8.2 eps goes inside the root, and any eps above 0 is valid") {
  const Matrix x = from_rows(2, 3, {0.001, -0.002, 0.002, 0, 0, 0});
  const RowVector gamma = RowVector::Ones(3);
  INPUTS(x, gamma);
  for (const double eps : {1e-5, 1e-300, std::numeric_limits<double>::denorm_min()}) {
    CAPTURE(eps);
    check_rms_norm(x, gamma, eps,
                   "rms_norm of a row whose mean square (3e-6) is near eps must divide by sqrt(ms + eps), and a row of "
                   "zeros gives zeros for any eps above 0");
  }
}

TEST_CASE("8.2 numbers equal RMSNorm's formula in PyTorch") {
  using torch_fixture::Offset;
  using torch_fixture::Random;
  using torch_fixture::Small;
  for (int k = 0; k < 3; ++k) {
    const Matrix x = k == 0 ? Random::x() : k == 1 ? Small::x() : Offset::x();
    const RowVector gamma = k == 0 ? Random::gamma() : k == 1 ? Small::gamma() : Offset::gamma();
    const Matrix torch_y = k == 0 ? Random::rms() : k == 1 ? Small::rms() : Offset::rms();
    INFO((k == 0 ? "the fixture's 6 tokens of 8 features" : k == 1 ? "the fixture's 4 tokens of 5 features" : "the fixture's token 1e9 + (-1.5, -0.5, 0.5, 1.5)"));
    INPUTS(x, gamma);
    const Matrix y = ch08::rms_norm(x, gamma, 1e-5);
    CHECK_MESSAGE(near(y, torch_y, 1e-12, Parts{"token", 1, "feature", 1}),
                  said("rms_norm must equal x * rsqrt(mean(x^2) + eps) * gamma as PyTorch 1.13 computes it (float64) on "
                       "the same input, to 1e-12",
                       rms_norm_mistakes(y, x, gamma, 1e-5)));
  }
}

TEST_CASE("8.2 empty inputs and shapes that do not fit throw ShapeError") {
  const Matrix x = Matrix::Ones(3, 4);
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::rms_norm, Matrix(0, 4), RowVector(RowVector::Ones(4)), 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::rms_norm, Matrix(3, 0), RowVector(0), 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::rms_norm, x, RowVector(RowVector::Ones(3)), 1e-5);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::rms_norm, x, RowVector(RowVector::Ones(5)), 1e-5);
}

TEST_CASE("8.2 NaN or infinity in the input, or an eps not above 0, throws ValueError") {
  const RowVector gamma = RowVector::Ones(4);
  Matrix bad = Matrix::Ones(3, 4);
  bad(0, 0) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::rms_norm, bad, gamma, 1e-5);
  bad(0, 0) = kInf;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::rms_norm, bad, gamma, 1e-5);
  RowVector bad_gamma = gamma;
  bad_gamma(2) = -kInf;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::rms_norm, Matrix(Matrix::Ones(3, 4)), bad_gamma, 1e-5);
  for (const double eps : {0.0, -1e-300, -1e-5, kNaN, kInf})
    CHECK_THROWS_CALL(ValueError, kRuleEps, ch08::rms_norm, Matrix(Matrix::Ones(3, 4)), gamma, eps);
}

// ---- 8.3 layer_norm_backward ------------------------------------------------------------------

TEST_CASE("8.3 a hand-worked row: the gradient loses its mean and its part along x_hat") {
  // x = (1, 2, 3, 6), eps = 0.5: s = 2, x_hat = (-1, -0.5, 0, 1.5). gamma = 1 and G = (1, 0, 0, 0):
  // g = G, mean(g) = 0.25, mean(g * x_hat) = -0.25, so dx = (g - 0.25 + 0.25 x_hat) / 2 =
  // (0.25, -0.1875, -0.125, 0.0625); dgamma = G * x_hat = (-1, 0, 0, 0); dbeta = G.
  const Matrix x = from_rows(1, 4, {1, 2, 3, 6}), grad_out = from_rows(1, 4, {1, 0, 0, 0});
  const RowVector gamma = RowVector::Ones(4);
  const double eps = 0.5;
  INPUTS(x, gamma, eps, grad_out);
  const ch08::LayerNormGrads g = ch08::layer_norm_backward(x, gamma, eps, grad_out);
  CHECK_MESSAGE(near(g.dx, from_rows(1, 4, {0.25, -0.1875, -0.125, 0.0625})),
                said("layer_norm_backward's dx for x = (1, 2, 3, 6), eps = 0.5 and grad_out = (1, 0, 0, 0) must be "
                     "(g - mean(g) - x_hat mean(g x_hat)) / s = (0.25, -0.1875, -0.125, 0.0625)",
                     backward_mistakes(g.dx, 0, x, gamma, eps, grad_out)));
  CHECK_MESSAGE(near(g.dgamma, row({-1, 0, 0, 0})),
                said("layer_norm_backward's dgamma for this row must be grad_out * x_hat = (-1, 0, 0, 0)",
                     backward_mistakes(g.dgamma, 1, x, gamma, eps, grad_out)));
  CHECK_MESSAGE(near(g.dbeta, row({1, 0, 0, 0})),
                said("layer_norm_backward's dbeta for one token must be its grad_out, (1, 0, 0, 0)",
                     backward_mistakes(g.dbeta, 2, x, gamma, eps, grad_out)));
}

TEST_CASE("8.3 gradients agree with the formulas and with central differences") {
  Rng rng(84);
  const Matrix x = tokens(5, 6, rng);
  const RowVector gamma = normal_matrix(1, 6, rng), beta = normal_matrix(1, 6, rng);
  const Matrix grad_out = normal_matrix(5, 6, rng);
  INFO("x (5, 6): row i drawn from N(0, 1), times 4^(i mod 5 - 2), plus i - 1.5, then gamma, beta (1, 6) and grad_out (5, 6) from N(0, 1), with Rng(84)");
  INPUTS(x, gamma, grad_out);
  const ch08::LayerNormGrads g = ch08::layer_norm_backward(x, gamma, 1e-5, grad_out);
  const ch08::LayerNormGrads exact = backward_exact(x, gamma, 1e-5, grad_out);
  // The formulas are the derivative: the check's own formulas against central differences.
  REQUIRE_MESSAGE(near(exact.dx, central_differences(x, gamma, beta, 1e-5, grad_out, 0), 1e-7),
                  "the check's own dx formula disagrees with central differences");
  REQUIRE_MESSAGE(near(exact.dgamma, central_differences(x, gamma, beta, 1e-5, grad_out, 1), 1e-7),
                  "the check's own dgamma formula disagrees with central differences");
  REQUIRE_MESSAGE(near(exact.dbeta, central_differences(x, gamma, beta, 1e-5, grad_out, 2), 1e-7),
                  "the check's own dbeta formula disagrees with central differences");
  CHECK_MESSAGE(near(g.dx, exact.dx, 1e-10, Parts{"token", 1, "feature", 1}),
                said("layer_norm_backward's dx for 5 tokens of 6 features differs from the derivative of L = sum(G * y) "
                     "in x: each row is (g - mean(g) - x_hat mean(g x_hat)) / s with g = grad_out * gamma",
                     backward_mistakes(g.dx, 0, x, gamma, 1e-5, grad_out)));
  CHECK_MESSAGE(near(g.dgamma, exact.dgamma, 1e-10),
                said("layer_norm_backward's dgamma differs from the derivative of L in gamma: the sum over the tokens of "
                     "grad_out * x_hat",
                     backward_mistakes(g.dgamma, 1, x, gamma, 1e-5, grad_out)));
  CHECK_MESSAGE(near(g.dbeta, exact.dbeta, 1e-10),
                said("layer_norm_backward's dbeta differs from the derivative of L in beta: the sum over the tokens of "
                     "grad_out",
                     backward_mistakes(g.dbeta, 2, x, gamma, 1e-5, grad_out)));
}

TEST_CASE("8.3 numbers equal PyTorch's autograd through nn.LayerNorm") {
  using torch_fixture::Random;
  using torch_fixture::Small;
  for (int k = 0; k < 2; ++k) {
    const Matrix x = k == 0 ? Random::x() : Small::x(), grad_out = k == 0 ? Random::grad_out() : Small::grad_out();
    const RowVector gamma = k == 0 ? Random::gamma() : Small::gamma();
    const double eps = k == 0 ? Random::eps : Small::eps;
    const Matrix torch_dx = k == 0 ? Random::dx() : Small::dx();
    const RowVector torch_dgamma = k == 0 ? Random::dgamma() : Small::dgamma();
    const RowVector torch_dbeta = k == 0 ? Random::dbeta() : Small::dbeta();
    INFO((k == 0 ? "the fixture's 6 tokens of 8 features" : "the fixture's 4 tokens of 5 features"));
    INPUTS(x, gamma, eps, grad_out);
    const ch08::LayerNormGrads g = ch08::layer_norm_backward(x, gamma, eps, grad_out);
    // dx is s times smaller than grad_out: compared relative to the largest of PyTorch's.
    const double scale = torch_dx.cwiseAbs().maxCoeff();
    CHECK_MESSAGE(near(g.dx / scale, torch_dx / scale, 1e-10, Parts{"token", 1, "feature", 1}),
                  said("layer_norm_backward's dx must equal x.grad from PyTorch 1.13's autograd through nn.LayerNorm "
                       "(float64) of L = sum(G * y), to 1e-10 of its largest entry",
                       backward_mistakes(g.dx, 0, x, gamma, eps, grad_out)));
    CHECK_MESSAGE(near(g.dgamma, torch_dgamma, 1e-10),
                  said("layer_norm_backward's dgamma must equal nn.LayerNorm's weight.grad", backward_mistakes(g.dgamma, 1, x, gamma, eps, grad_out)));
    CHECK_MESSAGE(near(g.dbeta, torch_dbeta, 1e-10),
                  said("layer_norm_backward's dbeta must equal nn.LayerNorm's bias.grad", backward_mistakes(g.dbeta, 2, x, gamma, eps, grad_out)));
  }
}

TEST_CASE("8.3 a tiny eps is valid, and a spread of 1e-12 is normalised to unit size") {
  // x = (0, 1e-12, 0, 1e-12) with eps = 1e-300: x_hat = (-1, 1, -1, 1) and s = 5e-13, so dx is of the
  // order of 1e12: compared relative to its largest entry.
  const Matrix x = from_rows(1, 4, {0, 1e-12, 0, 1e-12}), grad_out = from_rows(1, 4, {1, -2, 0.5, 3});
  const RowVector gamma = row({1, 2, 0.5, -1});
  INPUTS(x, gamma, grad_out);
  const ch08::LayerNormGrads g = ch08::layer_norm_backward(x, gamma, 1e-300, grad_out);
  const ch08::LayerNormGrads exact = backward_exact(x, gamma, 1e-300, grad_out);
  const double scale = exact.dx.cwiseAbs().maxCoeff();
  CHECK_MESSAGE(near(Matrix(g.dx / scale), Matrix(exact.dx / scale)),
                said("layer_norm_backward's dx for (0, 1e-12, 0, 1e-12) with eps = 1e-300 must be (g - mean(g) - x_hat "
                     "mean(g x_hat)) / s with s = 5e-13 (any eps above 0 is valid)",
                     backward_mistakes(g.dx, 0, x, gamma, 1e-300, grad_out)));
  CHECK_MESSAGE(near(g.dgamma, exact.dgamma),
                said("layer_norm_backward's dgamma for (0, 1e-12, 0, 1e-12) with eps = 1e-300 must be grad_out * x_hat with "
                     "x_hat = (-1, 1, -1, 1)",
                     backward_mistakes(g.dgamma, 1, x, gamma, 1e-300, grad_out)));
}

TEST_CASE("8.3 entries beyond 1e154 give the gradient of the same row in smaller units") {
  // dx of x = 1e200 (1, 2, 3, 6) is 1e-200 times dx of (1, 2, 3, 6) with eps 1e-400 (0 to a
  // double): compared after multiplying both by 1e200, since near() is absolute below 1.
  const Matrix x = from_rows(3, 4, {1e200, 2e200, 3e200, 6e200, 0x1p1000, 0x1p1000, 0x1p1000, 0x1p1000,
                                    0x1p1000, 0x1.00000000004p1000, 0x1p1000, 0x1.00000000004p1000});
  const Matrix grad_out = from_rows(3, 4, {1, -2, 0.5, 3, 1, -2, 0.5, 3, 1, -2, 0.5, 3});
  const RowVector gamma = row({1, 2, 0.5, -1});
  INPUTS(x, gamma, grad_out);
  const ch08::LayerNormGrads g = ch08::layer_norm_backward(x, gamma, 1e-5, grad_out);
  const ch08::LayerNormGrads exact = backward_exact(x, gamma, 1e-5, grad_out);
  CHECK_MESSAGE(near(Matrix(g.dx.row(0) * 1e200), Matrix(exact.dx.row(0) * 1e200)),
                said("layer_norm_backward's dx for the token 1e200 (1, 2, 3, 6) must be finite and 1e-200 times the "
                     "gradient for (1, 2, 3, 6): no square of the row may overflow",
                     backward_mistakes(g.dx, 0, x, gamma, 1e-5, grad_out)));
  CHECK_MESSAGE(near(Matrix(g.dx.row(1)), Matrix(exact.dx.row(1))),
                said("layer_norm_backward's dx for a constant token of 2^1000 must be (g - mean(g)) / sqrt(eps): every "
                     "deviation is 0, so s = sqrt(eps)",
                     backward_mistakes(g.dx, 0, x, gamma, 1e-5, grad_out)));
  // Row 2: 2^1000 (1, 1 + 2^-40, 1, 1 + 2^-40), deviations of +-2^959: dx is of the order of 2^-959.
  CHECK_MESSAGE(near(Matrix(g.dx.row(2) * 0x1p959), Matrix(exact.dx.row(2) * 0x1p959)),
                said("layer_norm_backward's dx for the token 2^1000 (1, 1 + 2^-40, 1, 1 + 2^-40), whose spread is 2^-41 of "
                     "its mean, must be 2^-959 times that of (-1, 1, -1, 1) with eps 0: x_hat is (-1, 1, -1, 1)",
                     backward_mistakes(g.dx, 0, x, gamma, 1e-5, grad_out)));
  CHECK_MESSAGE(near(g.dgamma, exact.dgamma),
                said("layer_norm_backward's dgamma for tokens of entries beyond 1e154 must be the sum of grad_out * x_hat, "
                     "x_hat as layer_norm computes it",
                     backward_mistakes(g.dgamma, 1, x, gamma, 1e-5, grad_out)));
}

TEST_CASE("8.3 shapes that do not fit, empty inputs, non-finite values and a bad eps throw") {
  const Matrix x = Matrix::Ones(2, 3), grad_out = Matrix::Ones(2, 3);
  const RowVector gamma = RowVector::Ones(3);
  CHECK_THROWS_CALL(ShapeError, kRuleGrad, ch08::layer_norm_backward, x, gamma, 1e-5, Matrix(Matrix::Ones(3, 3)));
  CHECK_THROWS_CALL(ShapeError, kRuleGrad, ch08::layer_norm_backward, x, gamma, 1e-5, Matrix(Matrix::Ones(1, 3)));
  CHECK_THROWS_CALL(ShapeError, kRuleGrad, ch08::layer_norm_backward, x, gamma, 1e-5, Matrix(Matrix::Ones(2, 4)));
  CHECK_THROWS_CALL(ShapeError, kRuleGrad, ch08::layer_norm_backward, x, gamma, 1e-5, Matrix(Matrix::Ones(3, 2)));
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::layer_norm_backward, Matrix(0, 3), gamma, 1e-5, Matrix(0, 3));
  CHECK_THROWS_CALL(ShapeError, kRuleEmpty, ch08::layer_norm_backward, Matrix(2, 0), RowVector(0), 1e-5, Matrix(2, 0));
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm_backward, x, RowVector(RowVector::Ones(2)), 1e-5, grad_out);
  CHECK_THROWS_CALL(ShapeError, kRuleGamma, ch08::layer_norm_backward, x, RowVector(RowVector::Ones(4)), 1e-5, grad_out);
  Matrix bad = grad_out;
  bad(1, 2) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm_backward, x, gamma, 1e-5, bad);
  Matrix bad_x = x;
  bad_x(0, 1) = kInf;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm_backward, bad_x, gamma, 1e-5, grad_out);
  RowVector bad_gamma = gamma;
  bad_gamma(1) = kNaN;
  CHECK_THROWS_CALL(ValueError, kRuleFinite, ch08::layer_norm_backward, x, bad_gamma, 1e-5, grad_out);
  for (const double eps : {0.0, -1e-300, kNaN, kInf})
    CHECK_THROWS_CALL(ValueError, kRuleEps, ch08::layer_norm_backward, x, gamma, eps, grad_out);
}

}  // TEST_SUITE
