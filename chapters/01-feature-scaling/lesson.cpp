// Chapter 1 lesson — feature scaling, measured on real data.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet, and quotes the values named with lesson.value as {{name}}) and writes the
// data of the figures: ch01_ranges.dat (per-feature spread
// before and after scaling), ch01_descent_raw.dat and ch01_descent_scaled.dat (gradient descent).
// Usage: ch01_lesson [data folder] [--book]. Deterministic: fixed seeds, fixed splits, one thread.
//
// Linked against the reference (the book's numbers) and against a student's track: the scaling,
// gradient descent and kNN below are the chapter's exercises; the MLP is lib's trainer.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "feature_scaling.hpp"
#include "scalebook/data.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/mlp.hpp"

namespace ch01 = scalebook::ch01;
using scalebook::Dataset;
using scalebook::Index;
using scalebook::Matrix;
using scalebook::RowVector;
using scalebook::Vector;

namespace {

// The curvatures of the least-squares loss: the eigenvalues of H = [X 1]^T [X 1] / n, smallest
// first. Gradient descent with step 1/lambda_max needs about (lambda_max / lambda_min) ln(1/eps)
// steps; lambda_max / lambda_min is the condition number of H.
Vector curvatures(const Matrix& x) {
  Matrix a(x.rows(), x.cols() + 1);
  a << x, Vector::Ones(x.rows());
  return Eigen::SelfAdjointEigenSolver<Matrix>(a.transpose() * a / static_cast<double>(x.rows())).eigenvalues();
}

// The least-squares optimum's loss (1/(2n)) |[X 1] theta* - y|^2, from the normal equations.
double optimal_loss(const Matrix& x, const Vector& y) {
  Matrix a(x.rows(), x.cols() + 1);
  a << x, Vector::Ones(x.rows());
  const Vector theta = (a.transpose() * a).ldlt().solve(a.transpose() * y);
  return (a * theta - y).squaredNorm() / (2.0 * static_cast<double>(x.rows()));
}

// The Pearson correlation matrix of the columns of x.
Matrix correlation(const Matrix& x) {
  const Matrix centred = x.rowwise() - x.colwise().mean();
  const Matrix cov = centred.transpose() * centred / static_cast<double>(x.rows());
  const Vector sd = cov.diagonal().cwiseSqrt();
  return cov.array() / (sd * sd.transpose()).array();
}

double median(Vector v) {
  std::sort(v.data(), v.data() + v.size());
  const Index n = v.size();
  return n % 2 == 1 ? v(n / 2) : 0.5 * (v(n / 2 - 1) + v(n / 2));
}

double accuracy(const Vector& predicted, const Vector& truth) {
  return static_cast<double>((predicted.array() == truth.array()).count()) / static_cast<double>(truth.rows());
}

constexpr int kFolds = 4;

//! [kfold-scaled]
// DLwP's K-fold on the Boston training rows: 4 folds, per fold a fresh
// Dense(64)-Dense(64)-Dense(1) trained 100 epochs; scaled with the fold's
// training rows' statistics (exercise 1.3) or fed the raw features.
double kfold_mean_mae(const Dataset& data, bool scaled, std::vector<double>& fold_maes) {
  const std::vector<scalebook::Fold> folds = scalebook::kfold_splits(data.x.rows(), kFolds);
  double sum = 0.0;
  for (std::size_t f = 0; f < folds.size(); ++f) {
    const Dataset train = scalebook::take_rows(data, folds[f].train);
    const Dataset val = scalebook::take_rows(data, folds[f].validation);
    Matrix x_train = train.x, x_val = val.x;
    if (scaled) {
      const ch01::ScaledSplit split = ch01::scale_train_test(train.x, val.x);
      x_train = split.train;
      x_val = split.test;
    }
    scalebook::MlpConfig config;  // two Dense(64), 100 epochs, batch 16, RMSprop
    config.seed = 1000 + f;
    const scalebook::History h = scalebook::train_mlp(x_train, train.y, x_val, val.y, config);
    fold_maes.push_back(h.val_mae.back());
    sum += h.val_mae.back();
  }
  return sum / static_cast<double>(folds.size());
}
//! [kfold-scaled]

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    const scalebook::BostonSplit boston = scalebook::load_boston_split();
    const Index d = boston.train.x.cols();

