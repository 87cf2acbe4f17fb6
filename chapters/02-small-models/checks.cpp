// Chapter 2 checks — small models on scarce data.
//
// Every expected value is derived here: hand-worked layers, finite differences of an explicit
// loss for the backward pass, RMSprop's formula evaluated in the check, the K-fold rule written
// as a membership test, the smoothing recurrence unrolled. Where a classic mistake has a
// recognisable output, the check computes it too, so that the failure message names it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <exception>
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
namespace ch02 = scalebook::ch02;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

constexpr char kBiasMissing[] = "the bias not added (or added to the wrong axis)?";
constexpr char kReluMissing[] = "ReLU not applied: negative outputs kept?";
constexpr char kReluBeforeBias[] = "ReLU applied before adding the bias? The bias is part of z = x w + b, and ReLU acts on z";
constexpr char kReluWrongSide[] = "ReLU gradient at the wrong side: the gradient must pass where z > 0 and stop where z < 0?";
constexpr char kReluAtZero[] = "ReLU gradient at z = 0 exactly must be 0 (as in Keras and PyTorch), not 1?";
constexpr char kBiasMean[] = "bias gradient averaged over the rows instead of summed?";
constexpr char kNoSqrt[] = "RMSprop without the square root: dividing by v + eps instead of sqrt(v + eps)?";
constexpr char kEpsOutside[] = "epsilon outside the square root: sqrt(v) + eps instead of sqrt(v + eps) (Keras's form)?";
constexpr char kRhoSwapped[] = "rho and 1 - rho swapped in the running mean square?";
constexpr char kOldVelocity[] = "the step divided by the old velocity, before updating it?";
constexpr char kOverlap[] = "validation folds overlap: a row validates in two folds?";
constexpr char kRemainder[] = "the last fold also validates the remainder rows: DLwP's folds all have floor(n / k) rows?";
constexpr char kRemainderDropped[] = "the remainder rows are dropped: the last n - k floor(n / k) rows must always train?";
constexpr char kFactorSwapped[] = "factor and 1 - factor swapped: the previous smoothed value gets the weight factor?";
constexpr char kStartZero[] = "the smoothed curve starts at 0 instead of the first value?";
constexpr char kLastMinimum[] = "on a tie the first minimum counts, not the last?";

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

// The gradient at z with ReLU's mask flipped (passing where z < 0): the wrong-side mistake.
ch02::DenseGradients wrong_side(const Matrix& x, const Matrix& w, const RowVector& b, const Matrix& g) {
  Matrix z = x * w;
  z.rowwise() += b;
  Matrix dz = g;
  for (Index i = 0; i < z.rows(); ++i)
    for (Index j = 0; j < z.cols(); ++j)
      if (z(i, j) > 0.0) dz(i, j) = 0.0;
  return {x.transpose() * dz, dz.colwise().sum(), dz * w.transpose()};
}

std::vector<Index> range(Index from, Index to) {
  std::vector<Index> r;
  for (Index i = from; i < to; ++i) r.push_back(i);
  return r;
}


}  // namespace

