// Chapter 6 checks — scaling laws and their limits.
//
// Every expected value is derived here: hand-worked points, the normal equations of the log-log
// line solved independently, synthetic data drawn from known laws with a tolerance derived from
// the noise put in, the compute-optimal split found by a brute-force search, the documented
// shuffle replayed. A failure names a known mistake only when the output is the one that mistake
// gives on the same input (the check computes it by applying the mistake to its own computation);
// otherwise the message states the rule broken.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <climits>
#include <functional>
#include <cmath>
#include <limits>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"
#include "scaling_laws.hpp"

using namespace scalebook;
using scalebook::testing::format_number;
using scalebook::testing::format_values;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::same_values;
using scalebook::testing::Mistake;
using scalebook::testing::Named;
using scalebook::testing::show;
using scalebook::testing::suspect;
using scalebook::testing::suspect_exact;
using scalebook::testing::Why;
namespace ch06 = scalebook::ch06;

// The chapter's structs as values (inputs and results print as what they are, never a pointer).
namespace doctest {
template <>
struct StringMaker<ch06::PowerLaw> {
  static String convert(const ch06::PowerLaw& p) {
    return ("PowerLaw{a " + format_number(p.a) + ", alpha " + format_number(p.alpha) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::SaturatingPowerLaw> {
  static String convert(const ch06::SaturatingPowerLaw& p) {
    return ("SaturatingPowerLaw{e " + format_number(p.e) + ", a " + format_number(p.a) + ", alpha " + format_number(p.alpha) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::Extrapolation> {
  static String convert(const ch06::Extrapolation& x) {
    return ("Extrapolation{predicted " + format_values(x.predicted) + ", relative_error " + format_values(x.relative_error) +
            ", worst " + format_number(x.worst) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::ComputeLaw> {
  static String convert(const ch06::ComputeLaw& l) {
    return ("ComputeLaw{e " + format_number(l.e) + ", a " + format_number(l.a) + ", b " + format_number(l.b) + ", alpha " +
            format_number(l.alpha) + ", beta " + format_number(l.beta) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::Allocation> {
  static String convert(const ch06::Allocation& a) {
    return ("Allocation{params " + format_number(a.params) + ", tokens " + format_number(a.tokens) + ", loss " +
            format_number(a.loss) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::LabelSplit> {
  static String convert(const ch06::LabelSplit& s) {
    return ("LabelSplit{train " + format_values(s.train) + ", test " + format_values(s.test) + "}").c_str();
  }
};
template <>
struct StringMaker<ch06::AccuracyReport> {
  static String convert(const ch06::AccuracyReport& r) {
    return ("AccuracyReport{train_accuracy " + format_number(r.train_accuracy) + ", test_accuracy " +
            format_number(r.test_accuracy) + ", train_loss " + format_number(r.train_loss) + ", test_loss " +
            format_number(r.test_loss) + "}").c_str();
  }
};
}  // namespace doctest

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kLinearAxes{"linear_axes", "the power law fitted on linear axes: it is a straight line between ln N and ln L, not between N and L"};
constexpr Named kNoIrreducible{"no_irreducible", "the irreducible term forgotten: E = 0 and a plain log-log fit of L"};
constexpr Named kLogBelowE{"log_below_e", "trial values of E at or above the smallest loss: fit_power_law got a loss L - E <= 0, whose log does not exist"};
constexpr Named kGridOnly{"grid_without_refinement", "the scan over E_k without the golden-section refinement: the best grid point is only within a step of the minimum"};
constexpr Named kNoFallback{"grid_fallback_missing", "the refined E kept even when it scores worse than the best grid point: the contract keeps that E_k (a pure power law gets E = 0 exactly)"};
constexpr Named kSignFlipped{"sign_flipped", "the exponent's sign flipped when extrapolating: N^(+alpha) instead of N^(-alpha)"};
constexpr Named kErrorOfPrediction{"error_over_prediction", "the relative error divided by the prediction instead of the measured loss"};
constexpr Named kWorstSigned{"worst_signed", "worst taken as the largest signed error instead of the largest |error|"};
constexpr Named kTwoND{"two_nd", "C = 2ND instead of 6ND: training costs about 6 FLOPs per parameter and token"};
constexpr Named kNoSix{"six_left_out", "the 6 of C = 6ND left out (N D = C): training costs about 6 FLOPs per parameter and token"};
constexpr Named kSattolo{"shuffle_sattolo", "j = rng.next_u64() % i instead of % (i + 1): entry i must be able to stay where it is"};
constexpr Named kFromFront{"shuffle_from_front", "Fisher-Yates from the front: the contract's shuffle runs i = n - 1 down to 1"};
constexpr Named kNotShuffled{"labels_not_shuffled", "the training labels returned unshuffled"};
constexpr Named kTestShuffled{"test_labels_shuffled", "the test labels shuffled too: they stay real, to measure the real task"};
constexpr Named kTrainAsTest{"train_as_test", "the accuracy and loss on the training rows reported as the test ones"};
constexpr Named kLastTie{"argmax_last_tie", "a tie between logits resolved to the last largest one instead of the first"};
constexpr Named kNaiveSoftmax{"naive_cross_entropy", "the cross-entropy as -ln(exp(z_y) / sum exp(z_j)) without subtracting the row's maximum: exp(1000) overflows"};
constexpr Named kGlobalMax{"cross_entropy_global_max", "the whole matrix's largest logit subtracted instead of each row's: a row far below it underflows to ln 0"};
constexpr Named kFirstSkipped{"bad_value_skips_first", "the check of the values starts at index 1 and lets a bad first value through"};
constexpr Named kLastSkipped{"bad_value_skips_last", "the check of the values stops before the last index and lets a bad last value through"};
constexpr Named kZeroRejected{"zero_parameter_rejected", "a parameter of 0 rejected where the contract allows >= 0 (a > where >= belongs)"};
constexpr Named kTinyRejected{"tiny_value_rejected", "a tiny positive value rejected: every positive value is valid, however small"};

// The contract's rules, as the throw checks state them.
constexpr char kThrowsShape[] = "lists of different lengths, too few points or empty inputs must throw ShapeError";
constexpr char kThrowsValue[] = "non-positive, NaN, infinite or out-of-range values must throw ValueError";

Matrix as_row(std::initializer_list<double> values) {
  Matrix m(1, static_cast<Index>(values.size()));
  Index j = 0;
  for (double v : values) m(0, j++) = v;
  return m;
}
Matrix as_row(const std::vector<double>& values) {
  Matrix m(1, static_cast<Index>(values.size()));
  for (std::size_t j = 0; j < values.size(); ++j) m(0, static_cast<Index>(j)) = values[j];
  return m;
}
Matrix law_row(const ch06::PowerLaw& p) { return as_row({p.a, p.alpha}); }
Matrix law_row(const ch06::SaturatingPowerLaw& p) { return as_row({p.e, p.a, p.alpha}); }

// The least-squares line y = c0 + c1 x through the points, from the normal equations (Eigen's QR).
std::pair<double, double> line_fit(const std::vector<double>& x, const std::vector<double>& y) {
  Matrix design(static_cast<Index>(x.size()), 2);
  Vector target(static_cast<Index>(y.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    design(static_cast<Index>(i), 0) = 1.0;
    design(static_cast<Index>(i), 1) = x[i];
    target(static_cast<Index>(i)) = y[i];
  }
  const Vector c = design.colPivHouseholderQr().solve(target);
  return {c(0), c(1)};
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(x));
  return out;
}

// The log-log fit, and the same "fit" made on linear axes (the classic mistake), as {a, alpha}.
ch06::PowerLaw loglog_fit(const std::vector<double>& n, const std::vector<double>& l) {
  const auto [c0, c1] = line_fit(logs(n), logs(l));
  return {std::exp(c0), -c1};
}
ch06::PowerLaw linear_axes_fit(const std::vector<double>& n, const std::vector<double>& l) {
  const auto [c0, c1] = line_fit(n, l);
  return {c0, -c1};
}

std::vector<double> powers_of_two(int from, int to) {
  std::vector<double> n;
  for (int k = from; k <= to; ++k) n.push_back(std::ldexp(1.0, k));
  return n;
}

std::vector<double> saturating(const std::vector<double>& n, double e, double a, double alpha) {
  std::vector<double> l;
  for (double x : n) l.push_back(e + a * std::pow(x, -alpha));
  return l;
}

// 6.2 on valid data: "" when it returned finite parameters; otherwise what went wrong. A
// ValueError from fit_power_law (6.1) inside is the outcome of trial values of E at or above the
// smallest loss: fit_power_law then gets a loss L - E <= 0.
std::string fit_diagnosis(const std::vector<double>& n, const std::vector<double>& l, ch06::SaturatingPowerLaw& fit) {
  try {
    fit = ch06::fit_saturating_power_law(n, l);
  } catch (const std::exception& e) {
    const std::string what = testing::submitted(e.what());
    const bool from_fit = testing::starts_with(what, "fit_power_law: ");
    return said("threw on valid data: \"" + what + "\"", suspect_exact(from_fit, {{kLogBelowE, true}}));
  }
  if (!std::isfinite(fit.e) || !std::isfinite(fit.a) || !std::isfinite(fit.alpha)) {
    return "gave a fit that is not finite: E = " + format_number(fit.e) + ", A = " + format_number(fit.a) + ", alpha = " +
           format_number(fit.alpha);
  }
  return "";
}

// The profile score of a trial E: the log-log fit of the losses above E (as p) and the sum of
// squared residuals of E + A N^-alpha on linear axes.
double profile_score(const std::vector<double>& n, const std::vector<double>& l, double e, ch06::PowerLaw& p) {
  std::vector<double> above;
  for (double x : l) above.push_back(x - e);
  p = loglog_fit(n, above);
  double sum = 0.0;
  for (std::size_t i = 0; i < n.size(); ++i) sum += std::pow(l[i] - e - p.a * std::pow(n[i], -p.alpha), 2);
  return sum;
}

// The trial E_k = min L (1 - 10^(-12k/256)) of the contract's scan.
double trial_e(const std::vector<double>& l, int k) {
  return *std::min_element(l.begin(), l.end()) * (1.0 - std::pow(10.0, -12.0 * k / 256));
}

// The scan over k = 0 .. 255: the first k of least score, and that score as best.
int best_grid_point(const std::vector<double>& n, const std::vector<double>& l, double& best) {
  ch06::PowerLaw p;
  int best_k = 0;
  best = profile_score(n, l, trial_e(l, 0), p);
  for (int k = 1; k < 256; ++k) {
    const double s = profile_score(n, l, trial_e(l, k), p);
    if (s < best) {
      best = s;
      best_k = k;
    }
  }
  return best_k;
}

// The method's scan without the refinement that follows it: the best grid point, as a fit (the
// known mistake of stopping there).
ch06::SaturatingPowerLaw grid_only_fit(const std::vector<double>& n, const std::vector<double>& l) {
  double best = 0.0;
  const double e = trial_e(l, best_grid_point(n, l, best));
  ch06::PowerLaw p;
  profile_score(n, l, e, p);
  return {e, p.a, p.alpha};
}

// The contract's method replayed step by step, with the log-log line of this file: the scan over
// E_k, then golden-section search on [E_max(k-1, 0), E_k+1] to a width below 1e-12 min L, the grid
// point kept when the refinement found nothing better. A correct fit_saturating_power_law agrees
// with it to rounding.
ch06::SaturatingPowerLaw method_fit(const std::vector<double>& n, const std::vector<double>& l, bool fallback = true) {
  const double top = *std::min_element(l.begin(), l.end());
  double best = 0.0;
  const int best_k = best_grid_point(n, l, best);
  ch06::PowerLaw p;
  auto score = [&](double e) { return profile_score(n, l, e, p); };
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = trial_e(l, std::max(best_k - 1, 0)), hi = trial_e(l, best_k + 1);
  double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
  double f1 = score(x1), f2 = score(x2);
  while (hi - lo > 1e-12 * top) {
    if (f1 <= f2) {  // the minimum lies in [lo, x2]
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - r * (hi - lo), f1 = score(x1);
    } else {  // in [x1, hi]
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + r * (hi - lo), f2 = score(x2);
    }
  }
  double e = (lo + hi) / 2.0;
  if (fallback && score(e) > best) e = trial_e(l, best_k);
  score(e);
  return {e, p.a, p.alpha};
}

// The named mistakes of 6.2 whose fit on (N, L) equals FIT (each computed by the method with that
// slip); a slip that gives the right fit on this data proves nothing and is left out.
std::string saturating_mistakes(const ch06::SaturatingPowerLaw& fit, const std::vector<double>& n,
                                const std::vector<double>& l, double tol) {
  const Matrix right = law_row(method_fit(n, l));
  const ch06::PowerLaw plain = loglog_fit(n, l);
  std::vector<Mistake> mistakes = {{kNoIrreducible, as_row({0.0, plain.a, plain.alpha})},
                                   {kGridOnly, law_row(grid_only_fit(n, l))}};
  std::vector<Mistake> telling;
  for (const Mistake& m : mistakes)
    if (!near(m.output, right, tol)) telling.push_back(m);
  return suspect(law_row(fit), telling, tol);
}

// A bad size or loss (0, -1, NaN, infinity) at the first and at the last of three points must
// throw ValueError: FIT(sizes, losses) calls the exercise named FUNCTION. Letting a bad first (last)
// value through while catching it in the middle is what a loop that skips that index gives.
void check_bad_ends(const char* function,
                    const std::function<void(const std::vector<double>&, const std::vector<double>&)>& fit) {
  const auto own = [&](const std::vector<double>& n, const std::vector<double>& l) {
    return testing::starts_with(testing::thrown_message<ValueError>([&] { fit(n, l); }), std::string(function) + ": ");
  };
  for (double bad : {0.0, -1.0, kNaN, kInf}) {
    const bool middle = own({1, bad, 100}, {3, 2, 1}) && own({1, 10, 100}, {3, bad, 1});
    const std::vector<double> sizes[4] = {{bad, 10, 100}, {1, 10, 100}, {1, 10, bad}, {1, 10, 100}};
    const std::vector<double> losses[4] = {{3, 2, 1}, {bad, 2, 1}, {3, 2, 1}, {3, 2, bad}};
    for (int c = 0; c < 4; ++c) {
      const std::string shown = std::string(function) + "(sizes, losses) [input: sizes = " + format_values(sizes[c]) +
                                "; losses = " + format_values(losses[c]) + "]";
      const Named& skipped = c < 2 ? kFirstSkipped : kLastSkipped;
      const Why why("a size or loss that is not positive and finite, at any index, must throw ValueError",
                    middle ? std::optional<Named>(skipped) : std::nullopt);
      const scalebook::testing::ThrowMatch thrown = scalebook::testing::throws_typed(
          [&] { fit(sizes[c], losses[c]); }, [](const std::exception& e) { return typeid(e) == typeid(ValueError); },
          scalebook::testing::type_name(typeid(ValueError)), function, [&] { return shown; }, why);
      if (!thrown) FAIL_CHECK(thrown.report);
    }
  }
}

// A data set for 6.2: sizes, losses and how they were made, in words for the messages.
struct LawData {
  std::vector<double> n, l;
  std::string what;  // "11 points of 0.5 + 20 N^-0.4 with noise of standard deviation 0.002 (seed 621), N = 16 .. 16384"
};

LawData law_data(const std::vector<double>& n, double e, double a, double alpha, double sigma, std::uint64_t seed) {
  LawData d{n, saturating(n, e, a, alpha), ""};
  Rng rng(seed);
  if (sigma > 0.0)
    for (double& x : d.l) x += sigma * rng.normal();
  d.what = std::to_string(n.size()) + (sigma > 0.0 ? " noisy points of " : " exact points (no noise) of ") +
           format_number(e) + " + " + format_number(a) + " N^-" + format_number(alpha) +
           (sigma > 0.0 ? " plus normal noise of standard deviation " + format_number(sigma) + " (Rng(" +
                              std::to_string(seed) + "))"
                        : "") +
           ", N = " + format_number(n.front()) + " .. " + format_number(n.back());
  return d;
}

std::vector<double> times(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

double law_loss(const ch06::ComputeLaw& law, double n, double d) {
  return law.e + law.a / std::pow(n, law.alpha) + law.b / std::pow(d, law.beta);
}

// Brute force: the N in [1, C/6] (D = C / 6N >= 1) of least loss, by a scan of ln N on 2001 points
// and refinement of ln N around the best (L is unimodal in ln N); ternary search.
double brute_force_params(const ch06::ComputeLaw& law, double compute) {
  const double nd = compute / 6.0, top = std::log(nd);
  auto loss_at = [&](double log_n) { return law_loss(law, std::exp(log_n), nd / std::exp(log_n)); };
  int best = 0;
  for (int k = 1; k <= 2000; ++k)
    if (loss_at(top * k / 2000) < loss_at(top * best / 2000)) best = k;
  double lo = top * std::max(best - 1, 0) / 2000, hi = top * std::min(best + 1, 2000) / 2000;
  for (int it = 0; it < 200; ++it) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (loss_at(m1) < loss_at(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  return std::exp((lo + hi) / 2);
}

// Hoffmann et al. 2022, approach 3 (eq. 10).
const ch06::ComputeLaw kChinchilla{1.69, 406.4, 410.7, 0.34, 0.28};

std::vector<int> fisher_yates(std::vector<int> v, std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t i = v.size() - 1; i > 0; --i) std::swap(v[i], v[rng.next_u64() % (i + 1)]);
  return v;
}

// The test labels shuffled too, as the training labels are: with a fresh Rng(seed), or with the
// generator carried on from the training labels' shuffle.
std::string test_shuffle_suspect(const std::vector<int>& got, const std::vector<int>& train, const std::vector<int>& test,
                                 std::uint64_t seed) {
  if (test.size() < 2) return "";
  std::vector<int> fresh = fisher_yates(test, seed), carried = test;
  Rng rng(seed);
  for (std::size_t i = train.size() - 1; i > 0; --i) rng.next_u64();
  for (std::size_t i = carried.size() - 1; i > 0; --i) std::swap(carried[i], carried[rng.next_u64() % (i + 1)]);
  return testing::suspect_values(got, {{kTestShuffled, fresh}, {kTestShuffled, carried}});
}

// The slips of a hand-written shuffle, for the failure message.
std::string shuffle_suspect(const std::vector<int>& got, std::vector<int> v, std::uint64_t seed) {
  std::vector<int> sattolo = v, front = v;
  Rng a(seed), b(seed);
  for (std::size_t i = v.size() - 1; i > 0; --i) std::swap(sattolo[i], sattolo[a.next_u64() % i]);
  for (std::size_t i = 0; i + 1 < v.size(); ++i) std::swap(front[i], front[i + b.next_u64() % (v.size() - i)]);
  return testing::suspect_values(got, {{kSattolo, sattolo}, {kFromFront, front}, {kNotShuffled, v}});
}

// accuracy_report by the contract, with its known slips: 0 right, 1 the train rows as test, 2 ties
// to the last maximum, 3 without the row's maximum, 4 with the matrix's maximum.
ch06::AccuracyReport report_by(const Matrix& train, const std::vector<int>& train_y, const Matrix& test,
                               const std::vector<int>& test_y, int slip) {
  const auto score = [&](const Matrix& z, const std::vector<int>& y, double& accuracy, double& loss) {
    double correct = 0.0, total = 0.0;
    const double top_all = z.maxCoeff();
    for (Index i = 0; i < z.rows(); ++i) {
      Index best = 0;
      for (Index j = 1; j < z.cols(); ++j)
        if (z(i, j) > z(i, best) || (slip == 2 && z(i, j) == z(i, best))) best = j;
      const int label = y[static_cast<std::size_t>(i)];
      correct += best == label ? 1.0 : 0.0;
      const double shift = slip == 3 ? 0.0 : slip == 4 ? top_all : z(i, best);
      double sum = 0.0;
      for (Index j = 0; j < z.cols(); ++j) sum += std::exp(z(i, j) - shift);
      total += slip == 3 ? -std::log(std::exp(z(i, label)) / sum) : std::log(sum) + shift - z(i, label);
    }
    accuracy = correct / static_cast<double>(z.rows());
    loss = total / static_cast<double>(z.rows());
  };
  ch06::AccuracyReport r;
  score(train, train_y, r.train_accuracy, r.train_loss);
  if (slip == 1) score(train, train_y, r.test_accuracy, r.test_loss);
  else score(test, test_y, r.test_accuracy, r.test_loss);
  return r;
}

Matrix report_row(const ch06::AccuracyReport& r) {
  return as_row({r.train_accuracy, r.test_accuracy, r.train_loss, r.test_loss});
}

std::string report_mistakes(const ch06::AccuracyReport& r, const Matrix& train, const std::vector<int>& train_y,
                            const Matrix& test, const std::vector<int>& test_y) {
  const Matrix right = report_row(report_by(train, train_y, test, test_y, 0));
  std::vector<Mistake> telling;
  for (auto [mistake, slip] : {std::pair{kTrainAsTest, 1}, {kLastTie, 2}, {kNaiveSoftmax, 3}, {kGlobalMax, 4}}) {
    const Matrix out = report_row(report_by(train, train_y, test, test_y, slip));
    if (!near(out, right, 1e-12)) telling.push_back({mistake, out});
  }
  return suspect(report_row(r), telling, 1e-12);
}

// A valid input that threw: named when it is the boundary the contract allows (0, or a tiny value).
std::string rejected(const std::string& thrown, const Named& mistake) {
  return suspect_exact(thrown.empty(), {{mistake, false}});
}

}  // namespace

TEST_SUITE("06-scaling-laws") {

// ---- 6.1 fit_power_law ----------------------------------------------------------------------

TEST_CASE("6.1 two hand-worked points") {
  // (1, 2) and (100, 0.2): ln L falls by ln 10 while ln N grows by 2 ln 10: alpha = 0.5, a = 2.
  const std::vector<double> n = {1, 100}, l = {2, 0.2};
  INPUTS(n, l);
  const ch06::PowerLaw p = ch06::fit_power_law(n, l);
  CHECK_MESSAGE(near(law_row(p), as_row({2, 0.5}), 1e-12),
                said("fit_power_law through (1, 2) and (100, 0.2) must give (a, alpha) = (2, 0.5), index 0 a and 1 alpha",
                     suspect(law_row(p), {{kLinearAxes, law_row(linear_axes_fit(n, l))}})));
}

TEST_CASE("6.1 the points may come in any order") {
  // The two hand-worked points, the largest size first: (100, 0.2) and (1, 2) lie on the same line,
  // alpha = 0.5, a = 2. Sizes that fall are not all equal, however they compare with the first.
  const std::vector<double> n = {100, 1}, l = {0.2, 2};
  INPUTS(n, l);
  const ch06::PowerLaw p = ch06::fit_power_law(n, l);
  CHECK_MESSAGE(near(law_row(p), as_row({2, 0.5}), 1e-12),
                said("fit_power_law through (100, 0.2) and (1, 2), the largest size first, must give (a, alpha) = (2, 0.5), "
                     "index 0 a and 1 alpha",
                     suspect(law_row(p), {{kLinearAxes, law_row(linear_axes_fit(n, l))}})));
}

TEST_CASE("6.1 an exact power law over five decades is recovered") {
  const std::vector<double> n = {10, 1e3, 1e4, 1e5, 1e6, 1e7};
  std::vector<double> l;
  for (double x : n) l.push_back(5.0 * std::pow(x, -0.3));
  INPUTS(n, l);
  const ch06::PowerLaw p = ch06::fit_power_law(n, l);
  CHECK_MESSAGE(near(law_row(p), as_row({5, 0.3}), 1e-10),
                said("fit_power_law on the exact law 5 N^-0.3 must give (a, alpha) = (5, 0.3)",
                     suspect(law_row(p), {{kLinearAxes, law_row(linear_axes_fit(n, l))}}, 1e-6)));
}

TEST_CASE("6.1 noisy points give the least-squares line of the normal equations") {
  Rng rng(61);
  const std::vector<double> n = {3, 7, 20, 50, 300, 1000, 4000};
  std::vector<double> l;
  for (double x : n) l.push_back(2.0 * std::pow(x, -0.7) * std::exp(0.1 * rng.normal()));
  INFO("losses 2 N^-0.7 times exp(0.1 z), z standard normal from Rng(61)");
  INPUTS(n, l);
  const ch06::PowerLaw p = ch06::fit_power_law(n, l);
  CHECK_MESSAGE(near(law_row(p), law_row(loglog_fit(n, l)), 1e-10),
                said("fit_power_law on 7 noisy points differs from the least-squares line through (ln N, ln L) (index 0 a, 1 alpha)",
                     suspect(law_row(p), {{kLinearAxes, law_row(linear_axes_fit(n, l))}}, 1e-6)));
}

TEST_CASE("6.1 sizes and losses of extreme magnitude") {
  // L = N^-0.5 from N = 1e-200 to 1e200: losses 1e100 .. 1e-100. Their logarithms are moderate,
  // so the log-log fit is exact; on linear axes the numbers overflow the squares.
  const std::vector<double> n = {1e-200, 1, 1e200}, l = {1e100, 1, 1e-100};
  INPUTS(n, l);
  const ch06::PowerLaw p = ch06::fit_power_law(n, l);
  CHECK_MESSAGE(near(law_row(p), as_row({1, 0.5}), 1e-12),
                said("fit_power_law of L = N^-0.5 at N = 1e-200, 1, 1e200 must give (a, alpha) = (1, 0.5): the logarithms "
                     "are moderate even where N and L are not",
                     suspect(law_row(p), {{kLinearAxes, law_row(linear_axes_fit(n, l))}}, 1e-6)));
}

TEST_CASE("6.1 mismatched lengths and fewer than two points throw ShapeError") {
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_power_law, ch06::Numbers{1, 2, 3}, ch06::Numbers{1, 2});     // losses shorter
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_power_law, ch06::Numbers{1, 2}, ch06::Numbers{1, 2, 3});     // losses longer
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_power_law, ch06::Numbers{10}, ch06::Numbers{1});             // one point
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_power_law, ch06::Numbers{}, ch06::Numbers{});                // none
}

TEST_CASE("6.1 non-positive or non-finite sizes and losses and equal sizes throw ValueError") {
  for (double bad : {0.0, -1e-300, -1e300, kNaN, kInf, -kInf}) {
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::fit_power_law, ch06::Numbers{1, bad, 3}, ch06::Numbers{3, 2, 1});
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::fit_power_law, ch06::Numbers{1, 2, 3}, ch06::Numbers{3, bad, 1});
  }
  CHECK_THROWS_CALL(ValueError, "equal sizes leave the slope undefined: ValueError", ch06::fit_power_law, ch06::Numbers{5, 5, 5},
                    ch06::Numbers{3, 2, 1});
  // 0.1 is no float: sizes compared after a narrowing to float are never equal to the first.
  CHECK_THROWS_CALL(ValueError, "equal sizes leave the slope undefined: ValueError", ch06::fit_power_law,
                    ch06::Numbers{0.1, 0.1, 0.1}, ch06::Numbers{3, 2, 1});
}

TEST_CASE("6.1 a bad size or loss at the first or the last point throws ValueError") {
  check_bad_ends("fit_power_law", [](const std::vector<double>& n, const std::vector<double>& l) { ch06::fit_power_law(n, l); });
}

// ---- 6.2 fit_saturating_power_law -----------------------------------------------------------

TEST_CASE("6.2 a noiseless law with an irreducible loss is recovered") {
  const std::vector<double> n = powers_of_two(4, 14);
  const std::vector<double> l = saturating(n, 0.5, 20.0, 0.4);
  INPUTS(n, l);
  ch06::SaturatingPowerLaw fit;
  const std::string diagnosis = fit_diagnosis(n, l, fit);
  REQUIRE_MESSAGE(diagnosis.empty(), "fit_saturating_power_law on the exact law 0.5 + 20 N^-0.4 " << diagnosis);
  // The golden-section search stops at a width of 1e-12 min L; the residual sum is quadratic in
  // E - E*, so E is found to ~1e-8 relative; A and alpha follow from it.
  CHECK_MESSAGE(near(law_row(fit), as_row({0.5, 20, 0.4}), 1e-6),
                said("fit_saturating_power_law on the exact law 0.5 + 20 N^-0.4 at N = 2^4 .. 2^14 must give "
                     "(E, A, alpha) = (0.5, 20, 0.4), index 0 E, 1 A, 2 alpha",
                     saturating_mistakes(fit, n, l, 1e-6)));
}

TEST_CASE("6.2 noisy synthetic data: each parameter within five standard errors derived from the noise") {
  // L_i = E + A N_i^-alpha + sigma z_i with z_i standard normal, sigma = 0.002, 11 sizes.
  // Near the truth the least-squares estimate has covariance sigma^2 (J^T J)^-1 with J's rows
  // (1, N^-alpha, -A N^-alpha ln N): its diagonal gives each parameter's standard error. Five
  // standard errors fail a correct fit with probability below 1e-6 per parameter; the profile
  // method is not exactly least squares, but its difference is a small fraction of an error.
  const double e = 0.5, a = 20.0, alpha = 0.4, sigma = 0.002;
  const std::vector<double> n = powers_of_two(4, 14);
  std::vector<double> l = saturating(n, e, a, alpha);
  Rng rng(62);
  for (double& x : l) x += sigma * rng.normal();
  INFO("11 points of 0.5 + 20 N^-0.4 plus normal noise of standard deviation 0.002 (Rng(62)), N = 2^4 .. 2^14");
  INPUTS(n, l);
  Matrix j(static_cast<Index>(n.size()), 3);
  for (std::size_t i = 0; i < n.size(); ++i) {
    const double p = std::pow(n[i], -alpha);
    j.row(static_cast<Index>(i)) << 1.0, p, -a * p * std::log(n[i]);
  }
  const Matrix covariance = sigma * sigma * (j.transpose() * j).inverse();
  ch06::SaturatingPowerLaw fit;
  const std::string diagnosis = fit_diagnosis(n, l, fit);
  REQUIRE_MESSAGE(diagnosis.empty(), "fit_saturating_power_law on noisy data " << diagnosis);
  const double truth[3] = {e, a, alpha}, got[3] = {fit.e, fit.a, fit.alpha};
  const std::string named = saturating_mistakes(fit, n, l, 1e-6);
  const char* names[3] = {"E", "A", "alpha"};
  for (int k = 0; k < 3; ++k) {
    const double se = std::sqrt(covariance(k, k));
    CHECK_MESSAGE(std::abs(got[k] - truth[k]) <= 5.0 * se,
                  said("fit_saturating_power_law on noisy data from 0.5 + 20 N^-0.4 gave " + std::string(names[k]) + " = " +
                           format_number(got[k]) + ", more than five standard errors (5 x " + format_number(se) +
                           ") from the truth " + format_number(truth[k]),
                       named));
  }
}

TEST_CASE("6.2 a curve that levels off just above E keeps E below the smallest loss") {
  // E = 1, A = 1, alpha = 1 up to N = 1e6: the smallest loss is 1.000001, a hair above E.
  const std::vector<double> n = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  const std::vector<double> l = saturating(n, 1.0, 1.0, 1.0);
  INPUTS(n, l);
  ch06::SaturatingPowerLaw fit;
  const std::string diagnosis = fit_diagnosis(n, l, fit);
  REQUIRE_MESSAGE(diagnosis.empty(), "fit_saturating_power_law on the exact law 1 + 1 / N " << diagnosis);
  CHECK_MESSAGE(fit.e < 1.000001, "fit_saturating_power_law gave E = " << format_number(fit.e)
                                      << ", not below the smallest loss 1.000001: every trial E stays below it");
  CHECK_MESSAGE(near(law_row(fit), as_row({1, 1, 1}), 1e-5),
                said("fit_saturating_power_law on the exact law 1 + 1 / N at N = 1 .. 1e6 must give (E, A, alpha) = (1, 1, 1)",
                     saturating_mistakes(fit, n, l, 1e-9)));
}

TEST_CASE("6.2 a pure power law gives E at 0 exactly") {
  // The best grid point is E_0 = 0; any E above it scores worse, so the contract keeps E_0: E = 0
  // exactly, not the refined interval's midpoint a hair above it.
  const std::vector<double> n = {2, 8, 32, 128, 512};
  std::vector<double> l;
  for (double x : n) l.push_back(3.0 * std::pow(x, -0.5));
  INPUTS(n, l);
  ch06::SaturatingPowerLaw fit;
  const std::string diagnosis = fit_diagnosis(n, l, fit);
  REQUIRE_MESSAGE(diagnosis.empty(), "fit_saturating_power_law on the pure power law 3 N^-0.5 " << diagnosis);
  // Keeping the refined E gives the midpoint of the last interval: above 0 by less than its width.
  const double width = 1e-12 * *std::min_element(l.begin(), l.end());
  CHECK_MESSAGE(fit.e == 0.0,
                said("fit_saturating_power_law on the pure power law 3 N^-0.5 gave E = " + format_number(fit.e) +
                         ": the best grid point E_0 = 0 scores better than the refined E, and the contract then keeps E_0",
                     suspect_exact(fit.e > 0.0 && fit.e <= width, {{kNoFallback, true}})));
  CHECK_MESSAGE(near(law_row(fit), as_row({0, 3, 0.5}), 1e-6),
                "fit_saturating_power_law on the pure power law 3 N^-0.5 must give (E, A, alpha) = (0, 3, 0.5)");
}

TEST_CASE("6.2 fewer points than parameters, mismatched lengths and bad values throw") {
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_saturating_power_law, ch06::Numbers{1, 10}, ch06::Numbers{2, 1});
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_saturating_power_law, ch06::Numbers{}, ch06::Numbers{});
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_saturating_power_law, ch06::Numbers{1, 10, 100}, ch06::Numbers{3, 2, 1, 0.5});
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::fit_saturating_power_law, ch06::Numbers{1, 10, 100, 1000}, ch06::Numbers{3, 2, 1});
  for (double bad : {0.0, -1e-300, -1e300, kNaN, kInf}) {
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::fit_saturating_power_law, ch06::Numbers{1, 10, bad}, ch06::Numbers{3, 2, 1});
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::fit_saturating_power_law, ch06::Numbers{1, 10, 100}, ch06::Numbers{3, bad, 1});
  }
}

TEST_CASE("6.2 a bad size or loss at the first or the last point throws ValueError") {
  check_bad_ends("fit_saturating_power_law", [](const std::vector<double>& n, const std::vector<double>& l) { ch06::fit_saturating_power_law(n, l); });
}

TEST_CASE("6.2 the contract's method replayed: the scan over E_k, then golden-section search") {
  // Five noisy data sets and six exact ones. The method (scan, then refinement between the best
  // E_k's neighbours) fixes the answer: a correct fit agrees with the replay below to rounding
  // (1e-6), whatever the noise did to the data; a scan without refinement, another grid or a
  // refinement on another interval lands elsewhere.
  const std::vector<LawData> sets = {
      law_data(powers_of_two(4, 14), 0.5, 20.0, 0.4, 0.002, 621),
      law_data({1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}, 1.8, 400.0, 0.3, 0.01, 622),
      law_data({10, 30, 100, 300, 1000}, 0.1, 5.0, 0.7, 0.001, 623),
      law_data(powers_of_two(0, 12), 2.0, 1.0, 0.5, 0.02, 624),
      law_data({1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}, 3.0, 100.0, 0.25, 0.0, 0),
      law_data(powers_of_two(1, 9), 0.0, 3.0, 0.5, 0.0, 0),
      law_data({10, 30, 100, 300, 1000}, 0.01, 2.0, 0.3, 0.0, 0),  // E far below min L: between E_0 and E_1
      law_data({1, 4, 16, 64}, 0.3, 15.0, 0.43, 0.0, 0),             // E just above E_1 = 0.102 min L
      law_data({10, 100, 1e3, 1e4, 1e5, 1e6}, 1.6, 33.0, 1.0, 0.0, 0),  // E within 2e-5 of min L: k near 100
      law_data(powers_of_two(0, 5), 1.4, 38.0, 0.33, 0.0, 0),           // the best grid point is E_1
      // Noisy, yet well fitted (E 1.5012, alpha 0.771), where neighbouring E_k score alike to 7
      // digits: only scores kept in double find the first k of least score that the contract names.
      law_data({1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}, 1.5, 100.0, 0.7, 0.001, 626),
  };
  for (const LawData& d : sets) {  // every message names the data set
    INFO("data: ", d.what);
    INPUTS(d.n, d.l);
    ch06::SaturatingPowerLaw fit;
    const std::string diagnosis = fit_diagnosis(d.n, d.l, fit);
    CHECK_MESSAGE(diagnosis.empty(), "fit_saturating_power_law on " << d.what << " " << diagnosis);
    if (!diagnosis.empty()) continue;
    const ch06::SaturatingPowerLaw replay = method_fit(d.n, d.l);
    CHECK_MESSAGE(near(law_row(fit), law_row(replay), 1e-6),
                  said("fit_saturating_power_law on " + d.what + " gave (E, A, alpha) that differ from the contract's "
                       "method replayed (expected below): compare your scan of the 256 E_k and your golden-section "
                       "search on [E_(k-1), E_(k+1)] with the contract's, one step at a time",
                       saturating_mistakes(fit, d.n, d.l, 1e-6)));
  }
}

TEST_CASE("6.2 losses and sizes in other units give the same law in those units") {
  // L = E + A N^-alpha: losses times c give (c E, c A, alpha); sizes times s give (E, A s^alpha,
  // alpha). The contract's method scales with them (its grid and its stopping width are relative
  // to min L); an absolute width such as hi - lo > 1e-12 either never stops or stops at once. Sizes
  // and losses of 1e-12 are positive like any others: no threshold above 0 rejects them.
  const LawData d = law_data(powers_of_two(4, 14), 0.5, 20.0, 0.4, 0.002, 621);
  const ch06::SaturatingPowerLaw base = method_fit(d.n, d.l);
  for (double c : {1e-12, 1e12}) {
    const std::vector<double> scaled = times(d.l, c);
    INFO("data: ", d.what, ", the losses multiplied by ", format_number(c));
    INPUTS(d.n, scaled);
    ch06::SaturatingPowerLaw fit;
    const std::string thrown = scalebook::testing::thrown_by([&] { fit = ch06::fit_saturating_power_law(d.n, scaled); });
    CHECK_MESSAGE(thrown.empty(), said("fit_saturating_power_law on losses multiplied by " + format_number(c) + " threw \"" +
                                           thrown + "\": every positive loss is valid, however small, and every trial E "
                                           "must stay below the smallest loss",
                                       testing::starts_with(thrown, "fit_power_law: ")
                                           ? suspect_exact(true, {{kLogBelowE, true}})
                                           : rejected(thrown, kTinyRejected)));
    if (!thrown.empty()) continue;
    CHECK_MESSAGE(near(as_row({fit.e / c, fit.a / c, fit.alpha}), law_row(base), 1e-6),
                  "fit_saturating_power_law on the losses multiplied by " << format_number(c)
                  << " must give E and A multiplied by " << format_number(c) << " and the same alpha (E / "
                  << format_number(c) << ", A / " << format_number(c) << ", alpha below): every tolerance, step and "
                  "starting point of the method is relative to the smallest loss");
  }
  for (double scale : {1e-12, 1e12}) {
    const std::vector<double> sizes = times(d.n, scale);
    INFO("data: ", d.what, ", the sizes multiplied by ", format_number(scale));
    INPUTS(sizes, d.l);
    ch06::SaturatingPowerLaw fit;
    const std::string thrown = scalebook::testing::thrown_by([&] { fit = ch06::fit_saturating_power_law(sizes, d.l); });
    CHECK_MESSAGE(thrown.empty(), said("fit_saturating_power_law on sizes multiplied by " + format_number(scale) + " threw \"" +
                                           thrown + "\": every positive size is valid, however small",
                                       testing::starts_with(thrown, "fit_power_law: ")
                                           ? suspect_exact(true, {{kLogBelowE, true}})
                                           : rejected(thrown, kTinyRejected)));
    if (!thrown.empty()) continue;
    CHECK_MESSAGE(near(as_row({fit.e, fit.a / std::pow(scale, fit.alpha), fit.alpha}), law_row(base), 1e-6),
                  "fit_saturating_power_law on the sizes multiplied by " << format_number(scale)
                  << " must give the same E and alpha and A times " << format_number(scale) << "^alpha (E, A / "
                  << format_number(scale) << "^alpha, alpha below): nothing in the method is absolute in N");
  }
}

// ---- 6.3 extrapolate ------------------------------------------------------------------------

TEST_CASE("6.3 hand-worked predictions and signed relative errors") {
  // E = 1, A = 8, alpha = 1/3 at N = 1, 8, 64: 1 + 8/1, 1 + 8/2, 1 + 8/4 = 9, 5, 3.
  const ch06::SaturatingPowerLaw law{1.0, 8.0, 1.0 / 3.0};
  const std::vector<double> n = {1, 8, 64}, l = {9, 4, 4};
  INPUTS(law, n, l);
  const ch06::Extrapolation x = ch06::extrapolate(law, n, l);
  const Matrix predicted = as_row(x.predicted);
  CHECK_MESSAGE(near(predicted, as_row({9, 5, 3}), 1e-12),
                said("extrapolate with E = 1, A = 8, alpha = 1/3 at N = 1, 8, 64 must predict 9, 5, 3",
                     suspect(predicted, {{kSignFlipped, as_row({9, 1 + 8 * 2, 1 + 8 * 4})}})));
  // (9 - 9) / 9, (5 - 4) / 4, (3 - 4) / 4
  const Matrix errors = as_row(x.relative_error);
  CHECK_MESSAGE(near(errors, as_row({0, 0.25, -0.25}), 1e-12),
                said("extrapolate's relative errors (predicted - measured) / measured against the losses 9, 4, 4 must be "
                     "0, 0.25, -0.25",
                     suspect(errors, {{kErrorOfPrediction, as_row({0, 0.2, -1.0 / 3.0})},
                                      {kSignFlipped, as_row({0, 13.0 / 4, 29.0 / 4})}})));
  CHECK_MESSAGE(near(x.worst, 0.25, 1e-12), "extrapolate's worst must be the largest |relative error|, 0.25, got " << format_number(x.worst));
}

TEST_CASE("6.3 far beyond the fitted sizes the prediction approaches E") {
  const ch06::SaturatingPowerLaw law{1.69, 406.4, 0.34};
  INPUTS(law, 1e30, 1.69);
  const ch06::Extrapolation x = ch06::extrapolate(law, {1e30}, {1.69});
  REQUIRE_MESSAGE(x.predicted.size() == 1, "extrapolate at one size must predict one loss, got " << format_values(x.predicted));
  // 406.4 / 1e30^0.34 = 406.4 * 10^-10.2, about 2.6e-8 above E.
  CHECK_MESSAGE(near(x.predicted.at(0), 1.69 + 406.4 * std::pow(10.0, -10.2), 1e-12),
                said("extrapolate with E = 1.69, A = 406.4, alpha = 0.34 at N = 1e30 must predict just above E: 1.69 + "
                     "406.4 * 10^-10.2",
                     suspect(as_row(x.predicted), {{kSignFlipped, as_row({1.69 + 406.4 * std::pow(10.0, 10.2)})}}, 1e-6)));
}

TEST_CASE("6.3 empty or mismatched lists, bad sizes, losses or laws throw") {
  const ch06::SaturatingPowerLaw law{1.0, 2.0, 0.5};
  constexpr char kLaw[] = "the law needs finite e >= 0, a >= 0 and alpha >= 0";
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::extrapolate, law, ch06::Numbers{}, ch06::Numbers{});
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::extrapolate, law, ch06::Numbers{1, 2}, ch06::Numbers{1});
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch06::extrapolate, law, ch06::Numbers{1}, ch06::Numbers{1, 2});
  for (double bad : {0.0, -1e-300, -1e300, kNaN, kInf}) {
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::extrapolate, law, ch06::Numbers{1, bad}, ch06::Numbers{2, 2});
    CHECK_THROWS_CALL(ValueError, kThrowsValue, ch06::extrapolate, law, ch06::Numbers{1, 4}, ch06::Numbers{bad, 2});
  }
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{kNaN, 2.0, 0.5}, ch06::Numbers{1}, ch06::Numbers{1});
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{1.0, 2.0, -0.5}, ch06::Numbers{1}, ch06::Numbers{1});
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{-1e-9, 2.0, 0.5}, ch06::Numbers{1}, ch06::Numbers{1});
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{1.0, -2.0, 0.5}, ch06::Numbers{1}, ch06::Numbers{1});
}

