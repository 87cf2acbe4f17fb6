// Chapter 2 checks — small models on scarce data.
//
// Every expected value is derived here: hand-worked layers, finite differences of an explicit
// loss for the backward pass, RMSprop's formula evaluated in the check, the K-fold rule written
// as a membership test, the smoothing recurrence unrolled. A failure names a known mistake only
// when the output is the one that mistake gives on the same input (the check computes it by
// applying the mistake to its own computation); otherwise the message states the rule broken.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <utility>
#include <limits>
#include <string>
#include <vector>

#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"
#include "small_models.hpp"

using namespace scalebook;
using scalebook::testing::format_number;
using scalebook::testing::format_values;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::thrown_by;
using scalebook::testing::same_values;
using scalebook::testing::suspect;
using scalebook::testing::suspect_exact;
using scalebook::testing::suspect_values;
using scalebook::testing::Named;
using scalebook::testing::Parts;
using scalebook::testing::show;
using scalebook::testing::Why;
namespace ch02 = scalebook::ch02;

// The chapter's structs as values.
namespace doctest {
template <>
struct StringMaker<ch02::DenseGradients> {
  static String convert(const ch02::DenseGradients& g) {
    return ("DenseGradients{dw " + show(g.dw) + ", db " + show(g.db) + ", dx " + show(g.dx) + "}").c_str();
  }
};
template <>
struct StringMaker<ch02::Fold> {
  static String convert(const ch02::Fold& f) {
    return ("Fold{train " + format_values(f.train) + ", validation " + format_values(f.validation) + "}").c_str();
  }
};
}  // namespace doctest

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kBiasMissing{"dense_bias_missing", "the bias not added to every row"};
constexpr Named kReluMissing{"relu_missing", "ReLU not applied: negative outputs kept"};
constexpr Named kReluBeforeBias{"relu_before_bias", "ReLU applied before the bias was added: relu(x w) + b instead of relu(x w + b)"};
constexpr Named kReluWrongSide{"relu_gradient_wrong_side", "ReLU's gradient passed where z <= 0 and stopped where z > 0"};
constexpr Named kReluAtZero{"relu_gradient_at_zero", "ReLU's gradient passed at z = 0 exactly: it must be 0 there, as in Keras and PyTorch"};
constexpr Named kReluThreshold{"relu_gradient_threshold", "ReLU's gradient cut below a small threshold instead of at 0: it passes wherever z > 0, however small"};
constexpr Named kReluIgnored{"relu_gradient_ignored", "ReLU's gradient ignored: grad_out passed on where z <= 0 too"};
constexpr Named kBiasMean{"bias_gradient_mean", "the bias gradient averaged over the rows instead of summed"};
constexpr Named kNoSqrt{"rmsprop_no_sqrt", "RMSprop divides by v + eps instead of sqrt(v + eps)"};
constexpr Named kEpsOutside{"rmsprop_eps_outside", "epsilon outside the square root: sqrt(v) + eps instead of sqrt(v + eps) (Keras's form)"};
constexpr Named kRhoSwapped{"rmsprop_rho_swapped", "rho and 1 - rho swapped in the running mean square"};
constexpr Named kOldVelocity{"rmsprop_old_velocity", "the step divided by the old velocity, before updating it"};
constexpr Named kRhoZeroRejected{"rho_zero_rejected", "rho = 0 rejected: 0 <= rho < 1 admits it (no history: v = g^2)"};
constexpr Named kHyperThreshold{"hyperparameter_threshold", "a tiny positive learning_rate or epsilon rejected: every value above 0 is valid, however small"};
constexpr Named kOverlap{"folds_overlap", "each validation fold takes one row too many, [i s, (i + 1) s] instead of [i s, (i + 1) s): neighbouring folds overlap"};
constexpr Named kRemainder{"last_fold_takes_remainder", "the last fold also validates the n - k floor(n / k) remainder rows: DLwP's folds all have floor(n / k) rows"};
constexpr Named kRemainderDropped{"remainder_dropped", "the remainder rows dropped: the last n - k floor(n / k) rows must train in every fold"};
constexpr Named kCeilSize{"fold_size_rounded_up", "folds of ceil(n / k) rows instead of floor(n / k)"};
constexpr Named kFactorSwapped{"smoothing_factor_swapped", "factor and 1 - factor swapped: the previous smoothed value gets the weight factor"};
constexpr Named kStartZero{"smoothing_starts_at_zero", "the smoothed curve starts from 0 instead of from the first value"};
constexpr Named kSmoothFloat{"smoothing_in_float", "the smoothed values kept in a float (about 7 significant digits)"};
constexpr Named kLastMinimum{"best_epoch_last_tie", "on a tie the last smallest value wins instead of the first"};
constexpr Named kOneBased{"best_epoch_one_based", "the epoch counted from 1: the contract's index is 0-based"};
constexpr Named kLargest{"best_epoch_largest", "the index of the largest value instead of the smallest"};

constexpr char kThrowsShape[] = "bad shapes must throw ShapeError, with the function's name first";
constexpr char kThrowsValue[] = "NaN, infinity or out-of-range values must throw ValueError, with the function's name first";

using scalebook::testing::from_rows;
using scalebook::testing::row;



// The loss whose gradient the backward pass computes: L = sum over (i, j) of G(i, j) y(i, j),
// with y = relu?(x w + b) written out entry by entry; so dL/dy = G.
double probe_loss(const Matrix& x, const Matrix& w, const RowVector& b, bool relu, const Matrix& g) {
  double loss = 0.0;
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < w.cols(); ++j) {
      double z = b(j);
      for (Index c = 0; c < x.cols(); ++c) z += x(i, c) * w(c, j);
      loss += g(i, j) * (relu ? std::max(z, 0.0) : z);
    }
  }
  return loss;
}