TEST_SUITE("02-small-models") {

// ---- 2.1 dense_forward ----------------------------------------------------------------------

TEST_CASE("2.1 a hand-worked Dense layer with and without ReLU") {
  const Matrix x = from_rows(2, 2, {1, 2, -1, 0});
  const Matrix w = from_rows(2, 3, {1, 0, -1, 0, 1, 1});
  const RowVector b = row({0.5, -3, 0});
  // row 0: (1, 2) w = (1, 2, 1), + b = (1.5, -1, 1); row 1: (-1, 0) w = (-1, 0, 1), + b = (-0.5, -3, 1)
  const Matrix linear = from_rows(2, 3, {1.5, -1, 1, -0.5, -3, 1});
  const Matrix y = ch02::dense_forward(x, w, b, false);
  CHECK_MESSAGE(near(y, linear), said("dense_forward(x, w, b, relu = false) on the 2 x 2 example worked in the comment is wrong",
                                      suspect(y, {{kBiasMissing, from_rows(2, 3, {1, 2, 1, -1, 0, 1})}})));
  const Matrix r = ch02::dense_forward(x, w, b, true);
  // ReLU before the bias: relu(x w) = (1, 2, 1; 0, 0, 1), + b = (1.5, -1, 1; 0.5, -3, 1).
  CHECK_MESSAGE(near(r, from_rows(2, 3, {1.5, 0, 1, 0, 0, 1})),
                said("dense_forward(x, w, b, relu = true) on the 2 x 2 example worked in the comment is wrong",
                     suspect(r, {{kReluMissing, linear}, {kReluBeforeBias, from_rows(2, 3, {1.5, -1, 1, 0.5, -3, 1})}})));
}

TEST_CASE("2.1 one row and one output, large magnitudes") {
  const Matrix x = from_rows(1, 3, {1e150, -1e150, 2});
  const Matrix w = from_rows(3, 1, {1, 1, 0.5});
  // x w = 1e150 - 1e150 + 1 = 1 (exact), + b = -1; ReLU gives 0 (ReLU first would give 1 - 2 = -1).
  const Matrix linear = ch02::dense_forward(x, w, row({-2}), false), relu = ch02::dense_forward(x, w, row({-2}), true);
  CHECK_MESSAGE(near(linear, from_rows(1, 1, {-1})), "dense_forward of x = (1e150, -1e150, 2), w = (1, 1, 0.5), b = -2 must be -1");
  CHECK_MESSAGE(near(relu, from_rows(1, 1, {0})),
                said("dense_forward with ReLU of x = (1e150, -1e150, 2), w = (1, 1, 0.5), b = -2 must be relu(-1) = 0",
                     suspect(relu, {{kReluBeforeBias, from_rows(1, 1, {-1})}, {kReluMissing, from_rows(1, 1, {-1})}})));
}

TEST_CASE("2.1 shapes that do not fit, empty inputs and NaN throw") {
  const Matrix x = Matrix::Ones(2, 3), w = Matrix::Ones(3, 4);
  const RowVector b = RowVector::Zero(4);
  CHECK_THROWS_TYPED(ch02::dense_forward(x, Matrix::Ones(4, 4), b, true), ShapeError, "dense_forward", kThrowsShape);  // w larger
  CHECK_THROWS_TYPED(ch02::dense_forward(x, Matrix::Ones(2, 4), b, true), ShapeError, "dense_forward", kThrowsShape);  // smaller
  CHECK_THROWS_TYPED(ch02::dense_forward(x, w, RowVector::Zero(5), true), ShapeError, "dense_forward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_forward(x, w, RowVector::Zero(3), true), ShapeError, "dense_forward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_forward(Matrix(0, 3), w, b, true), ShapeError, "dense_forward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_forward(Matrix(2, 0), Matrix(0, 4), b, true), ShapeError, "dense_forward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_forward(x, Matrix(3, 0), RowVector(0), true), ShapeError, "dense_forward", kThrowsShape);
  Matrix bad = x;
  bad(1, 2) = kNaN;
  CHECK_THROWS_TYPED(ch02::dense_forward(bad, w, b, true), ValueError, "dense_forward", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::dense_forward(x, w, row({0, 0, kInf, 0}), true), ValueError, "dense_forward", kThrowsValue);
}

// ---- 2.2 dense_backward ---------------------------------------------------------------------

TEST_CASE("2.2 gradients agree with finite differences") {
  // Random x, w, b and G; no z within 0.01 of ReLU's kink (checked), so that the central
  // differences with h = 1e-6 are exact up to rounding: |error| ~ 1e-16 / 1e-6 = 1e-10 per term.
  Rng rng(202);
  const Matrix x = normal_matrix(5, 4, rng), w = normal_matrix(4, 3, rng), g = normal_matrix(5, 3, rng);
  const RowVector b = normal_matrix(1, 3, rng);
  Matrix z = x * w;
  z.rowwise() += b;
  REQUIRE_MESSAGE(z.cwiseAbs().minCoeff() > 0.01, "the check's own data put a z within 0.01 of ReLU's kink");
  for (bool relu : {false, true}) {
    CAPTURE(relu);
    const ch02::DenseGradients d = ch02::dense_backward(x, w, b, relu, g);
    const ch02::DenseGradients wrong = wrong_side(x, w, b, g);
    const Matrix dw = numeric_gradient(x, w, b, relu, g, 1), db = numeric_gradient(x, w, b, relu, g, 2),
                 dx = numeric_gradient(x, w, b, relu, g, 0);
    CHECK_MESSAGE(near(d.dw, dw, 1e-7), said("dense_backward's dw differs from the finite differences of the loss",
                                             suspect(d.dw, {{kReluWrongSide, wrong.dw}})));
    CHECK_MESSAGE(near(d.db, db, 1e-7), said("dense_backward's db differs from the finite differences of the loss",
                                             suspect(d.db, {{kBiasMean, db / 5.0}, {kReluWrongSide, wrong.db}})));
    CHECK_MESSAGE(near(d.dx, dx, 1e-7), said("dense_backward's dx differs from the finite differences of the loss",
                                             suspect(d.dx, {{kReluWrongSide, wrong.dx}})));
  }
}

TEST_CASE("2.2 a hand-worked ReLU layer: the gradient stops where z is 0 or below") {
  // x = (1, -1), rows of w (1, 2, 0) and (1, -1, 0), b = (0, -4, 3): z = (0, 3 - 4, 3) = (0, -1, 3)
  const Matrix x = from_rows(1, 2, {1, -1});
  const Matrix w = from_rows(2, 3, {1, 2, 0, 1, -1, 0});
  const RowVector b = row({0, -4, 3});
  const Matrix g = from_rows(1, 3, {10, 20, 30});
  const ch02::DenseGradients d = ch02::dense_backward(x, w, b, true, g);
  // dz = (0 at z = 0, 0 at z < 0, 30): dw = x^T dz, db = dz, dx = dz w^T = (30 * 0, 30 * 0) = (0, 0)
  const Matrix at_zero_passes = from_rows(1, 3, {10, 0, 30});
  CHECK_MESSAGE(near(d.db, row({0, 0, 30})),
                said("dense_backward's db for z = (0, -1, 3) must pass the gradient only where z > 0",
                     suspect(d.db, {{kReluAtZero, at_zero_passes}, {kReluWrongSide, row({10, 20, 0})}})));
  CHECK_MESSAGE(near(d.dw, from_rows(2, 3, {0, 0, 30, 0, 0, -30})), "dense_backward's dw = x^T dz for z = (0, -1, 3) is wrong");
  CHECK_MESSAGE(near(d.dx, from_rows(1, 2, {0, 0})), "dense_backward's dx = dz w^T for z = (0, -1, 3) must be (0, 0)");
}

TEST_CASE("2.2 a tiny positive z passes the gradient") {
  // x = (1), w = (1e-12, -1e-12), b = (0, 0): z = (1e-12, -1e-12). Every z above 0 passes the
  // gradient, however small; a threshold above 0 (to stay clear of z = 0) cuts the first one.
  const Matrix x = from_rows(1, 1, {1});
  const Matrix w = from_rows(1, 2, {1e-12, -1e-12});
  const Matrix g = from_rows(1, 2, {10, 20});
  const ch02::DenseGradients d = ch02::dense_backward(x, w, row({0, 0}), true, g);
  CHECK_MESSAGE(near(d.db, row({10, 0})),
                said("dense_backward's db for z = (1e-12, -1e-12) must be (10, 0): the gradient passes wherever "
                     "z > 0, however small; look for a threshold above 0 in your ReLU test",
                     suspect(d.db, {{"the gradient cut below a small threshold instead of at 0?", row({0, 0})}})));
}

TEST_CASE("2.2 grad_out of the wrong shape, empty or non-finite inputs throw") {
  const Matrix x = Matrix::Ones(2, 3), w = Matrix::Ones(3, 4), g = Matrix::Ones(2, 4);
  const RowVector b = RowVector::Zero(4);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, b, true, Matrix::Ones(3, 4)), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, b, true, Matrix::Ones(1, 4)), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, b, true, Matrix::Ones(2, 5)), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, b, true, Matrix::Ones(2, 3)), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, Matrix::Ones(4, 4), b, true, g), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(Matrix(0, 3), w, b, true, Matrix(0, 4)), ShapeError, "dense_backward", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, RowVector::Zero(3), true, g), ShapeError, "dense_backward", kThrowsShape);
  Matrix bad = g;
  bad(0, 0) = kNaN;
  CHECK_THROWS_TYPED(ch02::dense_backward(x, w, b, true, bad), ValueError, "dense_backward", kThrowsValue);
}