TEST_CASE("6.3 worst is the largest relative error in absolute value, also when it is negative") {
  // E = 1, A = 8, alpha = 1/3 at N = 1, 8: predictions 9, 5 against losses 9, 10: errors 0, -0.5.
  const ch06::SaturatingPowerLaw law{1.0, 8.0, 1.0 / 3.0};
  INPUTS(law, ch06::Numbers{1, 8}, ch06::Numbers{9, 10});
  const ch06::Extrapolation x = ch06::extrapolate(law, {1, 8}, {9, 10});
  CHECK_MESSAGE(near(x.worst, 0.5, 1e-12),
                said("extrapolate with E = 1, A = 8, alpha = 1/3 at N = 1, 8 against losses 9, 10 has relative errors 0 and "
                     "-0.5, so worst must be 0.5 (the largest |relative error|), got " + format_number(x.worst),
                     suspect(x.worst, {{kWorstSigned, 0.0}})));
}

TEST_CASE("6.3 a law with a zero parameter is valid") {
  // e = 0, a = 0 and alpha = 0 are all allowed (>= 0): L = 0 + 2 N^-0.5, L = 1 + 0, L = 1 + 2 N^0 = 3.
  const struct {
    ch06::SaturatingPowerLaw law;
    double predicted;  // at N = 4
  } laws[] = {{{0.0, 2.0, 0.5}, 1.0}, {{1.0, 0.0, 0.5}, 1.0}, {{1.0, 2.0, 0.0}, 3.0}};
  for (const auto& c : laws) {
    INPUTS(c.law, 4, 2);
    ch06::Extrapolation x;
    const std::string thrown = scalebook::testing::thrown_by([&] { x = ch06::extrapolate(c.law, {4}, {2}); });
    CHECK_MESSAGE(thrown.empty(), said("extrapolate with the law " + show(c.law) + " at N = 4 threw \"" + thrown +
                                           "\": e, a and alpha may be 0 (the contract says >= 0)",
                                       rejected(thrown, kZeroRejected)));
    if (!thrown.empty()) continue;
    CHECK_MESSAGE(near(as_row(x.predicted), as_row({c.predicted}), 1e-12),
                  "extrapolate with the law " << show(c.law) << " at N = 4 must predict " << format_number(c.predicted));
  }
}