// Central differences of probe_loss with respect to every entry of `which` (0: x, 1: w, 2: b).
Matrix numeric_gradient(Matrix x, Matrix w, RowVector b, bool relu, const Matrix& g, int which) {
  const double h = 1e-6;
  Matrix* m = which == 0 ? &x : which == 1 ? &w : nullptr;
  const Index rows = m ? m->rows() : 1, cols = m ? m->cols() : b.cols();
  Matrix grad(rows, cols);
  for (Index i = 0; i < rows; ++i) {
    for (Index j = 0; j < cols; ++j) {
      double& entry = m ? (*m)(i, j) : b(j);
      const double saved = entry;
      entry = saved + h;
      const double up = probe_loss(x, w, b, relu, g);
      entry = saved - h;
      const double down = probe_loss(x, w, b, relu, g);
      entry = saved;
      grad(i, j) = (up - down) / (2 * h);
    }
  }
  return grad;
}

std::vector<Index> range(Index from, Index to) {
  std::vector<Index> r;
  for (Index i = from; i < to; ++i) r.push_back(i);
  return r;
}

// The backward pass by its formula, with ReLU's gradient passing where PASSES(z) says.
ch02::DenseGradients backward_by(const Matrix& x, const Matrix& w, const RowVector& b, const Matrix& g,
                                 const std::function<bool(double)>& passes) {
  Matrix z = x * w;
  z.rowwise() += b;
  Matrix dz = g;
  for (Index i = 0; i < z.rows(); ++i)
    for (Index j = 0; j < z.cols(); ++j)
      if (!passes(z(i, j))) dz(i, j) = 0.0;
  return {x.transpose() * dz, dz.colwise().sum(), dz * w.transpose()};
}

// The named mistakes of 2.2 whose gradient of kind WHICH (0 dw, 1 db, 2 dx) equals ACTUAL.
std::string backward_mistakes(const Matrix& actual, int which, const Matrix& x, const Matrix& w, const RowVector& b,
                              bool relu, const Matrix& g) {
  const auto pick = [&](const ch02::DenseGradients& d) -> Matrix { return which == 0 ? d.dw : which == 1 ? Matrix(d.db) : d.dx; };
  if (!relu) {
    const ch02::DenseGradients right = backward_by(x, w, b, g, [](double) { return true; });
    return which == 1 ? suspect(actual, {{kBiasMean, Matrix(right.db / static_cast<double>(x.rows()))}}) : "";
  }
  const ch02::DenseGradients right = backward_by(x, w, b, g, [](double z) { return z > 0.0; });
  std::vector<scalebook::testing::Mistake> mistakes = {
      {kReluWrongSide, pick(backward_by(x, w, b, g, [](double z) { return z <= 0.0; }))},
      {kReluAtZero, pick(backward_by(x, w, b, g, [](double z) { return z >= 0.0; }))},
      {kReluThreshold, pick(backward_by(x, w, b, g, [](double z) { return z > 1e-9; }))},
      {kReluIgnored, pick(backward_by(x, w, b, g, [](double) { return true; }))}};
  if (which == 1) mistakes.push_back({kBiasMean, Matrix(right.db / static_cast<double>(x.rows()))});
  // A mistake whose output is the right one on this input proves nothing here: left out.
  std::vector<scalebook::testing::Mistake> telling;
  for (const auto& m : mistakes)
    if (!near(m.output, pick(right), 1e-12)) telling.push_back(m);
  return suspect(actual, telling, 1e-9);
}

// What a difference in a gradient's layout usually means: dw's rows are input features and its
// columns output units; dx's rows are examples and its columns input features.
std::string gradient_pattern(const Matrix& actual, const Matrix& expected, int which, double tol) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    return which == 0 ? "dw must be (in, out), w's shape" : which == 1 ? "db must be (1, out)" : "dx must be (n, in), x's shape";
  }
  std::vector<bool> bad_row(static_cast<std::size_t>(actual.rows()), false), bad_col(static_cast<std::size_t>(actual.cols()), false);
  Index bad = 0;
  for (Index i = 0; i < actual.rows(); ++i)
    for (Index j = 0; j < actual.cols(); ++j)
      if (!near(actual(i, j), expected(i, j), tol)) {
        bad_row[static_cast<std::size_t>(i)] = bad_col[static_cast<std::size_t>(j)] = true;
        ++bad;
      }
  const auto count = [](const std::vector<bool>& v) { return std::count(v.begin(), v.end(), true); };
  if (bad == 0) return "";
  if (which == 0 && count(bad_col) < actual.cols())
    return "only some columns of dw differ: column j is output unit j, so the gradient at z (dz) of those units is off (ReLU's mask, or grad_out's columns)";
  if (which == 0 && count(bad_row) < actual.rows())
    return "only some rows of dw differ: row i is input feature i, so x's column i is used wrongly in x^T dz";
  if (which == 2 && count(bad_row) < actual.rows())
    return "only some rows of dx differ: row i is example i, so dz's row i (ReLU's mask for that example) is off";
  if (which == 2 && count(bad_col) < actual.cols())
    return "only some columns of dx differ: column c is input feature c, so w's row c is used wrongly in dz w^T";
  return "every entry differs (the formula, dw = x^T dz, db = the column sums of dz, dx = dz w^T, or every unit's dz)";
}

// The K-fold rule, and its known slips, as folds.
enum class FoldSlip { None, Overlap, Remainder, RemainderDropped, CeilSize };
std::vector<ch02::Fold> folds_by(Index n, int k, FoldSlip slip) {
  const Index size = slip == FoldSlip::CeilSize ? (n + k - 1) / k : n / k;
  std::vector<ch02::Fold> folds(static_cast<std::size_t>(k));
  for (int f = 0; f < k; ++f) {
    for (Index i = 0; i < n; ++i) {
      const bool last = f == k - 1;
      const bool validates = (i >= f * size && i < (f + 1) * size) || (slip == FoldSlip::Overlap && i == (f + 1) * size) ||
                             (slip == FoldSlip::Remainder && last && i >= f * size);
      if (validates) folds[static_cast<std::size_t>(f)].validation.push_back(i);
      else if (!(slip == FoldSlip::RemainderDropped && i >= k * size)) folds[static_cast<std::size_t>(f)].train.push_back(i);
    }
  }
  return folds;
}