// ---- 2.3 rmsprop_step -----------------------------------------------------------------------

TEST_CASE("2.3 one step from zero velocity, by the formula") {
  Matrix p = from_rows(1, 3, {1, -2, 0.5}), v = Matrix::Zero(1, 3);
  const Matrix g = from_rows(1, 3, {2, -1e-4, 0});
  const Matrix p0 = p;
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
  CHECK_MESSAGE(near(p, expected, 1e-13), said("rmsprop_step's updated parameters are wrong", suspect(p, {{kNoSqrt, no_sqrt}, {kEpsOutside, eps_outside},
                                                      {kRhoSwapped, rho_swapped}, {kOldVelocity, old_velocity}}, 1e-12)));
  CHECK_MESSAGE(near(v, v_expected, 1e-13), said("rmsprop_step's updated velocity (the running mean square) is wrong",
                                                 suspect(v, {{kRhoSwapped, from_rows(1, 3, {3.6, 9e-9, 0})}})));
}

TEST_CASE("2.3 a second step uses the running mean square") {
  Matrix p = Matrix::Constant(2, 2, 1.0), v = Matrix::Constant(2, 2, 0.25);
  const Matrix g = Matrix::Constant(2, 2, 0.5);
  ch02::rmsprop_step(p, g, v, 0.01, 0.5, 1e-7);
  // v = 0.5 * 0.25 + 0.5 * 0.25 = 0.25; p = 1 - 0.01 * 0.5 / sqrt(0.25 + 1e-7)
  CHECK_MESSAGE(near(v, Matrix::Constant(2, 2, 0.25), 1e-15), "rmsprop_step's velocity after 0.5 * 0.25 + 0.5 * 0.5^2 must be 0.25");
  const double expected = 1.0 - 0.01 * 0.5 / std::sqrt(0.25 + 1e-7);
  CHECK_MESSAGE(near(p, Matrix::Constant(2, 2, expected), 1e-14),
                said("rmsprop_step's second step must divide by sqrt(0.25 + 1e-7)",
                     suspect(p, {{kNoSqrt, Matrix::Constant(2, 2, 1.0 - 0.01 * 0.5 / (0.25 + 1e-7))}})));
}