TEST_CASE("6.3 sizes of extreme magnitude and a bad first or last point") {
  // L = 1 + 2 N^-0.5 at N = 1e-300 and 1e300: 1 + 2e150 and 1 + 2e-150 (= 1 in doubles).
  const ch06::SaturatingPowerLaw law{1.0, 2.0, 0.5};
  INPUTS(law, ch06::Numbers{1e-300, 1e300}, ch06::Numbers{2e150, 1});
  ch06::Extrapolation x;
  const std::string thrown = scalebook::testing::thrown_by([&] { x = ch06::extrapolate(law, {1e-300, 1e300}, {2e150, 1}); });
  REQUIRE_MESSAGE(thrown.empty(), said("extrapolate at N = 1e-300 and 1e300 threw \"" + thrown + "\": every positive size is "
                                       "valid, however small or large", rejected(thrown, kTinyRejected)));
  CHECK_MESSAGE(near(as_row(x.predicted), as_row({1 + 2e150, 1}), 1e-12),
                "extrapolate with E = 1, A = 2, alpha = 0.5 at N = 1e-300 and 1e300 must predict 2e150 and 1");
  CHECK_MESSAGE(near(as_row(x.relative_error), as_row({0, 0}), 1e-12),
                "extrapolate with E = 1, A = 2, alpha = 0.5 at N = 1e-300 and 1e300 against losses 2e150 and 1 must "
                "give relative errors 0 and 0");
  // L = 0 + 2 N^-0.5 at N = 1e300: a loss of 2e-150, positive like any other.
  const ch06::SaturatingPowerLaw zero_e{0.0, 2.0, 0.5};
  INPUTS(zero_e, 1e300, 2e-150);
  const std::string tiny = scalebook::testing::thrown_by([&] { x = ch06::extrapolate(zero_e, {1e300}, {2e-150}); });
  CHECK_MESSAGE(tiny.empty(), said("extrapolate with E = 0, A = 2, alpha = 0.5 at N = 1e300 against the loss 2e-150 threw \"" +
                                       tiny + "\": every positive loss is valid, however small",
                                   rejected(tiny, kTinyRejected)));
  if (tiny.empty()) {
    CHECK_MESSAGE(near(as_row(x.relative_error), as_row({0}), 1e-12),
                  "extrapolate with E = 0, A = 2, alpha = 0.5 at N = 1e300 must predict the loss 2e-150 exactly: relative "
                  "error 0");
  }
  check_bad_ends("extrapolate", [](const std::vector<double>& n, const std::vector<double>& l) {
    ch06::extrapolate({1.0, 2.0, 0.5}, n, l);  // E = 1, A = 2, alpha = 0.5
  });
  for (double bad : {kNaN, kInf, -kInf}) {
    constexpr char kLaw[] = "the law needs finite e, a and alpha";
    CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{bad, 2.0, 0.5}, ch06::Numbers{1}, ch06::Numbers{1});
    CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{1.0, bad, 0.5}, ch06::Numbers{1}, ch06::Numbers{1});
    CHECK_THROWS_CALL(ValueError, kLaw, ch06::extrapolate, ch06::SaturatingPowerLaw{1.0, 2.0, bad}, ch06::Numbers{1}, ch06::Numbers{1});
  }
}