bool same_folds(const std::vector<ch02::Fold>& a, const std::vector<ch02::Fold>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t f = 0; f < a.size(); ++f)
    if (a[f].train != b[f].train || a[f].validation != b[f].validation) return false;
  return true;
}

std::string fold_mistakes(const std::vector<ch02::Fold>& actual, Index n, int k) {
  return scalebook::testing::suspect_by(actual,
                                        {{kOverlap, folds_by(n, k, FoldSlip::Overlap)},
                                         {kRemainder, folds_by(n, k, FoldSlip::Remainder)},
                                         {kRemainderDropped, folds_by(n, k, FoldSlip::RemainderDropped)},
                                         {kCeilSize, folds_by(n, k, FoldSlip::CeilSize)}},
                                        same_folds);
}

// The smoothing recurrence, and its known slips.
std::vector<double> smoothed_by(const std::vector<double>& v, double f, int slip) {  // 0 right, 1 swapped, 2 from 0, 3 float
  std::vector<double> s;
  for (std::size_t t = 0; t < v.size(); ++t) {
    if (slip == 3) {  // each step's products and sum in float, from the first value as it is
      s.push_back(t == 0 ? v[t]
                         : static_cast<float>(f) * static_cast<float>(s.back()) +
                               static_cast<float>(1.0 - f) * static_cast<float>(v[t]));
      continue;
    }
    const double previous = t == 0 ? (slip == 2 ? 0.0 : v[t]) : s.back();
    if (t == 0 && slip != 2) s.push_back(v[t]);
    else s.push_back(slip == 1 ? (1.0 - f) * previous + f * v[t] : f * previous + (1.0 - f) * v[t]);
  }
  return s;
}

std::string smoothing_mistakes(const std::vector<double>& actual, const std::vector<double>& v, double f) {
  return suspect_values(actual, {{kFactorSwapped, smoothed_by(v, f, 1)}, {kStartZero, smoothed_by(v, f, 2)},
                                 {kSmoothFloat, smoothed_by(v, f, 3)}}, 1e-15);
}

std::string epoch_mistakes(Index actual, const std::vector<double>& v) {
  Index first = 0, last = 0, largest = 0;
  for (std::size_t t = 0; t < v.size(); ++t) {
    if (v[t] < v[static_cast<std::size_t>(first)]) first = static_cast<Index>(t);
    if (v[t] <= v[static_cast<std::size_t>(last)]) last = static_cast<Index>(t);
    if (v[t] > v[static_cast<std::size_t>(largest)]) largest = static_cast<Index>(t);
  }
  return suspect_exact(actual, {{kLastMinimum, last == first ? Index{-1} : last}, {kOneBased, first + 1},
                                {kLargest, largest == first ? Index{-1} : largest}});
}


}  // namespace

TEST_SUITE("02-small-models") {

// ---- 2.1 dense_forward ----------------------------------------------------------------------

TEST_CASE("2.1 a hand-worked Dense layer with and without ReLU") {
  const Matrix x = from_rows(2, 2, {1, 2, -1, 0});
  const Matrix w = from_rows(2, 3, {1, 0, -1, 0, 1, 1});
  const RowVector b = row({0.5, -3, 0});
  INPUTS(x, w, b);
  // row 0: (1, 2) w = (1, 2, 1), + b = (1.5, -1, 1); row 1: (-1, 0) w = (-1, 0, 1), + b = (-0.5, -3, 1)
  const Matrix linear = from_rows(2, 3, {1.5, -1, 1, -0.5, -3, 1});
  const Matrix no_bias = from_rows(2, 3, {1, 2, 1, -1, 0, 1});
  const Matrix y = ch02::dense_forward(x, w, b, false);
  CHECK_MESSAGE(near(y, linear), said("dense_forward(x, w, b, relu = false) must give x w + b = [[1.5, -1, 1], [-0.5, -3, 1]]",
                                      suspect(y, {{kBiasMissing, no_bias}})));
  const Matrix r = ch02::dense_forward(x, w, b, true);
  // ReLU before the bias: relu(x w) = (1, 2, 1; 0, 0, 1), + b = (1.5, -1, 1; 0.5, -3, 1).
  CHECK_MESSAGE(near(r, from_rows(2, 3, {1.5, 0, 1, 0, 0, 1})),
                said("dense_forward(x, w, b, relu = true) must give relu(x w + b) = [[1.5, 0, 1], [0, 0, 1]]",
                     suspect(r, {{kReluMissing, linear}, {kReluBeforeBias, from_rows(2, 3, {1.5, -1, 1, 0.5, -3, 1})},
                                 {kBiasMissing, no_bias.cwiseMax(0.0)}})));
}

TEST_CASE("2.1 one row and one output, large magnitudes") {
  // Magnitudes no float holds (1e150 and 1e-150), in a sum that every order of addition gives to
  // rounding: x w = 1e150 * 1e-150 + 2 * 0.5 = 2 (to 1e-16), + b = -1; ReLU gives 0 (ReLU before the
  // bias would give 2 - 3 = -1). The bias may be added first or last.
  const Matrix x = from_rows(1, 2, {1e150, 2});
  const Matrix w = from_rows(2, 1, {1e-150, 0.5});
  INPUTS(x, w, row({-3}));
  const Matrix linear = ch02::dense_forward(x, w, row({-3}), false), relu = ch02::dense_forward(x, w, row({-3}), true);
  CHECK_MESSAGE(near(linear, from_rows(1, 1, {-1})), "dense_forward of x = (1e150, 2), w = (1e-150, 0.5), b = -3 must be -1");
  CHECK_MESSAGE(near(relu, from_rows(1, 1, {0})),
                "dense_forward with ReLU of x = (1e150, 2), w = (1e-150, 0.5), b = -3 must be relu(x w + b) = relu(-1) = 0");
}

TEST_CASE("2.1 shapes that do not fit, empty inputs and NaN throw") {
  const Matrix x = Matrix::Ones(2, 3), w = Matrix::Ones(3, 4);
  const RowVector b = RowVector::Zero(4);
  constexpr char kFit[] = "x's columns must equal w's rows, and b must have one entry per column of w";
  CHECK_THROWS_CALL(ShapeError, kFit, ch02::dense_forward, x, Matrix(Matrix::Ones(4, 4)), b, true);  // w larger
  CHECK_THROWS_CALL(ShapeError, kFit, ch02::dense_forward, x, Matrix(Matrix::Ones(2, 4)), b, true);  // smaller
  // w of the right size in the wrong shape: (4, 3) holds 12 entries as (3, 4) does.
  CHECK_THROWS_CALL(ShapeError, kFit, ch02::dense_forward, x, Matrix(Matrix::Ones(4, 3)), RowVector(RowVector::Zero(3)), true);
  CHECK_THROWS_CALL(ShapeError, kFit, ch02::dense_forward, x, w, RowVector(RowVector::Zero(5)), true);
  CHECK_THROWS_CALL(ShapeError, kFit, ch02::dense_forward, x, w, RowVector(RowVector::Zero(3)), true);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_forward, Matrix(0, 3), w, b, true);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_forward, Matrix(2, 0), Matrix(0, 4), b, true);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_forward, x, Matrix(3, 0), RowVector(0), true);
  Matrix bad = x;
  bad(1, 2) = kNaN;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::dense_forward, bad, w, b, true);
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::dense_forward, x, w, row({0, 0, kInf, 0}), true);
  Matrix bad_w = w;
  bad_w(0, 0) = -kInf;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::dense_forward, x, bad_w, b, false);
}