TEST_CASE("2.3 the default hyperparameters are Keras's") {
  Matrix p = Matrix::Zero(1, 1), v = Matrix::Zero(1, 1);
  ch02::rmsprop_step(p, Matrix::Constant(1, 1, 1.0), v);
  CHECK_MESSAGE(near(v, Matrix::Constant(1, 1, 0.1), 1e-15), "with the default rho = 0.9 a gradient of 1 must give velocity 0.1");
  CHECK_MESSAGE(near(p, Matrix::Constant(1, 1, -1e-3 / std::sqrt(0.1 + 1e-7)), 1e-14), "with the defaults (learning rate 1e-3, eps 1e-7) the step must be -1e-3 / sqrt(0.1 + 1e-7)");
}

TEST_CASE("2.3 rho = 0, a tiny learning rate and a tiny epsilon are valid") {
  // 0 <= rho < 1 admits rho = 0 (no history: v = g^2); learning_rate and epsilon are valid above 0,
  // however small. From p = 1, g = 2, v = 0: v = 4 (1 - rho), p = 1 - lr 2 / sqrt(v + eps).
  struct Case {
    double learning_rate, rho, epsilon;
    const char* what;
  };
  for (const Case& c : {Case{0.1, 0.0, 1e-8, "rho = 0"}, Case{1e-12, 0.9, 1e-8, "learning_rate = 1e-12"},
                        Case{0.1, 0.9, 1e-12, "epsilon = 1e-12"}}) {
    Matrix p = Matrix::Constant(1, 1, 1.0), v = Matrix::Zero(1, 1);
    const Matrix g = Matrix::Constant(1, 1, 2.0);
    const std::string thrown = thrown_by([&] { ch02::rmsprop_step(p, g, v, c.learning_rate, c.rho, c.epsilon); });
    REQUIRE_MESSAGE(thrown.empty(), "rmsprop_step with " << std::string(c.what) << " threw \"" << thrown << "\": rho may be 0, "
                                    "and learning_rate and epsilon are valid above 0, however small; look at the "
                                    "bounds your checks of the hyperparameters use");
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
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, Matrix::Ones(3, 2), v, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, Matrix::Ones(2, 1), v, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  Matrix v_big = Matrix::Zero(2, 3), v_small = Matrix::Zero(1, 2);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v_big, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v_small, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(empty, Matrix(0, 2), empty_v, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  Matrix p2(2, 0), v2(2, 0);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p2, Matrix(2, 0), v2, 1e-3, 0.9, 1e-7), ShapeError, "rmsprop_step", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, 0.0, 0.9, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, -1e-300, 0.9, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, -1e300, 0.9, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, 1e-3, 1.0, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, 1e-3, -1e-300, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, 1e-3, 0.9, 0.0), ValueError, "rmsprop_step", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, v, 1e-3, 0.9, -1e-300), ValueError, "rmsprop_step", kThrowsValue);
  Matrix negative_v = Matrix::Constant(2, 2, -1e-300);
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, g, negative_v, 1e-3, 0.9, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
  Matrix bad = g;
  bad(1, 1) = kInf;
  CHECK_THROWS_TYPED(ch02::rmsprop_step(p, bad, v, 1e-3, 0.9, 1e-7), ValueError, "rmsprop_step", kThrowsValue);
}