// ---- 6.4 compute_optimal --------------------------------------------------------------------

TEST_CASE("6.4 a symmetric law splits the budget evenly") {
  // alpha = beta = 1/2, a = b = 1, e = 0: N = D = sqrt(C / 6) = 10 for C = 600, L = 2 / sqrt(10).
  const ch06::ComputeLaw law{0.0, 1.0, 1.0, 0.5, 0.5};
  INPUTS(law, 600.0);
  const ch06::Allocation x = ch06::compute_optimal(law, 600.0);
  const Matrix got = as_row({x.params, x.tokens, x.loss});
  CHECK_MESSAGE(near(got, as_row({10, 10, 2 / std::sqrt(10.0)}), 1e-12),
                said("compute_optimal({e 0, a 1, b 1, alpha 0.5, beta 0.5}, 600) must give N = D = sqrt(600 / 6) = 10 "
                     "and L = 2 / sqrt(10); (N, D, L) below, index 0 N, 1 D, 2 L",
                     suspect(got, {{kTwoND, as_row({std::sqrt(300.0), std::sqrt(300.0), 2 / std::pow(300.0, 0.25)})},
                                   {kNoSix, as_row({std::sqrt(600.0), std::sqrt(600.0), 2 / std::pow(600.0, 0.25)})}})));
}