// ---- 2.2 dense_backward ---------------------------------------------------------------------

TEST_CASE("2.2 gradients agree with finite differences") {
  // Random x, w, b and G; no z within 0.01 of ReLU's kink (checked), so that the central
  // differences with h = 1e-6 are exact up to rounding: |error| ~ 1e-16 / 1e-6 = 1e-10 per term.
  Rng rng(202);
  const Matrix x = normal_matrix(5, 4, rng), w = normal_matrix(4, 3, rng), g = normal_matrix(5, 3, rng);
  const RowVector b = normal_matrix(1, 3, rng);
  INFO("x (5, 4), w (4, 3), b (1, 3) and grad_out (5, 3) drawn from N(0, 1) with Rng(202), in that order");
  INPUTS(x, w, b, g);
  Matrix z = x * w;
  z.rowwise() += b;
  REQUIRE_MESSAGE(z.cwiseAbs().minCoeff() > 0.01, "the check's own data put a z within 0.01 of ReLU's kink");
  for (bool relu : {false, true}) {
    CAPTURE(relu);
    const ch02::DenseGradients d = ch02::dense_backward(x, w, b, relu, g);
    const Matrix dw = numeric_gradient(x, w, b, relu, g, 1), db = numeric_gradient(x, w, b, relu, g, 2),
                 dx = numeric_gradient(x, w, b, relu, g, 0);
    const std::string mode = relu ? " (relu = true)" : " (relu = false)";
    CHECK_MESSAGE(near(d.dw, dw, 1e-7, Parts{"input feature", 1, "output unit", 1}),
                  said("dense_backward's dw" + mode + " differs from the central differences of L = sum G * y in w: " +
                           gradient_pattern(d.dw, dw, 0, 1e-7),
                       backward_mistakes(d.dw, 0, x, w, b, relu, g)));
    CHECK_MESSAGE(near(d.db, db, 1e-7),
                  said("dense_backward's db" + mode + " differs from the central differences of L in b: db is the column "
                           "sums of dz, one per output unit",
                       backward_mistakes(d.db, 1, x, w, b, relu, g)));
    CHECK_MESSAGE(near(d.dx, dx, 1e-7, Parts{"example", 1, "input feature", 1}),
                  said("dense_backward's dx" + mode + " differs from the central differences of L in x: " +
                           gradient_pattern(d.dx, dx, 2, 1e-7),
                       backward_mistakes(d.dx, 2, x, w, b, relu, g)));
  }
}

TEST_CASE("2.2 a hand-worked ReLU layer: the gradient stops where z is 0 or below") {
  // x = (1, -1), rows of w (1, 2, 0) and (1, -1, 0), b = (0, -4, 3): z = (0, 3 - 4, 3) = (0, -1, 3)
  const Matrix x = from_rows(1, 2, {1, -1});
  const Matrix w = from_rows(2, 3, {1, 2, 0, 1, -1, 0});
  const RowVector b = row({0, -4, 3});
  const Matrix g = from_rows(1, 3, {10, 20, 30});
  INPUTS(x, w, b, g);
  const ch02::DenseGradients d = ch02::dense_backward(x, w, b, true, g);
  // dz = (0 at z = 0, 0 at z < 0, 30): dw = x^T dz, db = dz, dx = dz w^T = (30 * 0, 30 * 0) = (0, 0)
  CHECK_MESSAGE(near(d.db, row({0, 0, 30})),
                said("dense_backward's db for z = (0, -1, 3) must pass the gradient (10, 20, 30) only where z > 0: (0, 0, 30)",
                     backward_mistakes(d.db, 1, x, w, b, true, g)));
  CHECK_MESSAGE(near(d.dw, from_rows(2, 3, {0, 0, 30, 0, 0, -30})),
                said("dense_backward's dw = x^T dz for z = (0, -1, 3) and dz = (0, 0, 30) must be [[0, 0, 30], [0, 0, -30]]",
                     backward_mistakes(d.dw, 0, x, w, b, true, g)));
  CHECK_MESSAGE(near(d.dx, from_rows(1, 2, {0, 0})),
                said("dense_backward's dx = dz w^T for z = (0, -1, 3) and dz = (0, 0, 30) must be (0, 0)",
                     backward_mistakes(d.dx, 2, x, w, b, true, g)));
}