    // ---- The features of Boston housing, before and after --------------------------------
    lesson.begin("ranges");
    const ch01::ScaledSplit split = ch01::scale_train_test(boston.train.x, boston.test.x);
    {
      std::printf("Boston housing without B: %d training rows, %d test rows, %d features\n\n",
                  static_cast<int>(boston.train.x.rows()), static_cast<int>(boston.test.x.rows()), static_cast<int>(d));
      std::printf("%-8s %10s %10s %10s %10s   %14s\n", "feature", "mean", "sd", "min", "max", "scaled min..max");
      std::vector<double> index, raw_sd, raw_range, scaled_range;
      std::ofstream names(lesson.data_dir() / "ch01_ranges.dat");
      names << "# index name raw_min raw_max scaled_min scaled_max\n";
      for (Index c = 0; c < d; ++c) {
        const double lo = boston.train.x.col(c).minCoeff(), hi = boston.train.x.col(c).maxCoeff();
        const double slo = split.train.col(c).minCoeff(), shi = split.train.col(c).maxCoeff();
        std::printf("%-8s %10.3f %10.3f %10.3f %10.3f   %6.2f..%5.2f\n", boston.train.feature_names[c].c_str(),
                    split.scaling.mean(c), split.scaling.scale(c), lo, hi, slo, shi);
        char line[200];
        std::snprintf(line, sizeof line, "%d %s %.17g %.17g %.17g %.17g\n", static_cast<int>(c),
                      boston.train.feature_names[c].c_str(), lo, hi, slo, shi);
        names << line;
      }
      if (!names.flush()) {
        throw scalebook::Error("ch01_lesson: could not write " + (lesson.data_dir() / "ch01_ranges.dat").string());
      }
      const RowVector sd = split.scaling.scale;
      std::printf("\nlargest sd / smallest sd: %.0f (TAX %.1f vs NOX %.4f)\n", sd.maxCoeff() / sd.minCoeff(),
                  sd(9), sd(4));
      const RowVector width = boston.train.x.colwise().maxCoeff() - boston.train.x.colwise().minCoeff();
      std::printf("widest range / narrowest range: %.0f\n", width.maxCoeff() / width.minCoeff());
      const double crim_mean = split.scaling.mean(0), crim_median = median(boston.train.x.col(0));
      std::printf("CRIM: mean %.3f, median %.3f (a few tracts have very high rates)\n", crim_mean, crim_median);
      lesson.claim(sd.maxCoeff() / sd.minCoeff() >= 1000.0 && width.maxCoeff() / width.minCoeff() >= 1000.0,
                   "the raw features' spreads differ by three orders of magnitude");
      lesson.claim(crim_mean > 10.0 * crim_median, "the crime rate's mean is more than ten times its median");
      lesson.value("crim_mean", crim_mean, "%.2f");
      lesson.value("crim_median", crim_median, "%.3f");
      lesson.value("nox_mean", split.scaling.mean(4), "%.2f");
      lesson.value("tax_mean", split.scaling.mean(9), "%.0f");
      lesson.value("train_rows", boston.train.x.rows());
      lesson.value("test_rows", boston.test.x.rows());
      lesson.value("boston_rows", boston.train.x.rows() + boston.test.x.rows());
      lesson.value("features", d);
    }
    lesson.end("ranges");

    // ---- The variance in two passes or in one -----------------------------------------------
    lesson.begin("variance");
    {
      // The values 1e9 + 1 .. 1e9 + 4 (exercise 1.1's check tries them): their variance from the
      // deviations, as exercise 1.1 computes it and as written out here, and the one-pass formula
      // mean(x^2) - mean(x)^2.
      const Matrix values = (Vector(4) << 1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4).finished();
      const ch01::Scaling s = ch01::fit_scaling(values);
      const double mean_of_squares = values.col(0).squaredNorm() / 4, mean = values.col(0).mean();
      const double two_pass = (values.col(0).array() - mean).square().mean();
      const double one_pass = mean_of_squares - mean * mean;
      const double spacing = std::nextafter(mean_of_squares, INFINITY) - mean_of_squares;
      std::printf("the values 1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4\n");
      std::printf("variance from the deviations (fit_scaling's sd, squared): %.15g\n", s.scale(0) * s.scale(0));
      std::printf("mean of the squares minus the square of the mean:          %.17g\n", one_pass);
      std::printf("spacing of doubles near the mean of the squares, %.3g:  %.17g\n", mean_of_squares, spacing);
      lesson.value("double_spacing", spacing, "%.0f");
      lesson.value("true_variance", two_pass, "%.2f");
      lesson.claim(two_pass == 1.25 && std::abs(one_pass - two_pass) > 0.5,
                   "the variance from the deviations is 1.25; the one-pass formula loses every digit of it");
    }
    lesson.end("variance");