TEST_CASE("6.4 the closed form agrees with a brute-force minimisation for Hoffmann et al.'s constants") {
  for (double compute : {1e18, 1e21, 5.76e23, 1e26}) {
    INPUTS(kChinchilla, compute);
    const ch06::Allocation x = ch06::compute_optimal(kChinchilla, compute);
    const double n = brute_force_params(kChinchilla, compute), d = compute / (6.0 * n);
    const double n2 = brute_force_params(kChinchilla, 3.0 * compute), d2 = compute / (2.0 * n2);  // C = 2ND
    const double n1 = brute_force_params(kChinchilla, 6.0 * compute), d1 = compute / n1;  // C = ND
    const Matrix got = as_row({x.params, x.tokens, x.loss});
    const std::string named = suspect(got, {{kTwoND, as_row({n2, d2, law_loss(kChinchilla, n2, d2)})},
                                            {kNoSix, as_row({n1, d1, law_loss(kChinchilla, n1, d1)})}}, 1e-6);
    // Which of N, D, L differs, and by what factor: a budget spent right with N off shows as D off
    // by the inverse factor; all three off together points at the budget (6 N D = C) itself.
    const std::string factors = " (N " + format_number(x.params / n) + " times the search's, D " +
                                format_number(x.tokens / d) + " times, L " + format_number(x.loss / law_loss(kChinchilla, n, d)) +
                                " times)";
    CHECK_MESSAGE(near(got, as_row({n, d, law_loss(kChinchilla, n, d)}), 1e-6),
                  said("compute_optimal with Hoffmann et al.'s law at C = " + format_number(compute) + " differs from a "
                       "brute-force search for the best (N, D, L) with 6 N D = C" + factors, named));
    const double flops_per = compute / (x.params * x.tokens);  // 6 when the budget is spent as C = 6ND
    CHECK_MESSAGE(near(flops_per, 6.0, 1e-12),
                  said("compute_optimal at C = " + format_number(compute) + " gave N D = " + format_number(x.params * x.tokens) +
                           ", which spends the budget at " + format_number(flops_per) +
                           " FLOPs per parameter and token; C = 6 N D allows 6",
                       suspect(flops_per, {{kTwoND, 2.0}, {kNoSix, 1.0}}, 1e-6)));
  }
}