// ---- 2.4 kfold_splits -----------------------------------------------------------------------

TEST_CASE("2.4 folds of 10 rows into 3: contiguous, disjoint, the remainder always trains") {
  // s = floor(10 / 3) = 3: validations {0 1 2}, {3 4 5}, {6 7 8}; row 9 trains in every fold.
  const std::vector<ch02::Fold> folds = ch02::kfold_splits(10, 3);
  REQUIRE_MESSAGE(folds.size() == 3, "kfold_splits(10, 3) must give 3 folds, got " << folds.size());
  for (Index f = 0; f < 3; ++f) {
    CAPTURE(f);
    const std::vector<Index> validation = range(3 * f, 3 * f + 3);
    std::vector<Index> train;
    for (Index i = 0; i < 10; ++i)
      if (i < 3 * f || i >= 3 * f + 3) train.push_back(i);
    const ch02::Fold& fold = folds[static_cast<std::size_t>(f)];
    const std::string hint = fold.validation.size() > 3 ? (f == 2 && fold.validation.size() == 4 ? kRemainder : kOverlap) : "";
    const std::string which = "kfold_splits(10, 3): fold " + std::to_string(f);
    CHECK_MESSAGE(same_values(fold.validation, validation),
                  said(which + " validates the wrong rows", hint.empty() ? "" : "looks like a known mistake: " + hint));
    CHECK_MESSAGE(same_values(fold.train, train),
                  said(which + " trains on the wrong rows",
                       fold.train.size() < train.size() ? std::string("looks like a known mistake: ") + kRemainderDropped : ""));
  }
}

TEST_CASE("2.4 every row validates at most once and train and validation are disjoint") {
  for (const auto& [n, k] : {std::pair<Index, int>{404, 4}, {7, 7}, {9, 2}, {100, 3}}) {
    CAPTURE(n);
    CAPTURE(k);
    const std::vector<ch02::Fold> folds = ch02::kfold_splits(n, k);
    REQUIRE_MESSAGE(folds.size() == static_cast<std::size_t>(k), "kfold_splits(n, k) must give k folds, got " << folds.size());
    std::vector<int> validated(static_cast<std::size_t>(n), 0);
    for (const ch02::Fold& fold : folds) {
      CHECK_MESSAGE(fold.validation.size() == static_cast<std::size_t>(n / k),
                    "a fold validates " << fold.validation.size() << " rows, expected floor(n / k) = " << n / k
                                        << ": " << format_values(fold.validation));
      CHECK_MESSAGE(fold.train.size() + fold.validation.size() == static_cast<std::size_t>(n),
                    "a fold's train and validation rows together are " << fold.train.size() + fold.validation.size()
                                                                     << " rows, expected all " << n);
      for (Index i : fold.validation)
        if (i >= 0 && i < n) ++validated[static_cast<std::size_t>(i)];
      std::vector<Index> both;
      std::set_intersection(fold.train.begin(), fold.train.end(), fold.validation.begin(), fold.validation.end(),
                            std::back_inserter(both));
      CHECK_MESSAGE(both.empty(), "train and validation share rows " << format_values(both));
      CHECK_MESSAGE(std::is_sorted(fold.train.begin(), fold.train.end()),
                    "a fold's training rows are not in increasing order: " << format_values(fold.train));
    }
    CHECK_MESSAGE(*std::max_element(validated.begin(), validated.end()) == 1,
                  "a row validates in more than one fold | looks like a known mistake: " << kOverlap);
  }
}