    // ---- Leakage --------------------------------------------------------------------------
    lesson.begin("leakage");
    {
      Matrix all(boston.train.x.rows() + boston.test.x.rows(), d);
      all << boston.train.x, boston.test.x;
      const ch01::Scaling from_train = ch01::fit_scaling(boston.train.x);
      const ch01::Scaling from_all = ch01::fit_scaling(all);
      const ch01::Scaling from_test = ch01::fit_scaling(boston.test.x);
      std::printf("means fitted on other rows, in units of the training sd\n\n");
      std::printf("%-8s %14s %14s\n", "feature", "all rows", "test rows");
      double worst_all = 0.0, worst_test = 0.0;
      for (Index c = 0; c < d; ++c) {
        const double a = (from_all.mean(c) - from_train.mean(c)) / from_train.scale(c);
        const double t = (from_test.mean(c) - from_train.mean(c)) / from_train.scale(c);
        worst_all = std::max(worst_all, std::abs(a));
        worst_test = std::max(worst_test, std::abs(t));
        std::printf("%-8s %+14.4f %+14.4f\n", boston.train.feature_names[c].c_str(), a, t);
      }
      std::printf("\nlargest shift: %.4f sd (all rows), %.4f sd (test rows)\n", worst_all, worst_test);
      lesson.claim(worst_all < 0.1 && worst_test < 0.3,
                   "on the Boston split the shift is small: under 0.1 sd from all rows, under 0.3 sd from the test rows");
      const Matrix constant = Matrix::Constant(3, 1, 7.0);
      const ch01::Scaling c = ch01::fit_scaling(constant);
      std::printf("a constant feature (7, 7, 7): mean %.1f, scale %.1f, scaled %.1f\n", c.mean(0), c.scale(0),
                  ch01::apply_scaling(constant, c)(0, 0));
    }
    lesson.end("leakage");