TEST_CASE("2.2 a tiny positive z passes the gradient") {
  // x = (1), w = (1e-12, -1e-12), b = (0, 0): z = (1e-12, -1e-12). Every z above 0 passes the
  // gradient, however small; a threshold above 0 (to stay clear of z = 0) cuts the first one.
  const Matrix x = from_rows(1, 1, {1});
  const Matrix w = from_rows(1, 2, {1e-12, -1e-12});
  const Matrix g = from_rows(1, 2, {10, 20});
  INPUTS(x, w, row({0, 0}), g);
  const ch02::DenseGradients d = ch02::dense_backward(x, w, row({0, 0}), true, g);
  CHECK_MESSAGE(near(d.db, row({10, 0})),
                said("dense_backward's db for z = (1e-12, -1e-12) must be (10, 0): the gradient passes wherever z > 0, however small",
                     backward_mistakes(d.db, 1, x, w, row({0, 0}), true, g)));
}

TEST_CASE("2.2 grad_out of the wrong shape, empty or non-finite inputs throw") {
  const Matrix x = Matrix::Ones(2, 3), w = Matrix::Ones(3, 4), g = Matrix::Ones(2, 4);
  const RowVector b = RowVector::Zero(4);
  constexpr char kGrad[] = "grad_out must be (n, out) = (x's rows, w's columns)";
  CHECK_THROWS_CALL(ShapeError, kGrad, ch02::dense_backward, x, w, b, true, Matrix(Matrix::Ones(3, 4)));
  CHECK_THROWS_CALL(ShapeError, kGrad, ch02::dense_backward, x, w, b, true, Matrix(Matrix::Ones(1, 4)));
  CHECK_THROWS_CALL(ShapeError, kGrad, ch02::dense_backward, x, w, b, true, Matrix(Matrix::Ones(2, 5)));
  CHECK_THROWS_CALL(ShapeError, kGrad, ch02::dense_backward, x, w, b, true, Matrix(Matrix::Ones(2, 3)));
  // grad_out transposed: (4, 2) holds 8 entries as (2, 4) does.
  CHECK_THROWS_CALL(ShapeError, kGrad, ch02::dense_backward, x, w, b, true, Matrix(Matrix::Ones(4, 2)));
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_backward, x, Matrix(Matrix::Ones(4, 4)), b, true, g);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_backward, Matrix(0, 3), w, b, true, Matrix(0, 4));
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::dense_backward, x, w, RowVector(RowVector::Zero(3)), true, g);
  Matrix bad = g;
  bad(0, 0) = kNaN;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::dense_backward, x, w, b, true, bad);
  Matrix bad_x = x;
  bad_x(1, 2) = kInf;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::dense_backward, bad_x, w, b, false, g);
}

// ---- 2.3 rmsprop_step -----------------------------------------------------------------------

TEST_CASE("2.3 one step from zero velocity, by the formula") {
  Matrix p = from_rows(1, 3, {1, -2, 0.5}), v = Matrix::Zero(1, 3);
  const Matrix g = from_rows(1, 3, {2, -1e-4, 0});
  const Matrix p0 = p, v0 = v;
  INPUTS(p0, g, v0, 1e-3, 0.9, 1e-7);
  ch02::rmsprop_step(p, g, v, 1e-3, 0.9, 1e-7);
  // v = 0.1 g^2 = (0.4, 1e-9, 0); p -= 1e-3 g / sqrt(v + 1e-7)
  const Matrix v_expected = from_rows(1, 3, {0.4, 1e-9, 0});
  Matrix expected(1, 3), no_sqrt(1, 3), eps_outside(1, 3), rho_swapped(1, 3), old_velocity(1, 3);
  for (Index j = 0; j < 3; ++j) {
    const double gj = g(0, j), vj = v_expected(0, j);
    expected(0, j) = p0(0, j) - 1e-3 * gj / std::sqrt(vj + 1e-7);
    no_sqrt(0, j) = p0(0, j) - 1e-3 * gj / (vj + 1e-7);
    eps_outside(0, j) = p0(0, j) - 1e-3 * gj / (std::sqrt(vj) + 1e-7);
    rho_swapped(0, j) = p0(0, j) - 1e-3 * gj / std::sqrt(0.9 * gj * gj + 1e-7);
    old_velocity(0, j) = p0(0, j) - 1e-3 * gj / std::sqrt(0.0 + 1e-7);
  }
  CHECK_MESSAGE(near(p, expected, 1e-13), said("rmsprop_step from p = (1, -2, 0.5), g = (2, -1e-4, 0), v = 0 with lr 1e-3, "
                                               "rho 0.9, eps 1e-7 must give p - lr g / sqrt(v + eps) with v = 0.1 g^2",
                                               suspect(p, {{kNoSqrt, no_sqrt}, {kEpsOutside, eps_outside},
                                                           {kRhoSwapped, rho_swapped}, {kOldVelocity, old_velocity}}, 1e-12)));
  CHECK_MESSAGE(near(v, v_expected, 1e-13), said("rmsprop_step's velocity after one step from 0 with rho 0.9 must be "
                                                 "0.1 g^2 = (0.4, 1e-9, 0)",
                                                 suspect(v, {{kRhoSwapped, from_rows(1, 3, {3.6, 9e-9, 0})}})));
}