TEST_CASE("6.4 an uneven law follows the closed form to 1e-12") {
  // Hoffmann et al.'s constants at C = 1e21: G = (alpha a / beta b)^(1 / (alpha + beta)) is no round
  // number, and N_opt = G (C / 6)^(beta / (alpha + beta)), D_opt = (C / 6) / N_opt; here in long double.
  const long double alpha = 0.34L, beta = 0.28L, nd = 1e21L / 6;
  const long double g = std::pow(alpha * 406.4L / (beta * 410.7L), 1 / (alpha + beta));
  const double n = static_cast<double>(g * std::pow(nd, beta / (alpha + beta))), d = static_cast<double>(nd / (g * std::pow(nd, beta / (alpha + beta))));
  INPUTS(kChinchilla, 1e21);
  const ch06::Allocation x = ch06::compute_optimal(kChinchilla, 1e21);
  const double off_n = std::abs(x.params / n - 1), off_d = std::abs(x.tokens / d - 1);
  CHECK_MESSAGE((off_n <= 1e-12 && off_d <= 1e-12),
                "compute_optimal with Hoffmann et al.'s law at C = 1e21 must give N_opt = " << format_number(n) << " and D_opt = "
                    << format_number(d) << " to 1e-12 relative (the closed form, every step in double), got N "
                    << format_number(x.params) << " (" << format_number(off_n) << " relative off) and D " << format_number(x.tokens)
                    << " (" << format_number(off_d) << " off)");
}

TEST_CASE("6.4 a law's weights may be any finite positive numbers, however large") {
  // a = b = 1e300, alpha = beta = 1/2, e = 0, C = 600: G = 1, N = D = sqrt(100) = 10, and
  // L = 1e300 / sqrt(10) + 1e300 / sqrt(10). 1e300 is finite: a weight read into a float is +infinity.
  const ch06::ComputeLaw law{0.0, 1e300, 1e300, 0.5, 0.5};
  INPUTS(law, 600.0);
  const ch06::Allocation x = ch06::compute_optimal(law, 600.0);
  const double loss = 2e300 / std::sqrt(10.0);
  CHECK_MESSAGE((std::abs(x.params - 10) <= 1e-12 * 10 && std::abs(x.tokens - 10) <= 1e-12 * 10 && std::abs(x.loss / loss - 1) <= 1e-12),
                "compute_optimal({e 0, a 1e300, b 1e300, alpha 0.5, beta 0.5}, 600) must give N = D = 10 and L = 2e300 / sqrt(10) = "
                    << format_number(loss) << ", got N " << format_number(x.params) << ", D " << format_number(x.tokens) << ", L "
                    << format_number(x.loss));
}

TEST_CASE("6.4 parameters grow as C to the beta over alpha plus beta") {
  INPUTS(kChinchilla, 1e20, 1e22);
  const ch06::Allocation small = ch06::compute_optimal(kChinchilla, 1e20), large = ch06::compute_optimal(kChinchilla, 1e22);
  // N_opt ~ C^(0.28 / 0.62), D_opt ~ C^(0.34 / 0.62): a factor 100 in C
  CHECK_MESSAGE(near(large.params / small.params, std::pow(100.0, 0.28 / 0.62), 1e-10),
                "100 times the compute must multiply N_opt by 100^(beta / (alpha + beta)) = 100^(0.28 / 0.62), got a factor "
                    << format_number(large.params / small.params));
  CHECK_MESSAGE(near(large.tokens / small.tokens, std::pow(100.0, 0.34 / 0.62), 1e-10),
                "100 times the compute must multiply D_opt by 100^(alpha / (alpha + beta)) = 100^(0.34 / 0.62), got a factor "
                    << format_number(large.tokens / small.tokens));
  CHECK_MESSAGE(large.loss < small.loss, "100 times the compute must give a lower loss, got " << format_number(small.loss)
                                                                                               << " then " << format_number(large.loss));
}