    // ---- Gradient descent on least squares: raw vs scaled ---------------------------------
    lesson.begin("descent");
    {
      const int max_iterations = 20000;
      const double tolerance = 1e-3;
      struct Run {
        const char* name;
        Matrix x;
        Vector h;
        ch01::DescentResult result, best_step;
        double optimum;
      };
      Run runs[2] = {{"raw", boston.train.x, {}, {}, {}, 0.0}, {"scaled", split.train, {}, {}, {}, 0.0}};
      for (Run& run : runs) {
        run.h = curvatures(run.x);
        const double step = 1.0 / run.h.maxCoeff();  // safe: every direction shrinks, none overshoots
        run.result = ch01::gradient_descent(run.x, boston.train.y, step, tolerance, max_iterations);
        // The best fixed step: the steepest and the flattest direction shrink by the same factor.
        const double best = 2.0 / (run.h.maxCoeff() + run.h.minCoeff());
        run.best_step = ch01::gradient_descent(run.x, boston.train.y, best, tolerance, max_iterations);
        run.optimum = optimal_loss(run.x, boston.train.y);
      }
      std::printf("least squares on the %d training rows; step 1/lambda_max; stop when\n"
                  "|gradient| <= %g or after %d steps\n\n",
                  static_cast<int>(boston.train.x.rows()), tolerance, max_iterations);
      std::printf("%-7s %11s %11s %11s %10s %11s %11s\n", "", "lambda_max", "lambda_min", "cond", "steps",
                  "loss", "optimum");
      for (const Run& run : runs) {
        std::printf("%-7s %11.4g %11.4g %11.4g %10d %11.4f %11.4f%s\n", run.name, run.h.maxCoeff(), run.h.minCoeff(),
                    run.h.maxCoeff() / run.h.minCoeff(), run.result.iterations, run.result.loss.back(), run.optimum,
                    run.result.converged ? "" : "  (not converged)");
      }
      std::printf("\nthe best fixed step 2/(lambda_max + lambda_min): every direction shrinks by at most\n"
                  "(cond - 1)/(cond + 1) per step\n\n");
      std::printf("%-7s %16s %10s\n", "", "factor per step", "steps");
      for (const Run& run : runs) {
        const double cond = run.h.maxCoeff() / run.h.minCoeff();
        std::printf("%-7s %16.10f %10d%s\n", run.name, (cond - 1.0) / (cond + 1.0), run.best_step.iterations,
                    run.best_step.converged ? "" : "  (not converged)");
      }
      const Vector r = Eigen::SelfAdjointEigenSolver<Matrix>(correlation(boston.train.x)).eigenvalues();
      const double cond_r = r.maxCoeff() / r.minCoeff(), cond_scaled = runs[1].h.maxCoeff() / runs[1].h.minCoeff();
      std::printf("\ncond of the raw training rows' correlation matrix: %.4g (eigenvalues %.4g .. %.4g)\n", cond_r,
                  r.minCoeff(), r.maxCoeff());
      lesson.claim(!runs[0].result.converged && !runs[0].best_step.converged,
                   "gradient descent on the raw features does not converge within the step limit");
      lesson.claim(runs[1].result.converged && runs[1].best_step.converged &&
                       runs[1].best_step.iterations < runs[1].result.iterations,
                   "on standardised features both steps converge, and the best fixed step needs fewer steps than 1/lambda_max");
      lesson.claim(std::abs(cond_scaled - cond_r) <= 1e-9 * cond_r,
                   "the condition number after standardising equals that of the correlation matrix");
      lesson.claim(std::abs(runs[0].optimum - runs[1].optimum) <= 1e-9 * runs[1].optimum,
                   "raw and standardised least squares have the same optimum");
      // The figure: loss above the optimum at about 200 logarithmically spaced steps, up to the
      // last step each run made.
      for (int r = 0; r < 2; ++r) {
        std::vector<double> steps, gap;
        const std::vector<double>& loss = runs[r].result.loss;
        for (double t = 0.0; t < static_cast<double>(loss.size()); t = t < 10 ? t + 1 : std::ceil(t * 1.05)) {
          steps.push_back(t);
          gap.push_back(std::max(loss[static_cast<std::size_t>(t)] - runs[r].optimum, 1e-12));
        }
        lesson.table(r == 0 ? "ch01_descent_raw.dat" : "ch01_descent_scaled.dat", {"step", "loss_minus_optimum"},
                     {steps, gap});
      }
    }
    lesson.end("descent");

    // ---- kNN on Wine: raw vs scaled -------------------------------------------------------
    lesson.begin("knn");
    {
      const Dataset wine = scalebook::load_wine();
      const std::vector<Index> order = scalebook::shuffled_indices(wine.x.rows(), 7);
      const std::vector<Index> train_rows(order.begin(), order.begin() + 124), test_rows(order.begin() + 124, order.end());
      const Dataset train = scalebook::take_rows(wine, train_rows), test = scalebook::take_rows(wine, test_rows);
      const ch01::ScaledSplit scaled = ch01::scale_train_test(train.x, test.x);
      std::printf("Wine: %d training rows, %d test rows (shuffled_indices(178, 7)), 13 features\n",
                  static_cast<int>(train.x.rows()), static_cast<int>(test.x.rows()));
      lesson.value("wine_rows", wine.x.rows());
      lesson.value("wine_features", wine.x.cols());
      lesson.value("wine_classes", static_cast<Index>(wine.y.maxCoeff()) + 1);
      lesson.value("wine_train", train.x.rows());
      lesson.value("wine_test", test.x.rows());
      std::printf("training sd of proline %.1f, of hue %.3f\n\n", scaled.scaling.scale(12), scaled.scaling.scale(10));
      std::printf("%4s %14s %14s %16s\n", "k", "raw accuracy", "scaled", "proline alone");
      bool scaled_wins = true, raw_like_proline = true;
      for (int k : {1, 3, 5, 7, 9}) {
        const double raw = accuracy(ch01::knn_predict(train.x, train.y, test.x, k), test.y);
        const double sc = accuracy(ch01::knn_predict(scaled.train, train.y, scaled.test, k), test.y);
        const double proline_only = accuracy(ch01::knn_predict(train.x.col(12), train.y, test.x.col(12), k), test.y);
        std::printf("%4d %14.3f %14.3f %16.3f\n", k, raw, sc, proline_only);
        scaled_wins = scaled_wins && sc > raw;
        // "Within one test wine": the accuracies differ by at most 1/54.
        raw_like_proline = raw_like_proline && std::abs(raw - proline_only) * static_cast<double>(test.x.rows()) < 1.5;
      }
      std::printf("\n(proline alone: kNN on the raw proline column only)\n");
      lesson.claim(raw_like_proline, "raw kNN is within one test wine of kNN on proline alone, at every k");
      lesson.claim(scaled_wins, "standardised kNN is more accurate than raw kNN for every k");
    }
    lesson.end("knn");