TEST_CASE("2.3 a second step uses the running mean square") {
  // v = 0.5 * 0.25 + 0.5 * 0.09 = 0.17 with g = 0.3; p = 1 - 0.01 * 0.3 / sqrt(0.17 + 1e-7). The old
  // velocity (0.25) and the swapped rho give other numbers here.
  Matrix p = Matrix::Constant(2, 2, 1.0), v = Matrix::Constant(2, 2, 0.25);
  const Matrix g = Matrix::Constant(2, 2, 0.3);
  const Matrix p0 = p, v0 = v;
  INPUTS(p0, g, v0, 0.01, 0.5, 1e-7);
  ch02::rmsprop_step(p, g, v, 0.01, 0.5, 1e-7);
  CHECK_MESSAGE(near(v, Matrix::Constant(2, 2, 0.17), 1e-15), "rmsprop_step's velocity after 0.5 * 0.25 + 0.5 * 0.3^2 must be 0.17");
  const double expected = 1.0 - 0.01 * 0.3 / std::sqrt(0.17 + 1e-7);
  CHECK_MESSAGE(near(p, Matrix::Constant(2, 2, expected), 1e-14),
                said("rmsprop_step's second step must divide by sqrt(0.17 + 1e-7), the updated running mean square",
                     suspect(p, {{kNoSqrt, Matrix::Constant(2, 2, 1.0 - 0.01 * 0.3 / (0.17 + 1e-7))},
                                 {kOldVelocity, Matrix::Constant(2, 2, 1.0 - 0.01 * 0.3 / std::sqrt(0.25 + 1e-7))},
                                 {kEpsOutside, Matrix::Constant(2, 2, 1.0 - 0.01 * 0.3 / (std::sqrt(0.17) + 1e-7))}}, 1e-14)));
}

TEST_CASE("2.3 the default hyperparameters are Keras's") {
  Matrix p = Matrix::Zero(1, 1), v = Matrix::Zero(1, 1);
  const Matrix p0 = p, v0 = v, g = Matrix::Constant(1, 1, 1.0);
  INPUTS(p0, g, v0);
  ch02::rmsprop_step(p, g, v);
  CHECK_MESSAGE(near(v, Matrix::Constant(1, 1, 0.1), 1e-15), "with the default rho = 0.9 a gradient of 1 must give velocity 0.1");
  CHECK_MESSAGE(near(p, Matrix::Constant(1, 1, -1e-3 / std::sqrt(0.1 + 1e-7)), 1e-14), "with the defaults (learning rate 1e-3, eps 1e-7) the step must be -1e-3 / sqrt(0.1 + 1e-7)");
}

TEST_CASE("2.3 rho = 0, a tiny learning rate and a tiny epsilon are valid") {
  // 0 <= rho < 1 admits rho = 0 (no history: v = g^2); learning_rate and epsilon are valid above 0,
  // however small. From p = 1, g = 2, v = 0: v = 4 (1 - rho), p = 1 - lr 2 / sqrt(v + eps).
  struct Case {
    double learning_rate, rho, epsilon;
    const char* what;
    Named mistake;
  };
  for (const Case& c : {Case{0.1, 0.0, 1e-8, "rho = 0", kRhoZeroRejected}, Case{1e-12, 0.9, 1e-8, "learning_rate = 1e-12", kHyperThreshold},
                        Case{0.1, 0.9, 1e-12, "epsilon = 1e-12", kHyperThreshold}}) {
    Matrix p = Matrix::Constant(1, 1, 1.0), v = Matrix::Zero(1, 1);
    const Matrix g = Matrix::Constant(1, 1, 2.0), p0 = p, v0 = v;  // p and v change in place: the inputs are copies
    INPUTS(p0, g, v0, c.learning_rate, c.rho, c.epsilon);
    const std::string thrown = thrown_by([&] { ch02::rmsprop_step(p, g, v, c.learning_rate, c.rho, c.epsilon); });
    // What rejecting this valid value gives: a ValueError instead of a step.
    REQUIRE_MESSAGE(thrown.empty(), said("rmsprop_step with " + std::string(c.what) + " threw \"" + thrown + "\": rho may be 0, "
                                         "and learning_rate and epsilon are valid above 0, however small",
                                         suspect_exact(thrown.empty(), {{c.mistake, false}})));
    const double v_expected = 4.0 * (1.0 - c.rho);
    const double p_expected = 1.0 - c.learning_rate * 2.0 / std::sqrt(v_expected + c.epsilon);
    CHECK_MESSAGE(near(v(0, 0), v_expected, 1e-15), "rmsprop_step with " << std::string(c.what) << " from g = 2, v = 0 must give "
                                                    "v = " << format_number(v_expected));
    CHECK_MESSAGE(near(p(0, 0), p_expected, 1e-15), "rmsprop_step with " << std::string(c.what) << " from p = 1, g = 2, v = 0 must "
                                                    "give p = " << format_number(p_expected));
  }
}

