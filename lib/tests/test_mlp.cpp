// Tests of scalebook/mlp.hpp and scalebook/standardize.hpp: the trainer against an independent
// double-precision computation of its first step, its determinism, and its bad-input errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "scalebook/mlp.hpp"
#include "scalebook/testing.hpp"
#include "scalebook/random.hpp"
#include "scalebook/standardize.hpp"

using namespace scalebook;

namespace {

// One full-batch step of a d-h-1 ReLU network, in double, from the documented draws of Rng(seed).
// Returns {loss before the step, MSE after it} on the same rows.
std::pair<double, double> one_step_by_hand(const Matrix& x, const Vector& y, Index h, std::uint64_t seed) {
  const Index n = x.rows(), d = x.cols();
  Rng rng(seed);
  Matrix w1(d, h), w2(h, 1);
  const double l1 = std::sqrt(6.0 / static_cast<double>(d + h)), l2 = std::sqrt(6.0 / static_cast<double>(h + 1));
  for (Index r = 0; r < d; ++r)
    for (Index c = 0; c < h; ++c) w1(r, c) = static_cast<float>((2.0 * rng.uniform() - 1.0) * l1);
  for (Index r = 0; r < h; ++r) w2(r, 0) = static_cast<float>((2.0 * rng.uniform() - 1.0) * l2);
  RowVector b1 = RowVector::Zero(h);
  double b2 = 0.0;
  auto forward = [&](Matrix& hidden) {
    hidden = ((x * w1).rowwise() + b1).cwiseMax(0.0);
    return Vector((hidden * w2).col(0).array() + b2);
  };
  Matrix hidden;
  const Vector out = forward(hidden);
  const Vector error = out - y;
  const double loss = error.squaredNorm() / static_cast<double>(n);
  const Vector d_out = 2.0 * error / static_cast<double>(n);
  const Matrix g_w2 = hidden.transpose() * d_out;
  const double g_b2 = d_out.sum();
  const Matrix d_hidden = ((d_out * w2.transpose()).array() * (hidden.array() > 0.0).cast<double>()).matrix();
  const Matrix g_w1 = x.transpose() * d_hidden;
  const RowVector g_b1 = d_hidden.colwise().sum();
  // RMSprop's first step from v = 0: v = 0.1 g^2, p -= 1e-3 g / sqrt(v + 1e-7).
  auto step = [](double& p, double g) { p -= 1e-3 * g / std::sqrt(0.1 * g * g + 1e-7); };
  for (Index i = 0; i < w1.size(); ++i) step(w1.data()[i], g_w1.data()[i]);
  for (Index i = 0; i < w2.size(); ++i) step(w2.data()[i], g_w2.data()[i]);
  for (Index i = 0; i < b1.size(); ++i) step(b1(i), g_b1(i));
  step(b2, g_b2);
  const Vector after = forward(hidden) - y;
  return {loss, after.squaredNorm() / static_cast<double>(n)};
}

}  // namespace