TEST_CASE("6.4 a budget or law out of range throws ValueError") {
  constexpr char kBudget[] = "compute must be positive and finite";
  constexpr char kLaw[] = "the law needs finite e >= 0 and a, b, alpha, beta above 0";
  for (double bad : {0.0, -1e-300, -1e300, kNaN, kInf}) CHECK_THROWS_CALL(ValueError, kBudget, ch06::compute_optimal, kChinchilla, bad);
  ch06::ComputeLaw law = kChinchilla;
  law.a = 0.0;
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::compute_optimal, law, 1e20);
  law = kChinchilla;
  law.beta = -0.28;
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::compute_optimal, law, 1e20);
  law = kChinchilla;
  law.e = -1e-9;
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::compute_optimal, law, 1e20);
  law = kChinchilla;
  law.b = kNaN;
  CHECK_THROWS_CALL(ValueError, kLaw, ch06::compute_optimal, law, 1e20);
}

TEST_CASE("6.4 a zero or non-finite parameter throws ValueError, a tiny positive one does not") {
  const char* names[5] = {"e", "a", "b", "alpha", "beta"};
  for (int p = 0; p < 5; ++p) {
    for (double bad : {kNaN, kInf, -kInf, 0.0}) {
      if (p == 0 && bad == 0.0) continue;  // e = 0 is allowed
      ch06::ComputeLaw law = kChinchilla;
      double* fields[5] = {&law.e, &law.a, &law.b, &law.alpha, &law.beta};
      *fields[p] = bad;
      CHECK_THROWS_CALL(ValueError,
                        std::string("the law with ") + names[p] + " = " + format_number(bad) +
                            " must throw ValueError: e must be >= 0 and finite; a, b, alpha and beta must be > 0 "
                            "(0 itself is out) and finite",
                        ch06::compute_optimal, law, 1e20);
    }
    ch06::ComputeLaw law = kChinchilla;
    double* fields[5] = {&law.e, &law.a, &law.b, &law.alpha, &law.beta};
    *fields[p] = p == 0 ? 0.0 : 1e-12;
    INPUTS(law, 1e20);
    ch06::Allocation x;
    const std::string thrown = scalebook::testing::thrown_by([&] { x = ch06::compute_optimal(law, 1e20); });
    CHECK_MESSAGE(thrown.empty(), said("compute_optimal with Hoffmann et al.'s law but " + std::string(names[p]) + " = " +
                                           format_number(*fields[p]) + " threw \"" + thrown + "\": " +
                                           (p == 0 ? "e may be 0 (the contract says >= 0)" : "every positive value is valid, however small"),
                                       rejected(thrown, p == 0 ? kZeroRejected : kTinyRejected)));
  }
  for (double tiny : {1e-300, 1e-12}) {
    INPUTS(kChinchilla, tiny);
    ch06::Allocation x;
    const std::string thrown = scalebook::testing::thrown_by([&] { x = ch06::compute_optimal(kChinchilla, tiny); });
    CHECK_MESSAGE(thrown.empty(), said("compute_optimal with a budget of " + format_number(tiny) + " FLOPs threw \"" + thrown +
                                           "\": every positive budget is valid, however small",
                                       rejected(thrown, kTinyRejected)));
    if (thrown.empty()) {
      CHECK_MESSAGE(near(x.params * x.tokens, tiny / 6.0, 1e-12),
                    "compute_optimal with a budget of " << format_number(tiny) << " FLOPs must spend it as 6 N D = C, "
                    "got N D = " << format_number(x.params * x.tokens));
    }
  }
}

// ---- 6.5 shuffle_train_labels ---------------------------------------------------------------

TEST_CASE("6.5 the training labels follow the documented shuffle and the test labels stay") {
  const std::vector<int> train = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<int> test = {3, 1, 4, 1, 5, 9, 2, 6};
  INPUTS(train, test, 65);
  const ch06::LabelSplit split = ch06::shuffle_train_labels(train, test, 65);
  CHECK_MESSAGE(same_values(split.test, test),
                said("shuffle_train_labels(train, test, 65) must return the test labels as they are",
                     test_shuffle_suspect(split.test, train, test, 65)));
  CHECK_MESSAGE(same_values(split.train, fisher_yates(train, 65)),
                said("shuffle_train_labels(train, test, 65) must shuffle the training labels as the contract's Fisher-Yates "
                     "with Rng(65) does (from i = n - 1 down to 1, j = rng.next_u64() % (i + 1))",
                     shuffle_suspect(split.train, train, 65)));
  std::vector<int> sorted = split.train, original = train;
  std::sort(sorted.begin(), sorted.end());
  std::sort(original.begin(), original.end());
  CHECK_MESSAGE(same_values(sorted, original), "a shuffle keeps every label: the class counts must stay the same (both lists sorted below)");
}

TEST_CASE("6.5 one training label and no test labels") {
  INPUTS(ch06::Labels{7}, ch06::Labels{}, 1);
  const ch06::LabelSplit split = ch06::shuffle_train_labels({7}, {}, 1);
  CHECK_MESSAGE(same_values(split.train, std::vector<int>{7}), "shuffle_train_labels({7}, {}, 1) must keep the one training label");
  CHECK_MESSAGE(split.test.empty(), "shuffle_train_labels({7}, {}, 1) must return no test labels, got " << format_values(split.test));
}

TEST_CASE("6.5 another seed gives another order, and the test labels still stay") {
  std::vector<int> train(100), test(30);
  for (int i = 0; i < 100; ++i) train[static_cast<std::size_t>(i)] = i % 10;
  for (int i = 0; i < 30; ++i) test[static_cast<std::size_t>(i)] = (7 * i) % 10;
  INPUTS(train, test);
  const ch06::LabelSplit a = ch06::shuffle_train_labels(train, test, 1), b = ch06::shuffle_train_labels(train, test, 2);
  CHECK_MESSAGE(same_values(a.train, fisher_yates(train, 1)),
                said("shuffle_train_labels with seed 1 did not shuffle 100 labels as Fisher-Yates with Rng(1) does",
                     shuffle_suspect(a.train, train, 1)));
  CHECK_MESSAGE(same_values(b.train, fisher_yates(train, 2)),
                said("shuffle_train_labels with seed 2 did not shuffle 100 labels as Fisher-Yates with Rng(2) does",
                     shuffle_suspect(b.train, train, 2)));
  CHECK_MESSAGE(same_values(a.test, test), said("shuffle_train_labels with seed 1 must return the test labels as they are",
                                                test_shuffle_suspect(a.test, train, test, 1)));
  CHECK_MESSAGE(same_values(b.test, test), said("shuffle_train_labels with seed 2 must return the test labels as they are",
                                                test_shuffle_suspect(b.test, train, test, 2)));
}

TEST_CASE("6.5 no training labels or a negative label throws") {
  constexpr char kClass[] = "every label, train and test, must be 0 or above";
  CHECK_THROWS_CALL(ShapeError, "train must not be empty", ch06::shuffle_train_labels, ch06::Labels{}, ch06::Labels{1}, 1);
  CHECK_THROWS_CALL(ValueError, kClass, ch06::shuffle_train_labels, ch06::Labels{1, -1}, ch06::Labels{1}, 1);
  CHECK_THROWS_CALL(ValueError, kClass, ch06::shuffle_train_labels, ch06::Labels{1, INT_MIN}, ch06::Labels{1}, 1);
  CHECK_THROWS_CALL(ValueError, kClass, ch06::shuffle_train_labels, ch06::Labels{1, 2}, ch06::Labels{0, -1}, 1);
  const bool checks_last = testing::starts_with(testing::thrown_message<ValueError>([] { ch06::shuffle_train_labels({1, -1}, {1}, 1); }),
                                                "shuffle_train_labels: ");
  const Why first(kClass, checks_last ? std::optional<Named>(kFirstSkipped) : std::nullopt);
  CHECK_THROWS_CALL(ValueError, first, ch06::shuffle_train_labels, ch06::Labels{-1, 2}, ch06::Labels{1}, 1);
  CHECK_THROWS_CALL(ValueError, first, ch06::shuffle_train_labels, ch06::Labels{1, 2}, ch06::Labels{-1, 0}, 1);
}

// ---- 6.6 accuracy_report --------------------------------------------------------------------

TEST_CASE("6.6 hand-worked accuracies and cross-entropies") {
  // Train: rows predict 0, 1, 2; labels 0, 1, 0: accuracy 2/3. Test: rows predict 1, 1; labels
  // 1, 2: accuracy 1/2.
  Matrix train(3, 3), test(2, 3);
  train << 2, 0, 0,  //
      0, 1, 0,       //
      0, 0, 3;
  test << 0, std::log(2.0), 0,  //
      0, std::log(3.0), 0;
  const std::vector<int> train_y = {0, 1, 0}, test_y = {1, 2};
  INPUTS(train, train_y, test, test_y);
  const ch06::AccuracyReport r = ch06::accuracy_report(train, train_y, test, test_y);
  // -ln softmax: ln(e^2 + 2) - 2, ln(e + 2) - 1, ln(e^3 + 2) - 0; ln 4 - ln 2, ln 5 - 0
  const double train_loss = (std::log(std::exp(2.0) + 2) - 2 + std::log(std::exp(1.0) + 2) - 1 +
                             std::log(std::exp(3.0) + 2)) / 3;
  const double test_loss = (std::log(4.0) - std::log(2.0) + std::log(5.0)) / 2;
  const Matrix got = report_row(r);
  CHECK_MESSAGE(near(got, as_row({2.0 / 3, 0.5, train_loss, test_loss}), 1e-12),
                said("accuracy_report of train rows (2, 0, 0), (0, 1, 0), (0, 0, 3) labelled 0, 1, 0 and test rows (0, ln 2, 0), "
                     "(0, ln 3, 0) labelled 1, 2 must give train accuracy 2/3, test accuracy 1/2 and the mean -ln softmax "
                     "losses (index 0 train accuracy, 1 test accuracy, 2 train loss, 3 test loss)",
                     report_mistakes(r, train, train_y, test, test_y)));
}