TEST_CASE("2.3 mismatched shapes and bad hyperparameters throw") {
  Matrix p = Matrix::Zero(2, 2), v = Matrix::Zero(2, 2), empty(0, 2), empty_v(0, 2);
  const Matrix g = Matrix::Ones(2, 2);
  constexpr char kSame[] = "grad and velocity must have param's shape";
  constexpr char kHyper[] = "learning_rate and epsilon must be above 0 and finite, rho in [0, 1): NaN, infinity, 0 and "
                            "below are out";
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, p, Matrix(Matrix::Ones(3, 2)), v, 1e-3, 0.9, 1e-7);
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, p, Matrix(Matrix::Ones(2, 1)), v, 1e-3, 0.9, 1e-7);
  Matrix v_big = Matrix::Zero(2, 3), v_small = Matrix::Zero(1, 2);
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, p, g, v_big, 1e-3, 0.9, 1e-7);
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, p, g, v_small, 1e-3, 0.9, 1e-7);
  // The same number of entries in another shape: a loop over data() would not notice.
  Matrix wide = Matrix::Zero(2, 3), tall_v = Matrix::Zero(3, 2);
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, wide, Matrix(Matrix::Ones(3, 2)), tall_v, 1e-3, 0.9, 1e-7);
  Matrix wide_v = Matrix::Zero(2, 3);
  CHECK_THROWS_CALL(ShapeError, kSame, ch02::rmsprop_step, wide, Matrix(Matrix::Ones(2, 3)), tall_v, 1e-3, 0.9, 1e-7);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::rmsprop_step, empty, Matrix(0, 2), empty_v, 1e-3, 0.9, 1e-7);
  Matrix p2(2, 0), v2(2, 0);
  CHECK_THROWS_CALL(ShapeError, kThrowsShape, ch02::rmsprop_step, p2, Matrix(2, 0), v2, 1e-3, 0.9, 1e-7);
  for (double bad : {0.0, -1e-300, -1e300, kInf, kNaN}) {
    CHECK_THROWS_CALL(ValueError, kHyper, ch02::rmsprop_step, p, g, v, bad, 0.9, 1e-7);
    CHECK_THROWS_CALL(ValueError, kHyper, ch02::rmsprop_step, p, g, v, 1e-3, 0.9, bad);
  }
  for (double bad : {1.0, 1.5, -1e-300, kNaN, kInf}) CHECK_THROWS_CALL(ValueError, kHyper, ch02::rmsprop_step, p, g, v, 1e-3, bad, 1e-7);
  Matrix negative_v = Matrix::Constant(2, 2, -1e-300);
  CHECK_THROWS_CALL(ValueError, "velocity must be 0 or above (a mean of squares)", ch02::rmsprop_step, p, g, negative_v, 1e-3, 0.9, 1e-7);
  Matrix bad = g;
  bad(1, 1) = kInf;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::rmsprop_step, p, bad, v, 1e-3, 0.9, 1e-7);
  Matrix bad_p = p;
  bad_p(0, 0) = kNaN;
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::rmsprop_step, bad_p, g, v, 1e-3, 0.9, 1e-7);
}

// ---- 2.4 kfold_splits -----------------------------------------------------------------------

TEST_CASE("2.4 folds of 10 rows into 3: contiguous, disjoint, the remainder always trains") {
  // s = floor(10 / 3) = 3: validations {0 1 2}, {3 4 5}, {6 7 8}; row 9 trains in every fold.
  INPUTS(10, 3);
  const std::vector<ch02::Fold> folds = ch02::kfold_splits(10, 3);
  const std::string named = fold_mistakes(folds, 10, 3);
  REQUIRE_MESSAGE(folds.size() == 3, said("kfold_splits(10, 3) must give 3 folds, got " + std::to_string(folds.size()), named));
  for (Index f = 0; f < 3; ++f) {
    CAPTURE(f);
    const std::vector<Index> validation = range(3 * f, 3 * f + 3);
    std::vector<Index> train;
    for (Index i = 0; i < 10; ++i)
      if (i < 3 * f || i >= 3 * f + 3) train.push_back(i);
    const ch02::Fold& fold = folds[static_cast<std::size_t>(f)];
    const std::string which = "kfold_splits(10, 3): fold " + std::to_string(f);
    CHECK_MESSAGE(same_values(fold.validation, validation),
                  said(which + " must validate rows " + format_values(validation) + " ([f s, (f + 1) s) with s = floor(10 / 3) = 3)", named));
    CHECK_MESSAGE(same_values(fold.train, train),
                  said(which + " must train on every other row, in increasing order, row 9 included", named));
  }
}

TEST_CASE("2.4 every row validates at most once and train and validation are disjoint") {
  for (const auto& [n, k] : {std::pair<Index, int>{404, 4}, {7, 7}, {9, 2}, {100, 3}}) {
    INPUTS(n, k);
    const std::vector<ch02::Fold> folds = ch02::kfold_splits(n, k);
    const std::string named = fold_mistakes(folds, n, k);
    REQUIRE_MESSAGE(folds.size() == static_cast<std::size_t>(k), said("kfold_splits(n, k) must give k folds, got " + std::to_string(folds.size()), named));
    std::vector<int> validated(static_cast<std::size_t>(n), 0);
    for (std::size_t f = 0; f < folds.size(); ++f) {
      const ch02::Fold& fold = folds[f];
      INFO("fold ", f);
      CHECK_MESSAGE(fold.validation.size() == static_cast<std::size_t>(n / k),
                    said("fold " + std::to_string(f) + " validates " + std::to_string(fold.validation.size()) +
                             " rows, expected floor(n / k) = " + std::to_string(n / k) + ": " + format_values(fold.validation), named));
      CHECK_MESSAGE(fold.train.size() + fold.validation.size() == static_cast<std::size_t>(n),
                    said("fold " + std::to_string(f) + "'s train and validation rows together are " +
                             std::to_string(fold.train.size() + fold.validation.size()) + " rows, expected all " + std::to_string(n), named));
      for (Index i : fold.validation)
        if (i >= 0 && i < n) ++validated[static_cast<std::size_t>(i)];
      std::vector<Index> both;
      std::set_intersection(fold.train.begin(), fold.train.end(), fold.validation.begin(), fold.validation.end(),
                            std::back_inserter(both));
      CHECK_MESSAGE(both.empty(), said("fold " + std::to_string(f) + "'s train and validation share rows " + format_values(both), named));
      CHECK_MESSAGE(std::is_sorted(fold.train.begin(), fold.train.end()),
                    "fold " << f << "'s training rows are not in increasing order: " << format_values(fold.train));
    }
    const auto twice = std::find_if(validated.begin(), validated.end(), [](int c) { return c > 1; });
    const bool at_most_once = twice == validated.end();
    CHECK_MESSAGE(at_most_once,
                  said("row " + std::to_string(twice - validated.begin()) + " validates in " +
                           std::to_string(at_most_once ? 0 : *twice) + " folds: every row validates at most once",
                       named));
  }
}

TEST_CASE("2.4 k below 2 or above n throws") {
  constexpr char kK[] = "k must be at least 2 and at most n";
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 10, 1);
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 10, 0);
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 10, -3);
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 10, std::numeric_limits<int>::min());
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 10, 11);
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, 0, 2);
  CHECK_THROWS_CALL(ShapeError, kK, ch02::kfold_splits, -5, 2);
  INPUTS(2, 2);
  CHECK_MESSAGE(ch02::kfold_splits(2, 2).size() == 2, "kfold_splits(2, 2) must give 2 folds of one row each (k = n is allowed)");
}