    // ---- The same small MLP on raw and scaled features ------------------------------------
    lesson.begin("mlp");
    {
      std::vector<double> raw_folds, scaled_folds;
      const double raw = kfold_mean_mae(boston.train, false, raw_folds);
      const double scaled = kfold_mean_mae(boston.train, true, scaled_folds);
      std::printf("Boston, %d-fold validation MAE after %d epochs (in $1000s)\n\n", kFolds, scalebook::MlpConfig{}.epochs);
      lesson.value("folds", kFolds);
      lesson.value("epochs", scalebook::MlpConfig{}.epochs);
      std::printf("%-8s %8s %8s %8s %8s %8s\n", "", "fold 1", "fold 2", "fold 3", "fold 4", "mean");
      std::printf("%-8s", "raw");
      for (double m : raw_folds) std::printf(" %8.3f", m);
      std::printf(" %8.3f\n%-8s", raw, "scaled");
      for (double m : scaled_folds) std::printf(" %8.3f", m);
      std::printf(" %8.3f\n", scaled);
      bool every_fold = true;
      for (std::size_t f = 0; f < raw_folds.size(); ++f) every_fold = every_fold && scaled_folds[f] < raw_folds[f];
      lesson.claim(every_fold, "the network on standardised features has the lower error on every fold");
    }
    lesson.end("mlp");