TEST_CASE("6.6 a tie goes to the first largest logit") {
  Matrix tie(2, 3);
  tie << 1, 1, 0,  //
      0, 5, 5;
  // 20 classes tied in one row: the first of them is the prediction, whatever sorting would do.
  Matrix wide = Matrix::Constant(1, 20, 2.0);
  wide(0, 0) = 1.0;
  const std::vector<int> train_y = {0, 1}, test_y = {1, 2};
  INPUTS(tie, train_y, test_y, wide);
  const ch06::AccuracyReport r = ch06::accuracy_report(tie, train_y, tie, test_y);
  const std::string named = report_mistakes(r, tie, train_y, tie, test_y);
  CHECK_MESSAGE(r.train_accuracy == 1.0, said("accuracy_report of the rows (1, 1, 0) and (0, 5, 5) labelled 0 and 1: a tie goes to "
                                              "the first largest logit, so both rows are right; train accuracy " +
                                                  format_number(r.train_accuracy), named));
  CHECK_MESSAGE(r.test_accuracy == 0.0, said("accuracy_report of the same rows labelled 1 and 2: a tie goes to the first largest "
                                             "logit, so neither is right; test accuracy " + format_number(r.test_accuracy), named));
  // ln(2 e + 1) - 1 = ln(2 + e^-1) and ln(1 + 2 e^5) - 5 = ln(2 + e^-5)
  CHECK_MESSAGE(near(r.train_loss, (std::log(2.0 + std::exp(-1.0)) + std::log(2.0 + std::exp(-5.0))) / 2, 1e-12),
                said("accuracy_report's train loss on the tied rows must be (ln(2 + e^-1) + ln(2 + e^-5)) / 2, got " +
                         format_number(r.train_loss), named));
  const ch06::AccuracyReport w = ch06::accuracy_report(wide, {1}, wide, {2});
  CHECK_MESSAGE((w.train_accuracy == 1.0 && w.test_accuracy == 0.0),
                said("accuracy_report of one row of 20 logits, 19 of them tied at 2 from column 1 on, must predict column 1: "
                     "train accuracy (label 1) 1 and test accuracy (label 2) 0, got " + format_number(w.train_accuracy) +
                     " and " + format_number(w.test_accuracy),
                     report_mistakes(w, wide, {1}, wide, {2})));
}

TEST_CASE("6.6 logits of magnitude 1000 and rows far apart give finite cross-entropy") {
  Matrix big(3, 3);
  big << 1000, 0, -1000,  //
      -1000, 1000, 999,   //
      -1000, -1001, -1002;  // a row whose largest logit is -1000: far below the others
  const std::vector<int> train_y = {1, 2, 0}, test_y = {0, 1, 0};
  INPUTS(big, train_y, test_y);
  const ch06::AccuracyReport r = ch06::accuracy_report(big, train_y, big, test_y);
  // row 0, label 1: ln(e^1000 + 1 + e^-1000) - 0 = 1000; row 1, label 2: 1 + ln(1 + e^-1);
  // row 2, label 0: ln(1 + e^-1 + e^-2), the same as for the logits (0, -1, -2).
  const double row0 = 1000.0, row1 = 1.0 + std::log1p(std::exp(-1.0)), row2 = std::log(1.0 + std::exp(-1.0) + std::exp(-2.0));
  const std::string named = report_mistakes(r, big, train_y, big, test_y);
  CHECK_MESSAGE(near(r.train_loss, (row0 + row1 + row2) / 3, 1e-12),
                said("accuracy_report's train loss on logits of magnitude 1000 must be " + format_number((row0 + row1 + row2) / 3) +
                         ", got " + format_number(r.train_loss) + ": -ln softmax = ln sum exp(z - max) + max - z_y, max "
                         "taken row by row",
                     named));
  CHECK_MESSAGE(near(r.train_accuracy, 1.0 / 3, 1e-15), said("accuracy_report: of the training rows only row 2 predicts its label, "
                                                             "train accuracy 1/3, got " + format_number(r.train_accuracy), named));
  // test: row 0 label 0: ~0; row 1 label 1: ln(1 + e^-1); row 2 label 0 as above
  CHECK_MESSAGE(near(r.test_loss, (std::log1p(std::exp(-1.0)) + row2) / 3, 1e-12),
                said("accuracy_report's test loss on logits of magnitude 1000 must be (ln(1 + e^-1) + ln(1 + e^-1 + e^-2)) / 3, got " +
                         format_number(r.test_loss), named));
  CHECK_MESSAGE(r.test_accuracy == 1.0, said("accuracy_report: every test row predicts its label, test accuracy 1, got " +
                                                 format_number(r.test_accuracy), named));
}

TEST_CASE("6.6 any finite logit counts, however large") {
  // The row (1e300, 0): with label 0 the cross-entropy is ln(1 + e^-1e300) + 1e300 - 1e300 = 0 and
  // the prediction right; with label 1 it is 1e300 - 0 = 1e300 and the prediction wrong. A row's
  // maximum kept in a float is +infinity, and the loss NaN.
  const Matrix logits = (Matrix(1, 2) << 1e300, 0.0).finished();
  const std::vector<int> train_y = {0}, test_y = {1};
  INPUTS(logits, train_y, test_y);
  const ch06::AccuracyReport r = ch06::accuracy_report(logits, train_y, logits, test_y);
  const std::string named = report_mistakes(r, logits, train_y, logits, test_y);
  CHECK_MESSAGE((r.train_loss == 0.0 && r.train_accuracy == 1.0),
                said("accuracy_report on the logits (1e300, 0) with label 0 must give loss 0 and accuracy 1: every finite "
                     "logit counts, got loss " + format_number(r.train_loss) + " and accuracy " + format_number(r.train_accuracy),
                     named));
  CHECK_MESSAGE((std::abs(r.test_loss / 1e300 - 1) <= 1e-12 && r.test_accuracy == 0.0),
                said("accuracy_report on the logits (1e300, 0) with label 1 must give loss 1e300 and accuracy 0, got loss " +
                         format_number(r.test_loss) + " and accuracy " + format_number(r.test_accuracy),
                     named));
}

TEST_CASE("6.6 empty sets, mismatched rows or classes and bad labels or logits throw") {
  const Matrix x = Matrix::Zero(3, 4);
  const std::vector<int> y = {0, 1, 3};
  constexpr char kRows[] = "each logits matrix must be non-empty, with one row per label, and both must have the same classes";
  constexpr char kLabels[] = "every label must be a class 0 .. classes - 1";
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, Matrix(0, 4), ch06::Labels{}, x, y);
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, y, Matrix(0, 4), ch06::Labels{});
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, Matrix(3, 0), y, x, y);
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, ch06::Labels{0, 1}, x, y);        // fewer labels
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, ch06::Labels{0, 1, 2, 3}, x, y);  // more labels
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, y, Matrix(Matrix::Zero(3, 5)), y);
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, y, Matrix(Matrix::Zero(3, 3)), ch06::Labels{0, 1, 2});
  // test logits (4, 3) hold 12 entries as (3, 4) does: only the columns tell the classes apart.
  CHECK_THROWS_CALL(ShapeError, kRows, ch06::accuracy_report, x, y, Matrix(Matrix::Zero(4, 3)), ch06::Labels{0, 1, 2, 0});
  CHECK_THROWS_CALL(ValueError, kLabels, ch06::accuracy_report, x, ch06::Labels{0, 1, 4}, x, y);      // = classes
  CHECK_THROWS_CALL(ValueError, kLabels, ch06::accuracy_report, x, y, x, ch06::Labels{0, -1, 2});
  CHECK_THROWS_CALL(ValueError, kLabels, ch06::accuracy_report, x, y, x, ch06::Labels{0, INT_MIN, 2});
  const bool checks_middle = testing::starts_with(
      testing::thrown_message<ValueError>([&] { ch06::accuracy_report(x, {0, 4, 3}, x, y); }), "accuracy_report: ");
  CHECK_THROWS_CALL(ValueError, Why(kLabels, checks_middle ? std::optional<Named>(kFirstSkipped) : std::nullopt),
                    ch06::accuracy_report, x, ch06::Labels{4, 1, 3}, x, y);
  CHECK_THROWS_CALL(ValueError, Why(kLabels, checks_middle ? std::optional<Named>(kFirstSkipped) : std::nullopt),
                    ch06::accuracy_report, x, y, x, ch06::Labels{-1, 1, 3});
  Matrix bad = x;
  bad(2, 3) = kNaN;
  CHECK_THROWS_CALL(ValueError, "NaN or infinity in the logits must throw ValueError", ch06::accuracy_report, bad, y, x, y);
  bad(2, 3) = -kInf;
  CHECK_THROWS_CALL(ValueError, "NaN or infinity in the logits must throw ValueError", ch06::accuracy_report, x, y, bad, y);
}

}  // TEST_SUITE