// ---- 2.5 smooth_curve -----------------------------------------------------------------------

TEST_CASE("2.5 the recurrence unrolled by hand") {
  // factor 0.75: s0 = 4; s1 = 0.75 * 4 + 0.25 * 8 = 5; s2 = 0.75 * 5 + 0.25 * 0 = 3.75
  const std::vector<double> values{4, 8, 0};
  INPUTS(values, 0.75);
  const std::vector<double> s = ch02::smooth_curve(values, 0.75);
  CHECK_MESSAGE(same_values(s, {4, 5, 3.75}), said("smooth_curve({4, 8, 0}, 0.75) must give {4, 5, 3.75}: s0 = v0, then "
                                                   "s_t = 0.75 s_(t-1) + 0.25 v_t",
                                                   smoothing_mistakes(s, values, 0.75)));
}

TEST_CASE("2.5 numbers a float cannot hold keep a double's digits") {
  // 0.1, 0.7, 1/3 and the factor 0.9 are not exact in a float: a float recurrence drifts by about
  // 1e-8; the contract's recurrence in double agrees with the one here to rounding (1e-14).
  const std::vector<double> values{0.1, 0.7, 1.0 / 3.0, 2.5, -0.3, 0.123456789};
  INPUTS(values, 0.9);
  const std::vector<double> s = ch02::smooth_curve(values, 0.9);
  CHECK_MESSAGE(same_values(s, smoothed_by(values, 0.9, 0), 1e-14),
                said("smooth_curve of 6 values with factor 0.9 differs from s_t = 0.9 s_(t-1) + 0.1 v_t in double",
                     smoothing_mistakes(s, values, 0.9)));
}

TEST_CASE("2.5 factor 0 keeps the curve and a constant curve stays constant") {
  INPUTS(0.0, 0.9);
  CHECK_MESSAGE(same_values(ch02::smooth_curve({3, -1, 2}, 0.0), {3, -1, 2}),
                "smooth_curve({3, -1, 2}, 0) must return the curve unchanged");
  CHECK_MESSAGE(same_values(ch02::smooth_curve({2.5, 2.5, 2.5, 2.5}, 0.9), {2.5, 2.5, 2.5, 2.5}, 1e-15),
                "smooth_curve({2.5, 2.5, 2.5, 2.5}, 0.9) of a constant curve must stay constant");
  CHECK_MESSAGE(same_values(ch02::smooth_curve({7}, 0.9), {7}), "smooth_curve({7}, 0.9) of a single value must return it");
}

TEST_CASE("2.5 empty curves, NaN and factors outside 0 to 1 throw") {
  constexpr char kFactor[] = "factor must be in [0, 1) (NaN is out)";
  CHECK_THROWS_CALL(ShapeError, "an empty curve must throw ShapeError", ch02::smooth_curve, ch02::Curve{}, 0.9);
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::smooth_curve, ch02::Curve{1, kNaN}, 0.9);
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::smooth_curve, ch02::Curve{1, kInf}, 0.9);
  CHECK_THROWS_CALL(ValueError, kThrowsValue, ch02::smooth_curve, ch02::Curve{-kInf, 1}, 0.9);
  CHECK_THROWS_CALL(ValueError, kFactor, ch02::smooth_curve, ch02::Curve{1, 2}, 1.0);
  CHECK_THROWS_CALL(ValueError, kFactor, ch02::smooth_curve, ch02::Curve{1, 2}, -1e-300);
  CHECK_THROWS_CALL(ValueError, kFactor, ch02::smooth_curve, ch02::Curve{1, 2}, -1e300);
  CHECK_THROWS_CALL(ValueError, kFactor, ch02::smooth_curve, ch02::Curve{1, 2}, kNaN);
  CHECK_THROWS_CALL(ValueError, kFactor, ch02::smooth_curve, ch02::Curve{1, 2}, kInf);
}

// ---- 2.6 best_epoch -------------------------------------------------------------------------

TEST_CASE("2.6 the first smallest value") {
  for (const auto& [curve, best] : {std::pair<std::vector<double>, Index>{{5, 3, 6, 2, 4}, 3}, {{1}, 0}, {{-1e300, 0, 1e300}, 0}, {{3, 2, 1}, 2},
                                    {{kInf, 5, kInf}, 1}, {{2, -kInf, 0, -kInf}, 1}}) {
    INPUTS(curve);
    const Index got = ch02::best_epoch(curve);
    CHECK_MESSAGE(got == best, said("best_epoch(" + format_values(curve) + ") is " + std::to_string(got) + ", expected " +
                                        std::to_string(best) + ": the 0-based index of the smallest value",
                                    epoch_mistakes(got, curve)));
  }
  const std::vector<double> tied{5, 2, 4, 2, 6};
  INPUTS(tied);
  const Index tie = ch02::best_epoch(tied);
  CHECK_MESSAGE(tie == 1, said("best_epoch({5, 2, 4, 2, 6}) is " + std::to_string(tie) + ", expected 1: on a tie the first "
                                   "smallest value counts", epoch_mistakes(tie, tied)));
}

TEST_CASE("2.6 an empty curve or NaN throws") {
  CHECK_THROWS_CALL(ShapeError, "an empty curve must throw ShapeError", ch02::best_epoch, ch02::Curve{});
  CHECK_THROWS_CALL(ValueError, "a NaN value must throw ValueError", ch02::best_epoch, ch02::Curve{1, kNaN, 0});
  CHECK_THROWS_CALL(ValueError, "a NaN value must throw ValueError", ch02::best_epoch, ch02::Curve{kNaN});
  CHECK_THROWS_CALL(ValueError, "a NaN value must throw ValueError", ch02::best_epoch, ch02::Curve{kNaN, 1});
}

}  // TEST_SUITE