    // ---- What leaked statistics do to a test score, for three models ------------------------
    lesson.begin("leakage-scores");
    {
      // Scaled with the training rows' statistics (as it should be), or with statistics of all
      // rows, the test rows included (leaked); each model trained on the training rows and scored
      // on the test rows.
      auto leaked_split = [](const Matrix& train, const Matrix& test) {
        Matrix all(train.rows() + test.rows(), train.cols());
        all << train, test;
        const ch01::Scaling from_all = ch01::fit_scaling(all);
        return ch01::ScaledSplit{ch01::apply_scaling(train, from_all), ch01::apply_scaling(test, from_all), from_all};
      };
      const ch01::ScaledSplit fair = ch01::scale_train_test(boston.train.x, boston.test.x);
      const ch01::ScaledSplit leaked = leaked_split(boston.train.x, boston.test.x);
      // Least squares with an intercept, from the normal equations: its test MAE.
      auto least_squares_mae = [&](const ch01::ScaledSplit& s) {
        Matrix a(s.train.rows(), s.train.cols() + 1), t(s.test.rows(), s.test.cols() + 1);
        a << s.train, Vector::Ones(s.train.rows());
        t << s.test, Vector::Ones(s.test.rows());
        const Vector theta = (a.transpose() * a).ldlt().solve(a.transpose() * boston.train.y);
        return (t * theta - boston.test.y).cwiseAbs().mean();
      };
      const int seeds = 5;
      std::vector<double> per_seed_fair, per_seed_leaked;
      auto network_mae = [&](const ch01::ScaledSplit& s, std::vector<double>& per_seed) {
        double sum = 0.0;
        for (int seed = 0; seed < seeds; ++seed) {
          scalebook::MlpConfig config;  // the network above: two Dense(64), 100 epochs, batch 16, RMSprop
          config.seed = 1100 + seed;
          per_seed.push_back(scalebook::train_mlp(s.train, boston.train.y, s.test, boston.test.y, config).val_mae.back());
          sum += per_seed.back();
        }
        return sum / seeds;
      };
      const double ls_fair = least_squares_mae(fair), ls_leaked = least_squares_mae(leaked);
      const double net_fair = network_mae(fair, per_seed_fair), net_leaked = network_mae(leaked, per_seed_leaked);
      double seed_spread = 0.0;  // how far apart two seeds' runs on the same statistics land
      for (const std::vector<double>* runs : {&per_seed_fair, &per_seed_leaked}) {
        seed_spread = std::max(seed_spread, *std::max_element(runs->begin(), runs->end()) -
                                                *std::min_element(runs->begin(), runs->end()));
      }
      std::printf("Boston: trained on the %d training rows, MAE on the %d test rows (in $1000s),\n"
                  "scaled with the training rows' statistics or with all %d rows' (leaked)\n\n",
                  static_cast<int>(boston.train.x.rows()), static_cast<int>(boston.test.x.rows()),
                  static_cast<int>(boston.train.x.rows() + boston.test.x.rows()));
      std::printf("%-36s %10s %10s %12s\n", "", "training", "all rows", "difference");
      std::printf("%-36s %10.6f %10.6f %12.6f\n", "least squares with an intercept", ls_fair, ls_leaked,
                  std::abs(ls_leaked - ls_fair));
      char network_label[64];
      std::snprintf(network_label, sizeof network_label, "the network above (mean of %d seeds)", seeds);
      std::printf("%-36s %10.3f %10.3f %+12.3f\n", network_label, net_fair, net_leaked, net_leaked - net_fair);
      std::printf("(the network's seeds on the same statistics land up to %.3f apart)\n", seed_spread);
      lesson.claim(std::abs(ls_leaked - ls_fair) <= 1e-9 * ls_fair,
                   "least squares with an intercept gives the same test predictions whichever rows the statistics came from");

      const Dataset wine = scalebook::load_wine();
      const std::vector<Index> order = scalebook::shuffled_indices(wine.x.rows(), 7);
      const std::vector<Index> train_rows(order.begin(), order.begin() + 124), test_rows(order.begin() + 124, order.end());
      const Dataset train = scalebook::take_rows(wine, train_rows), test = scalebook::take_rows(wine, test_rows);
      const ch01::ScaledSplit wine_fair = ch01::scale_train_test(train.x, test.x);
      const ch01::ScaledSplit wine_leaked = leaked_split(train.x, test.x);
      std::printf("\nWine: kNN's test accuracy, scaled with the training rows' statistics or all rows'\n\n");
      std::printf("%4s %10s %10s %12s\n", "k", "training", "all rows", "wines apart");
      int most_apart = 0;
      bool never_fewer = true;
      for (int k : {1, 3, 5, 7, 9}) {
        const double a = accuracy(ch01::knn_predict(wine_fair.train, train.y, wine_fair.test, k), test.y);
        const double b = accuracy(ch01::knn_predict(wine_leaked.train, train.y, wine_leaked.test, k), test.y);
        const int apart = static_cast<int>(std::lround((b - a) * static_cast<double>(test.x.rows())));
        most_apart = std::max(most_apart, std::abs(apart));
        never_fewer = never_fewer && apart >= 0;
        std::printf("%4d %10.3f %10.3f %+12d\n", k, a, b, apart);
      }
      lesson.value("leak_net_difference", std::abs(net_leaked - net_fair), "%.3f");
      lesson.value("leak_seed_spread", seed_spread, "%.3f");
      lesson.claim(std::abs(net_leaked - net_fair) < seed_spread,
                   "the network's test error moves by less with leaked statistics than between two seeds");
      lesson.value("leak_seeds", seeds);
      lesson.value("leak_knn_most_apart", most_apart);
      lesson.claim(never_fewer && most_apart > 0,
                   "kNN with all rows' statistics gets some more test wines right, and never fewer");
    }
    lesson.end("leakage-scores");
  });
}