TEST_SUITE("lib") {

TEST_CASE("train_mlp: the first full-batch step matches an independent double computation") {
  Rng rng(5);
  const Matrix x = normal_matrix(8, 3, rng);
  Vector y(8);
  for (Index i = 0; i < 8; ++i) y(i) = x(i, 0) - 2.0 * x(i, 1) + 0.5;
  MlpConfig config;
  config.hidden = {5};
  config.epochs = 1;
  config.batch_size = 8;  // one batch: the shuffle does not change the gradient
  config.seed = 42;
  const History h = train_mlp(x, y, x, y, config);
  const auto [loss, after] = one_step_by_hand(x, y, 5, 42);
  // float32 against double on sums of 8 terms of size ~1: 1e-5 relative is generous and tight
  // enough to catch a wrong sign, a missing square root or a wrong learning rate.
  CHECK(h.loss[0] == doctest::Approx(loss).epsilon(1e-5));
  CHECK(h.val_loss[0] == doctest::Approx(after).epsilon(1e-5));
  CHECK(h.val_loss[0] < h.loss[0]);
}

TEST_CASE("train_mlp: same seed same bits, another seed other bits, loss falls") {
  Rng rng(6);
  const Matrix x = normal_matrix(50, 4, rng);
  Vector y = x.col(0) + x.col(1).cwiseAbs();
  MlpConfig config;
  config.hidden = {16, 16};
  config.epochs = 30;
  config.seed = 3;
  const History a = train_mlp(x, y, x.topRows(10), y.head(10), config);
  const History b = train_mlp(x, y, x.topRows(10), y.head(10), config);
  CHECK(a.loss == b.loss);
  CHECK(a.val_mae == b.val_mae);
  config.seed = 4;
  const History c = train_mlp(x, y, x.topRows(10), y.head(10), config);
  CHECK(a.loss != c.loss);
  REQUIRE(a.loss.size() == 30);
  CHECK(a.loss.back() < 0.5 * a.loss.front());
}

TEST_CASE("train_mlp: no validation rows gives empty validation history") {
  MlpConfig config;
  config.epochs = 2;
  const History h = train_mlp(Matrix::Ones(3, 2), Vector::Ones(3), Matrix(0, 2), Vector(0), config);
  CHECK(h.loss.size() == 2);
  CHECK(h.val_loss.empty());
}

TEST_CASE("train_mlp: bad input throws typed errors naming train_mlp") {
  MlpConfig config;
  const Matrix x = Matrix::Ones(4, 2);
  const Vector y = Vector::Ones(4);
  CHECK_THROWS_WITH_AS(train_mlp(Matrix(0, 2), Vector(0), x, y, config), doctest::Contains("train_mlp: "), ShapeError);
  CHECK_THROWS_AS(train_mlp(x, Vector::Ones(3), x, y, config), ShapeError);
  CHECK_THROWS_AS(train_mlp(x, y, Matrix::Ones(4, 3), y, config), ShapeError);
  Matrix bad = x;
  bad(1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(train_mlp(bad, y, x, y, config), ValueError);
  MlpConfig zero_width = config;
  zero_width.hidden = {64, 0};
  CHECK_THROWS_AS(train_mlp(x, y, x, y, zero_width), ShapeError);
  MlpConfig bad_rate = config;
  bad_rate.learning_rate = 0.0;
  CHECK_THROWS_AS(train_mlp(x, y, x, y, bad_rate), ValueError);
}

TEST_CASE("kfold_splits, smooth_curve and best_epoch as DLwP") {
  const std::vector<Fold> folds = kfold_splits(10, 3);  // s = 3: rows 9 always train
  REQUIRE(folds.size() == 3);
  CHECK(folds[1].validation == std::vector<Index>{3, 4, 5});
  CHECK(folds[1].train == std::vector<Index>{0, 1, 2, 6, 7, 8, 9});
  CHECK_THROWS_AS(kfold_splits(10, 1), ShapeError);
  CHECK_THROWS_AS(kfold_splits(3, 4), ShapeError);
  const std::vector<double> s = smooth_curve({1.0, 2.0, 0.0}, 0.5);
  CHECK(s == std::vector<double>{1.0, 1.5, 0.75});
  CHECK(best_epoch({3.0, 1.0, 2.0, 1.0}) == 1);
  CHECK_THROWS_AS(best_epoch({}), ShapeError);
}

TEST_CASE("standardize: training statistics, ddof 0, constant feature to 0") {
  Matrix train(4, 2);
  train << 1, 5, 2, 5, 3, 5, 4, 5;
  const Standardizer s = fit_standardizer(train);
  CHECK(s.mean(0) == 2.5);
  CHECK(s.scale(0) == doctest::Approx(std::sqrt(1.25)));  // population sd of 1, 2, 3, 4
  CHECK(s.scale(1) == 1.0);                                 // constant: divided by 1
  const Matrix z = standardize(train, s);
  CHECK(z.col(1).isZero());
  CHECK(std::abs(z.col(0).mean()) < 1e-15);
  CHECK_THROWS_AS(standardize(Matrix::Ones(2, 3), s), ShapeError);
  CHECK_THROWS_AS(fit_standardizer(Matrix(0, 2)), ShapeError);
}

}  // TEST_SUITE

TEST_CASE("train_classifier: learns separable classes, same seed same bits, typed errors") {
  // Three clusters in 2-D around (0, 4), (4, 0) and (-4, -4): an easy 3-class problem.
  Rng rng(61);
  const Matrix noise = normal_matrix(60, 2, rng);
  Matrix x(60, 2);
  std::vector<int> y(60);
  const double centres[3][2] = {{0, 4}, {4, 0}, {-4, -4}};
  for (Index i = 0; i < 60; ++i) {
    y[static_cast<std::size_t>(i)] = static_cast<int>(i % 3);
    x(i, 0) = centres[i % 3][0] + 0.5 * noise(i, 0);
    x(i, 1) = centres[i % 3][1] + 0.5 * noise(i, 1);
  }
  MlpConfig config;
  config.hidden = {16};
  config.epochs = 30;
  config.seed = 5;
  const ClassifierRun a = train_classifier(x, y, x.topRows(6), 3, config);
  const ClassifierRun b = train_classifier(x, y, x.topRows(6), 3, config);
  REQUIRE(a.train_logits.rows() == 60);
  REQUIRE(a.train_logits.cols() == 3);
  CHECK(a.val_logits.rows() == 6);
  CHECK((a.train_logits.array() == b.train_logits.array()).all());
  CHECK(a.loss.back() < 0.1 * a.loss.front());
  int correct = 0;
  for (Index i = 0; i < 60; ++i) {
    Index best = 0;
    a.train_logits.row(i).maxCoeff(&best);
    correct += best == y[static_cast<std::size_t>(i)];
  }
  CHECK(correct == 60);
  CHECK((a.val_logits.array() == a.train_logits.topRows(6).array()).all());
  CHECK_THROWS_WITH_AS(train_classifier(x, std::vector<int>(59, 0), x, 3, config), doctest::Contains("train_classifier: "), ShapeError);
  CHECK_THROWS_AS(train_classifier(x, y, x, 1, config), ShapeError);
  std::vector<int> bad_label = y;
  bad_label[7] = 3;
  CHECK_THROWS_WITH_AS(train_classifier(x, bad_label, x, 3, config), doctest::Contains("train_classifier: "), ValueError);
  CHECK_THROWS_AS(train_classifier(x, y, Matrix::Ones(2, 3), 3, config), ShapeError);
}