TEST_CASE("2.4 k below 2 or above n throws") {
  CHECK_THROWS_TYPED(ch02::kfold_splits(10, 1), ShapeError, "kfold_splits", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::kfold_splits(10, 0), ShapeError, "kfold_splits", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::kfold_splits(10, -3), ShapeError, "kfold_splits", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::kfold_splits(10, 11), ShapeError, "kfold_splits", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::kfold_splits(0, 2), ShapeError, "kfold_splits", kThrowsShape);
  CHECK_MESSAGE(ch02::kfold_splits(2, 2).size() == 2, "kfold_splits(2, 2) must give 2 folds of one row each (k = n is allowed)");
}

// ---- 2.5 smooth_curve -----------------------------------------------------------------------

TEST_CASE("2.5 the recurrence unrolled by hand") {
  // factor 0.75: s0 = 4; s1 = 0.75 * 4 + 0.25 * 8 = 5; s2 = 0.75 * 5 + 0.25 * 0 = 3.75
  const std::vector<double> s = ch02::smooth_curve({4, 8, 0}, 0.75);
  const std::vector<double> expected{4, 5, 3.75};
  const std::vector<double> swapped{4, 7, 1.75}, from_zero{1, 2.75, 2.0625};
  const std::string mistake = s == swapped ? kFactorSwapped : s == from_zero ? kStartZero : "";
  CHECK_MESSAGE(same_values(s, expected), said("smooth_curve({4, 8, 0}, 0.75) is wrong",
                                               mistake.empty() ? "" : "looks like a known mistake: " + mistake));
}

TEST_CASE("2.5 factor 0 keeps the curve and a constant curve stays constant") {
  CHECK_MESSAGE(same_values(ch02::smooth_curve({3, -1, 2}, 0.0), {3, -1, 2}),
                "smooth_curve with factor 0 must return the curve unchanged");
  CHECK_MESSAGE(same_values(ch02::smooth_curve({2.5, 2.5, 2.5, 2.5}, 0.9), {2.5, 2.5, 2.5, 2.5}, 1e-15),
                "smooth_curve of a constant curve must stay constant");
  CHECK_MESSAGE(same_values(ch02::smooth_curve({7}, 0.9), {7}), "smooth_curve of a single value must return it");
}

TEST_CASE("2.5 empty curves, NaN and factors outside 0 to 1 throw") {
  CHECK_THROWS_TYPED(ch02::smooth_curve({}, 0.9), ShapeError, "smooth_curve", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, kNaN}, 0.9), ValueError, "smooth_curve", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, kInf}, 0.9), ValueError, "smooth_curve", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, 2}, 1.0), ValueError, "smooth_curve", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, 2}, -1e-300), ValueError, "smooth_curve", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, 2}, -1e300), ValueError, "smooth_curve", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::smooth_curve({1, 2}, kNaN), ValueError, "smooth_curve", kThrowsValue);
}

// ---- 2.6 best_epoch -------------------------------------------------------------------------

TEST_CASE("2.6 the first smallest value") {
  for (const auto& [curve, best] : {std::pair<std::vector<double>, Index>{{5, 3, 4, 2, 6}, 3}, {{1}, 0}, {{-1e300, 0, 1e300}, 0}, {{3, 2, 1}, 2}}) {
    const Index got = ch02::best_epoch(curve);
    CHECK_MESSAGE(got == best, "best_epoch(" << format_values(curve) << ") is " << got << ", expected " << best);
  }
  const Index tie = ch02::best_epoch({5, 2, 4, 2, 6});
  CHECK_MESSAGE(tie == 1, "best_epoch({5, 2, 4, 2, 6}) is " << tie << ", expected 1 | looks like a known mistake: " << kLastMinimum);
}

TEST_CASE("2.6 an empty curve or NaN throws") {
  CHECK_THROWS_TYPED(ch02::best_epoch({}), ShapeError, "best_epoch", kThrowsShape);
  CHECK_THROWS_TYPED(ch02::best_epoch({1, kNaN, 0}), ValueError, "best_epoch", kThrowsValue);
  CHECK_THROWS_TYPED(ch02::best_epoch({kNaN}), ValueError, "best_epoch", kThrowsValue);
}

}  // TEST_SUITE
