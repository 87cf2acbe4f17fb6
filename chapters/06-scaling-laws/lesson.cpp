// Chapter 6 lesson — scaling laws and their limits.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet, and quotes the values named with lesson.value as {{name}}) and writes the
// data of the figures: ch06_data.dat, ch06_data_fit.dat and
// ch06_band.dat (loss against training-set size, the fit on the small sizes and its band),
// ch06_width.dat and ch06_width_fit.dat (loss against width), ch06_memorisation.dat (accuracy
// against width, real and shuffled labels).
// Usage: ch06_lesson [data folder] [--book]. Deterministic: fixed seeds, fixed splits, one thread.
//
// The fits, the extrapolation, the compute-optimal split, the shuffled labels and the accuracies
// are the chapter's exercises; the networks are trained by lib's trainer (scalebook/mlp.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scalebook/data.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/mlp.hpp"
#include "scalebook/random.hpp"
#include "scaling_laws.hpp"

namespace ch06 = scalebook::ch06;
using scalebook::Index;
using scalebook::Matrix;
using scalebook::Rng;
using scalebook::Vector;

namespace {

//! [teacher]
// The task: y = teacher(x) + noise, x in R^8 standard normal. The teacher is
// a fixed random network 8 -> 16 (tanh) -> 1; the noise is Gaussian with
// variance 0.1: no model can predict it, so 0.1 is the irreducible loss.
constexpr int kInputs = 8, kTeacherWidth = 16;
constexpr double kNoiseVariance = 0.1;
constexpr int kSteps = 2000;  // batches of 32 per training run
constexpr int kSeeds = 3;     // training runs averaged per point
constexpr int kScoringRows = 1000;  // rows that choose the epoch, and as many again that score it

struct Task {
  Matrix w1;  // (8, 16)
  Vector w2;  // (16)
};

Task make_teacher(scalebook::Rng& rng) {
  Task t{scalebook::normal_matrix(kInputs, kTeacherWidth, rng) / std::sqrt(double(kInputs)),
         scalebook::normal_matrix(kTeacherWidth, 1, rng).col(0) / 2.0};
  return t;
}

void draw(const Task& t, Index n, scalebook::Rng& rng, Matrix& x, Vector& y) {
  x = scalebook::normal_matrix(n, kInputs, rng);
  const Matrix h = (x * t.w1).array().tanh().matrix();
  y = h * t.w2;
  for (Index i = 0; i < n; ++i) y(i) += std::sqrt(kNoiseVariance) * rng.normal();
}
//! [teacher]

// The networks the lesson trains, and their smallest and largest parameter counts (the page's cost).
struct Census {
  int networks = 0;
  Index fewest = 0, most = 0;
  void add(Index parameters) {
    fewest = networks == 0 ? parameters : std::min(fewest, parameters);
    most = std::max(most, parameters);
    ++networks;
  }
};
Census census;

//! [student]
// The MSE of a one-hidden-layer ReLU network of the given width trained on the first n rows for
// about `steps` batches of 32, stopped early: the epoch of lowest MSE on the choosing rows
// (xc, yc) is picked, and the network as it was after that epoch (the same seed replays the same
// training) is scored on held-out rows (xh, yh) that chose nothing.
double validation_loss(const Matrix& x, const Vector& y, Index n, const Matrix& xc, const Vector& yc,
                       const Matrix& xh, const Vector& yh, Index width, int steps, std::uint64_t seed) {
  scalebook::MlpConfig config;
  config.hidden = {width};
  config.batch_size = 32;
  config.epochs = std::max(1, static_cast<int>((static_cast<Index>(steps) * 32 + n - 1) / n));
  config.learning_rate = 3e-3;
  config.seed = seed;
  const scalebook::History chosen = scalebook::train_mlp(x.topRows(n), y.head(n), xc, yc, config);
  config.epochs = static_cast<int>(scalebook::best_epoch(chosen.val_loss)) + 1;
  const scalebook::History scored = scalebook::train_mlp(x.topRows(n), y.head(n), xh, yh, config);
  return scored.val_loss.back();
}
//! [student]

// The least-squares fit of E + A N^-alpha on linear axes, for comparison with 6.2's estimator: for
// a fixed alpha, the best E and A solve a linear least-squares problem (two columns, 1 and
// N^-alpha), so only alpha is searched, by a scan of 0.005 .. 3 and a golden-section search around
// the best point (variable projection: no starting guess either).
struct LeastSquaresLaw {
  double e = 0.0, a = 0.0, alpha = 0.0, sse = 0.0;
};
LeastSquaresLaw fit_at(const std::vector<double>& n, const std::vector<double>& l, double alpha) {
  double s1 = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const double x = std::pow(n[i], -alpha);
    s1 += 1;
    sx += x;
    sxx += x * x;
    sy += l[i];
    sxy += x * l[i];
  }
  LeastSquaresLaw fit;
  fit.alpha = alpha;
  fit.a = (s1 * sxy - sx * sy) / (s1 * sxx - sx * sx);
  fit.e = (sy - fit.a * sx) / s1;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const double r = l[i] - fit.e - fit.a * std::pow(n[i], -alpha);
    fit.sse += r * r;
  }
  return fit;
}
LeastSquaresLaw least_squares_law(const std::vector<double>& n, const std::vector<double>& l) {
  const double step = 0.005;
  LeastSquaresLaw best = fit_at(n, l, step);
  for (double alpha = 2 * step; alpha <= 3.0; alpha += step) {
    const LeastSquaresLaw trial = fit_at(n, l, alpha);
    if (trial.sse < best.sse) best = trial;
  }
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = std::max(best.alpha - step, 1e-6), hi = best.alpha + step;
  while (hi - lo > 1e-12) {
    const double m1 = hi - golden * (hi - lo), m2 = lo + golden * (hi - lo);
    if (fit_at(n, l, m1).sse < fit_at(n, l, m2).sse) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  const LeastSquaresLaw refined = fit_at(n, l, (lo + hi) / 2);
  return refined.sse < best.sse ? refined : best;
}

// The sum of squared residuals of a law on linear axes.
double squared_residuals(const ch06::SaturatingPowerLaw& law, const std::vector<double>& n, const std::vector<double>& l) {
  double sse = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const double r = l[i] - law.e - law.a * std::pow(n[i], -law.alpha);
    sse += r * r;
  }
  return sse;
}

double standard_deviation(const std::vector<double>& v) {
  double mean = 0, square = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) square += (x - mean) * (x - mean);
  return std::sqrt(square / static_cast<double>(v.size() - 1));
}

//! [labels]
// A data set's targets (doubles 0, 1, ..., 9) as the class labels the classifier takes.
std::vector<int> labels_of(const Vector& y) {
  std::vector<int> out;
  for (Index i = 0; i < y.size(); ++i) out.push_back(static_cast<int>(y(i)));
  return out;
}
//! [labels]

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(at);
  const double f = at - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

// Each digit image shifted one pixel to the right (the left column becomes 0): the same digit to
// a reader, other inputs to a network.
Matrix shifted_right(const Matrix& x) {
  Matrix out = Matrix::Zero(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i)
    for (int r = 0; r < 8; ++r)
      for (int c = 1; c < 8; ++c) out(i, r * 8 + c) = x(i, r * 8 + c - 1);
  return out;
}

// Each pixel intensity (0 .. 1) plus Gaussian noise of standard deviation sd, clipped to 0 .. 1:
// the same digit to a reader.
Matrix noisy(const Matrix& x, double sd, Rng& rng) {
  Matrix out = x;
  for (Index i = 0; i < out.rows(); ++i)
    for (Index j = 0; j < out.cols(); ++j) out(i, j) = std::clamp(out(i, j) + sd * rng.normal(), 0.0, 1.0);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    // ---- 6.1 and 6.2 on a known law --------------------------------------------------------
    lesson.begin("synthetic");
    {
      const double e = 0.5, a = 20.0, alpha = 0.4, sigma = 0.002;
      std::vector<double> n, l;
      Rng rng(600);
      for (int k = 4; k <= 14; ++k) {
        n.push_back(std::ldexp(1.0, k));
        l.push_back(e + a * std::pow(n.back(), -alpha) + sigma * rng.normal());
      }
      const ch06::PowerLaw plain = ch06::fit_power_law(n, l);
      const ch06::SaturatingPowerLaw full = ch06::fit_saturating_power_law(n, l);
      std::printf("11 sizes N = 16 .. 16384, L = %.1f + %.0f N^-%.1f + noise (sd %.3f)\n\n", e, a, alpha, sigma);
      std::printf("%-28s %8s %8s %8s\n", "", "E", "A", "alpha");
      std::printf("%-28s %8.4f %8.2f %8.4f\n", "truth", e, a, alpha);
      std::printf("%-28s %8.4f %8.2f %8.4f\n", "6.2 E + A N^-alpha", full.e, full.a, full.alpha);
      std::printf("%-28s %8s %8.2f %8.4f\n", "6.1 a N^-alpha (no E)", "-", plain.a, plain.alpha);
      lesson.claim(std::abs(full.e - e) < 0.01 && std::abs(full.alpha - alpha) < 0.02 && std::abs(full.a - a) < 1.0,
                   "6.2 recovers all three parameters of the known law");
      lesson.claim(std::abs(plain.alpha - alpha) > 0.1, "a plain power law fitted to the same points gets a wrong exponent");

      // 6.2 is not the least-squares fit, but on such data its estimates spread about as much: 300
      // draws of the noise, both fits, against the least-squares standard error sigma^2 (J^T J)^-1
      // that the checks' tolerance is made of.
      const int draws = 300;
      std::vector<double> e62, els;
      Rng mc(610);
      for (int d = 0; d < draws; ++d) {
        std::vector<double> noisy_l;
        for (double size : n) noisy_l.push_back(e + a * std::pow(size, -alpha) + sigma * mc.normal());
        e62.push_back(ch06::fit_saturating_power_law(n, noisy_l).e);
        els.push_back(least_squares_law(n, noisy_l).e);
      }
      double m[3][3] = {};  // J^T J, J's rows the law's derivatives in E, A and alpha at each size
      for (double size : n) {
        const double j[3] = {1.0, std::pow(size, -alpha), -a * std::pow(size, -alpha) * std::log(size)};
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) m[r][c] += j[r] * j[c];
      }
      const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
      const double theory = sigma * std::sqrt((m[1][1] * m[2][2] - m[1][2] * m[2][1]) / det);  // sigma sqrt((J^T J)^-1_EE)
      const double sd62 = standard_deviation(e62), sdls = standard_deviation(els);
      std::printf("\nE over %d draws of the noise: standard deviation %.5f (6.2), %.5f (least squares);\n"
                  "the least-squares standard error, from sigma^2 (J^T J)^-1: %.5f\n", draws, sd62, sdls, theory);
      lesson.value("mc_draws", draws);
      lesson.value("mc_sd_e_62", sd62, "%.5f");
      lesson.value("mc_sd_e_ls", sdls, "%.5f");
      lesson.value("mc_sd_e_theory", theory, "%.5f");
      lesson.value("mc_sd_ratio_pct", 100 * (sd62 / theory - 1), "%.0f");
      lesson.claim(sd62 > sdls && sd62 < 1.25 * theory && std::abs(sdls / theory - 1) < 0.1,
                   "on data that follow the law, 6.2's E spreads a little more than least squares', whose spread the "
                   "standard error predicts; well inside the checks' five standard errors");
      lesson.value("synthetic_sizes", n.size());
      lesson.value("synthetic_smallest", n.front(), "%.0f");
      lesson.value("synthetic_largest", n.back(), "%.0f");
    }
    lesson.end("synthetic");

    // ---- Our own scaling curves: loss against data and against width -----------------------
    Rng rng(601);
    const Task teacher = make_teacher(rng);
    Matrix x, xv, xh;
    Vector y, yv, yh;
    draw(teacher, 16384, rng, x, y);
    draw(teacher, kScoringRows, rng, xv, yv);  // the rows that choose each network's epoch
    draw(teacher, kScoringRows, rng, xh, yh);  // the held-out rows that score it
    // The mean square of the noise actually drawn for a set of rows.
    auto noise_of = [&](const Matrix& xs, const Vector& ys) {
      const Vector clean = (xs * teacher.w1).array().tanh().matrix() * teacher.w2;
      return (ys - clean).squaredNorm() / static_cast<double>(ys.size());
    };
    const double drawn_noise = noise_of(xh, yh);
    lesson.value("noise_variance", kNoiseVariance, "%.1f");
    lesson.value("scoring_rows", kScoringRows);
    lesson.value("steps", kSteps);
    lesson.value("seeds", kSeeds);

    std::vector<double> sizes, data_loss;
    std::vector<double> largest_runs;  // the runs behind the mean at the largest size
    const Index width = 64;
    lesson.begin("data-scaling");
    {
      //! [data-experiment]
      // Training sets of 64 .. 16384 rows from the task; width 64; about
      // 2000 batches of 32 each; each network stopped at its best epoch on
      // 1000 choosing rows and scored on 1000 held-out rows; averaged over 3
      // training runs.
      for (Index n = 64; n <= 16384; n *= 2) {
        double mean = 0.0;
        for (int seed = 0; seed < kSeeds; ++seed) {
          const double run = validation_loss(x, y, n, xv, yv, xh, yh, width, kSteps, 700 + 10 * n + seed);
          mean += run / kSeeds;
          if (n == 16384) largest_runs.push_back(run);
        }
        sizes.push_back(static_cast<double>(n));
        data_loss.push_back(mean);
      }
      const ch06::SaturatingPowerLaw fit = ch06::fit_saturating_power_law(sizes, data_loss);
      //! [data-experiment]
      for (std::size_t run = 0; run < sizes.size() * kSeeds; ++run) census.add((kInputs + 1) * width + width + 1);
      std::printf("width %d, held-out MSE against training rows (mean of %d runs)\n\n", static_cast<int>(width), kSeeds);
      std::printf("%8s %10s\n", "rows", "MSE");
      for (std::size_t i = 0; i < sizes.size(); ++i) std::printf("%8.0f %10.4f\n", sizes[i], data_loss[i]);
      const LeastSquaresLaw ls = least_squares_law(sizes, data_loss);
      const double sse62 = squared_residuals(fit, sizes, data_loss);
      std::printf("\nfit of the held-out losses       E        A    alpha  squared residuals\n");
      std::printf("  6.2                         %.4f %8.3f %8.3f  %.3e\n", fit.e, fit.a, fit.alpha, sse62);
      std::printf("  least squares               %.4f %8.3f %8.3f  %.3e\n", ls.e, ls.a, ls.alpha, ls.sse);
      std::printf("noise variance put in %.4f; the noise drawn for the %d held-out rows has mean square %.4f\n",
                  kNoiseVariance, kScoringRows, drawn_noise);
      const double lowest = *std::min_element(data_loss.begin(), data_loss.end());
      std::printf("lowest held-out loss %.4f; below the held-out noise's mean square:\n"
                  "E of 6.2 by %.4f, E of least squares by %.4f\n", lowest, drawn_noise - fit.e, drawn_noise - ls.e);
      lesson.value("width", width);
      lesson.value("largest_rows", sizes.back(), "%.0f");
      lesson.value("sizes_count", sizes.size());
      lesson.value("data_e", fit.e, "%.4f");
      lesson.value("data_ls_e", ls.e, "%.4f");
      lesson.value("data_ls_a", ls.a, "%.3f");
      lesson.value("data_ls_alpha", ls.alpha, "%.3f");
      lesson.value("data_e_gap", drawn_noise - fit.e, "%.4f");
      lesson.value("data_ls_e_gap", drawn_noise - ls.e, "%.4f");
      lesson.value("data_sse_excess_pct", 100 * (sse62 / ls.sse - 1), "%.0f");
      lesson.value("held_out_noise", drawn_noise, "%.4f");
      lesson.claim(sse62 > ls.sse && ls.e < fit.e, "6.2's fit leaves larger squared residuals than the least-squares fit, whose floor lies lower");
      lesson.claim(fit.e < drawn_noise && ls.e < drawn_noise && lowest > drawn_noise,
                   "every held-out loss lies above the held-out noise's mean square, and both fitted floors below it");
      lesson.claim(std::abs(fit.e - kNoiseVariance) < 0.02, "the fit finds a floor close to the noise");
    }
    lesson.end("data-scaling");

    lesson.begin("extrapolation");
    {
      //! [extrapolate]
      // Fit on the five smallest sizes (64 .. 1024), predict 2048 .. 16384.
      const std::vector<double> n_fit(sizes.begin(), sizes.begin() + 5), l_fit(data_loss.begin(), data_loss.begin() + 5);
      const std::vector<double> n_out(sizes.begin() + 5, sizes.end()), l_out(data_loss.begin() + 5, data_loss.end());
      const ch06::SaturatingPowerLaw fit = ch06::fit_saturating_power_law(n_fit, l_fit);
      const ch06::Extrapolation with_e = ch06::extrapolate(fit, n_out, l_out);
      const ch06::PowerLaw plain = ch06::fit_power_law(n_fit, l_fit);
      const ch06::Extrapolation without_e = ch06::extrapolate({0.0, plain.a, plain.alpha}, n_out, l_out);
      //! [extrapolate]
      // The band: 200 refits on the five points resampled with replacement (at least 3 distinct
      // sizes each), the 10th and 90th percentile of their predictions.
      std::vector<double> grid;
      for (double g = 32; g <= 32768 * 1.001; g *= std::sqrt(2.0)) grid.push_back(g);
      std::vector<std::vector<double>> at_grid(grid.size()), at_out(n_out.size());
      Rng boot(602);
      int refits = 0, redrawn = 0, exactly_three = 0;
      while (refits < 200) {
        std::vector<double> bn, bl;
        for (int k = 0; k < 5; ++k) {
          const std::size_t i = static_cast<std::size_t>(boot.next_u64() % 5);
          bn.push_back(n_fit[i]);
          bl.push_back(l_fit[i]);
        }
        std::vector<double> distinct = bn;
        std::sort(distinct.begin(), distinct.end());
        const auto distinct_sizes = std::unique(distinct.begin(), distinct.end()) - distinct.begin();
        if (distinct_sizes < 3) {
          ++redrawn;
          continue;
        }
        if (distinct_sizes == 3) ++exactly_three;
        const ch06::SaturatingPowerLaw f = ch06::fit_saturating_power_law(bn, bl);
        for (std::size_t g = 0; g < grid.size(); ++g) at_grid[g].push_back(f.e + f.a * std::pow(grid[g], -f.alpha));
        for (std::size_t g = 0; g < n_out.size(); ++g) at_out[g].push_back(f.e + f.a * std::pow(n_out[g], -f.alpha));
        ++refits;
      }
      std::printf("fitted on 64 .. 1024 rows: L = %.4f + %.2f N^-%.3f; without E: %.2f N^-%.3f\n\n", fit.e, fit.a,
                  fit.alpha, plain.a, plain.alpha);
      std::printf("%6s %9s %11s %7s %15s %7s %11s %7s\n", "rows", "measured", "E + A N^-a", "error", "80% band",
                  "below", "a N^-a", "error");
      std::vector<double> below_share;  // the share of refits that predict less than was measured
      for (std::size_t i = 0; i < n_out.size(); ++i) {
        const double below = static_cast<double>(std::count_if(at_out[i].begin(), at_out[i].end(),
                                                               [&](double v) { return v < l_out[i]; })) /
                             static_cast<double>(at_out[i].size());
        below_share.push_back(below);
        std::printf("%6.0f %9.4f %11.4f %6.1f%% %7.4f..%.4f %6.0f%% %11.4f %6.1f%%\n", n_out[i], l_out[i],
                    with_e.predicted[i], 100 * with_e.relative_error[i], quantile(at_out[i], 0.1),
                    quantile(at_out[i], 0.9), 100 * below, without_e.predicted[i], 100 * without_e.relative_error[i]);
      }
      std::printf("(below: the share of the refits that predict a lower loss than the one measured)\n");
      std::printf("\nworst relative error: %.1f%% with E, %.1f%% without\n", 100 * with_e.worst, 100 * without_e.worst);
      std::printf("band: %d refits on resamples of the 5 points; %d resamples with fewer than 3 distinct\n"
                  "sizes were drawn again, and %d of the %d have exactly 3, one per parameter of the law\n",
                  refits, redrawn, exactly_three, refits);
      lesson.claim(redrawn > 0 && exactly_three > 0.35 * refits && exactly_three < 0.65 * refits,
                   "resamples with fewer than 3 distinct sizes are drawn again, and about half of the rest have exactly 3");
      bool grows = true, below_noise = false;
      for (std::size_t i = 0; i < n_out.size(); ++i) {
        if (i > 0) grows = grows && std::abs(with_e.relative_error[i]) > std::abs(with_e.relative_error[i - 1]);
        below_noise = below_noise || with_e.predicted[i] < kNoiseVariance;
      }
      lesson.claim(grows, "the error of the extrapolation grows with the distance from the fitted range");
      lesson.claim(fit.e < 0.01 && std::abs(with_e.predicted.back() - without_e.predicted.back()) < 0.001,
                   "fitted on the small sizes, E comes out near zero and the laws with and without E coincide");
      const double fewest_below = *std::min_element(below_share.begin() + 1, below_share.end());
      lesson.value("band_below_pct", 100 * fewest_below, "%.0f%%");
      lesson.value("refits", refits);
      lesson.value("band_from_rows", n_out[1], "%.0f");
      lesson.claim(fewest_below >= 0.85 && l_out.back() >= quantile(at_out.back(), 0.85),
                   "from twice the fitted range on, the measured losses sit at the top of the band: most refits predict lower");
      lesson.claim(below_noise, "the law fitted on the small sizes predicts losses below the noise variance");
      std::vector<double> low, high, mid, plain_line;
      for (std::size_t g = 0; g < grid.size(); ++g) {
        low.push_back(quantile(at_grid[g], 0.1));
        high.push_back(quantile(at_grid[g], 0.9));
        mid.push_back(fit.e + fit.a * std::pow(grid[g], -fit.alpha));
        plain_line.push_back(plain.a * std::pow(grid[g], -plain.alpha));
      }
      const ch06::SaturatingPowerLaw all = ch06::fit_saturating_power_law(sizes, data_loss);
      std::vector<double> all_line;
      for (double g : grid) all_line.push_back(all.e + all.a * std::pow(g, -all.alpha));
      lesson.table("ch06_data.dat", {"rows", "val_mse"}, {sizes, data_loss});
      lesson.table("ch06_data_fit.dat", {"rows", "fit_small", "low", "high", "no_e", "fit_all"},
                   {grid, mid, low, high, plain_line, all_line});
      lesson.table("ch06_noise.dat", {"rows", "noise"}, {{32.0, 32768.0}, {kNoiseVariance, kNoiseVariance}});
    }
    lesson.end("extrapolation");

    lesson.begin("width-scaling");
    {
      std::vector<double> widths, width_loss;
      for (Index w = 1; w <= 256; w *= 2) {
        widths.push_back(static_cast<double>(w));
        width_loss.push_back(validation_loss(x, y, 16384, xv, yv, xh, yh, w, kSteps, 800 + w));
        census.add((kInputs + 1) * w + w + 1);
      }
      const ch06::SaturatingPowerLaw fit = ch06::fit_saturating_power_law(widths, width_loss);
      const auto best_width = std::min_element(width_loss.begin(), width_loss.end());
      lesson.claim(best_width != width_loss.end() - 1 && width_loss.back() > *best_width,
                   "past some width the loss stops falling");
      std::printf("%.0f training rows, held-out MSE against the hidden width\n\n", sizes.back());
      std::printf("%8s %10s\n", "width", "MSE");
      for (std::size_t i = 0; i < widths.size(); ++i) std::printf("%8.0f %10.4f\n", widths[i], width_loss[i]);
      std::printf("\nfit (6.2): L = %.4f + %.3f W^-%.3f\n", fit.e, fit.a, fit.alpha);
      std::printf("irreducible loss E = %.4f; noise variance put in %.4f\n", fit.e, kNoiseVariance);
      std::printf("width 64 here is one run (seed %d); the data-scaling table's 16384 rows average %d seeds: %.4f\n",
                  800 + 64, kSeeds, data_loss.back());
      const double run_spread = std::abs(width_loss[6] - data_loss.back());
      const double widest_rise = std::max(width_loss[7], width_loss[8]) - width_loss[6];
      std::printf("past width 64: %+.4f (128), %+.4f (256), single runs; width 64's single run and that\n"
                  "mean differ by %.4f (those three runs span %.4f .. %.4f)\n",
                  width_loss[7] - width_loss[6], width_loss[8] - width_loss[6], run_spread,
                  *std::min_element(largest_runs.begin(), largest_runs.end()),
                  *std::max_element(largest_runs.begin(), largest_runs.end()));
      const double span = *std::max_element(largest_runs.begin(), largest_runs.end()) -
                          *std::min_element(largest_runs.begin(), largest_runs.end());
      lesson.claim(widths[6] == width && best_width == width_loss.begin() + 6 && widest_rise < span,
                   "past width 64 single runs stop improving, and the wider ones come out worse by less than the three "
                   "runs of width 64 on all the rows differ from one another");
      lesson.value("widest", widths.back(), "%.0f");
      lesson.claim(fit.e < drawn_noise, "the width curve's fitted floor, too, sits below the validation noise's mean square");
      std::vector<double> grid, line;
      for (double g = 1; g <= 256 * 1.001; g *= std::sqrt(2.0)) {
        grid.push_back(g);
        line.push_back(fit.e + fit.a * std::pow(g, -fit.alpha));
      }
      lesson.table("ch06_width.dat", {"width", "val_mse"}, {widths, width_loss});
      lesson.table("ch06_width_fit.dat", {"width", "fit"}, {grid, line});
      lesson.table("ch06_width_noise.dat", {"width", "noise"}, {{1.0, 256.0}, {kNoiseVariance, kNoiseVariance}});
    }
    lesson.end("width-scaling");

    // ---- Compute-optimal allocation with Hoffmann et al.'s constants -------------------------
    lesson.begin("chinchilla");
    {
      //! [chinchilla]
      // Hoffmann et al. 2022, approach 3: fitted to their own 400+ runs.
      const ch06::ComputeLaw law{1.69, 406.4, 410.7, 0.34, 0.28};
      //! [chinchilla]
      std::printf("L(N, D) = %.2f + %.1f / N^%.2f + %.1f / D^%.2f, C = 6 N D\n\n", law.e, law.a, law.alpha, law.b, law.beta);
      std::printf("%10s %12s %12s %8s %7s\n", "C (FLOPs)", "N_opt", "D_opt", "D / N", "loss");
      for (double c : {1e19, 1e21, 1e23, 5.76e23, 1e25, 1e27}) {
        const ch06::Allocation opt = ch06::compute_optimal(law, c);
        std::printf("%10.3g %12.3g %12.3g %8.1f %7.3f\n", c, opt.params, opt.tokens, opt.tokens / opt.params, opt.loss);
      }
      auto loss = [&](double n, double d) {
        return law.e + law.a / std::pow(n, law.alpha) + law.b / std::pow(d, law.beta);
      };
      std::printf("\nthe law's loss for two models trained with about the same compute:\n");
      std::printf("  Gopher     280e9 parameters, 300e9 tokens, C = %.3g: %.3f\n", 6 * 280e9 * 300e9, loss(280e9, 300e9));
      std::printf("  Chinchilla  70e9 parameters, 1.4e12 tokens, C = %.3g: %.3f\n", 6 * 70e9 * 1.4e12, loss(70e9, 1.4e12));
      std::printf("exponents: N_opt ~ C^%.3f, D_opt ~ C^%.3f\n", law.beta / (law.alpha + law.beta),
                  law.alpha / (law.alpha + law.beta));
      // The exponents before rounding (Besiroglu et al. 2024, from the paper's TeX source).
      const ch06::ComputeLaw unrounded{1.69, 406.4, 410.7, 0.3392, 0.2849};
      const double chinchilla_c = 5.76e23;  // Gopher's budget, Chinchilla's in Hoffmann et al.
      const ch06::Allocation rounded_opt = ch06::compute_optimal(law, chinchilla_c);
      const ch06::Allocation unrounded_opt = ch06::compute_optimal(unrounded, chinchilla_c);
      std::printf("\nthe budget of Gopher and Chinchilla, C = %.3g:\n", chinchilla_c);
      std::printf("  %-36s %8s %10s %8s %7s\n", "", "N_opt", "D_opt", "D / N", "loss");
      char rounded_label[64], unrounded_label[64];
      std::snprintf(rounded_label, sizeof rounded_label, "rounded: alpha %g, beta %g", law.alpha, law.beta);
      std::snprintf(unrounded_label, sizeof unrounded_label, "unrounded: alpha %g, beta %g", unrounded.alpha, unrounded.beta);
      std::printf("  %-36s %8.3g %10.3g %8.1f %7.3f\n", rounded_label, rounded_opt.params,
                  rounded_opt.tokens, rounded_opt.tokens / rounded_opt.params, rounded_opt.loss);
      std::printf("  %-36s %8.3g %10.3g %8.1f %7.3f\n", unrounded_label, unrounded_opt.params,
                  unrounded_opt.tokens, unrounded_opt.tokens / unrounded_opt.params, unrounded_opt.loss);
      std::printf("  %-36s %8.3g %10.3g %8.1f %7.3f\n", "Chinchilla as trained (rounded law)", 70e9, 1.4e12, 1.4e12 / 70e9,
                  loss(70e9, 1.4e12));
      // Chinchilla as trained spent 6 * 70e9 * 1.4e12 FLOPs, not quite the budget above: its own optimum.
      const double own_c = 6 * 70e9 * 1.4e12;
      const ch06::Allocation own_opt = ch06::compute_optimal(law, own_c);
      std::printf("\nChinchilla's own budget, C = 6 x 70e9 x 1.4e12 = %.3g:\n", own_c);
      std::printf("  %-36s %8.3g %10.3g %8.1f %7.4f\n", "rounded law's optimum", own_opt.params, own_opt.tokens,
                  own_opt.tokens / own_opt.params, own_opt.loss);
      std::printf("  %-36s %8.3g %10.3g %8.1f %7.4f\n", "Chinchilla as trained", 70e9, 1.4e12, 1.4e12 / 70e9,
                  loss(70e9, 1.4e12));
      std::printf("  Chinchilla's loss lies %.4f above the optimum at its own budget\n", loss(70e9, 1.4e12) - own_opt.loss);
      lesson.claim(rounded_opt.params < 0.6 * 70e9 && rounded_opt.tokens / rounded_opt.params > 4 * 20.0,
                   "with the rounded constants the optimum is a much smaller model on far more tokens per parameter than Chinchilla's 20");
      lesson.claim(unrounded_opt.tokens / unrounded_opt.params > 2 * 20.0,
                   "with the unrounded exponents the optimum is still far from 20 tokens per parameter");
      lesson.claim(unrounded_opt.params > rounded_opt.params &&
                       unrounded_opt.tokens / unrounded_opt.params < rounded_opt.tokens / rounded_opt.params,
                   "the unrounded exponents move the optimum towards Chinchilla's allocation");
      lesson.claim(loss(70e9, 1.4e12) - own_opt.loss < 0.01 && loss(70e9, 1.4e12) - rounded_opt.loss < 0.01,
                   "the loss is flat near the optimum: Chinchilla as trained is within 0.01 of the optimal loss, at its own "
                   "budget and at Gopher's");
      lesson.value("own_c", own_c, "%.3g");
      lesson.value("budget_c", chinchilla_c, "%.3g");
      lesson.value("own_gap", loss(70e9, 1.4e12) - own_opt.loss, "%.4f");
      lesson.value("own_params_billions", own_opt.params / 1e9, "%.1f");
      lesson.value("own_tokens_per_param", own_opt.tokens / own_opt.params, "%.0f");
      lesson.value("rounded_params_billions", rounded_opt.params / 1e9, "%.0f");
      lesson.value("rounded_tokens_per_param", rounded_opt.tokens / rounded_opt.params, "%.0f");
      lesson.value("unrounded_params_billions", unrounded_opt.params / 1e9, "%.0f");
      lesson.value("unrounded_tokens_per_param", unrounded_opt.tokens / unrounded_opt.params, "%.0f");
      lesson.value("chinchilla_tokens_per_param", 1.4e12 / 70e9, "%.0f");
      lesson.claim(loss(280e9, 300e9) > loss(70e9, 1.4e12), "the law gives Gopher a higher loss than Chinchilla for about the same compute");
    }
    lesson.end("chinchilla");

    // ---- Memorisation: real and shuffled labels on digits ------------------------------------
    const scalebook::Dataset digits = scalebook::load_digits();
    const std::vector<Index> order = scalebook::shuffled_indices(digits.x.rows(), 603);
    const std::vector<Index> train_rows(order.begin(), order.begin() + 500),
        test_rows(order.begin() + 500, order.begin() + 1000);
    const scalebook::Dataset train = scalebook::take_rows(digits, train_rows), test = scalebook::take_rows(digits, test_rows);
    const Matrix x_train = train.x / 16.0, x_test = test.x / 16.0;  // pixel counts 0..16 to 0..1
    const std::vector<int> y_train = labels_of(train.y), y_test = labels_of(test.y);
    lesson.value("digits_side", std::sqrt(static_cast<double>(digits.x.cols())), "%.0f");
    lesson.value("classes", *std::max_element(y_train.begin(), y_train.end()) + 1);
    lesson.value("train_images", train_rows.size());
    lesson.begin("memorisation");
    {
      //! [memorisation]
      // 500 training and 500 test digits; the training labels real, or
      // shuffled by 6.5 (the test labels stay real); one hidden layer.
      const ch06::LabelSplit shuffled = ch06::shuffle_train_labels(y_train, y_test, 604);
      //! [memorisation]
      std::printf("digits: 500 training and 500 test images, 10 classes (chance 10%%)\n");
      std::printf("one hidden ReLU layer, RMSprop, batch 32, 150 epochs; accuracy after training\n\n");
      std::printf("%6s %9s | %10s %10s | %10s %10s\n", "width", "params", "real train", "real test", "shuf train",
                  "shuf test");
      std::vector<double> widths, real_train, real_test, shuf_train, shuf_test;
      for (Index w : {4, 16, 64, 256, 512}) {
        scalebook::MlpConfig config;
        config.hidden = {w};
        config.batch_size = 32;
        config.epochs = 150;
        config.learning_rate = 3e-3;
        config.seed = 900 + w;
        const scalebook::ClassifierRun real = scalebook::train_classifier(x_train, y_train, x_test, 10, config);
        const scalebook::ClassifierRun shuf = scalebook::train_classifier(x_train, shuffled.train, x_test, 10, config);
        census.add(65 * w + (w + 1) * 10);
        census.add(65 * w + (w + 1) * 10);
        const ch06::AccuracyReport r = ch06::accuracy_report(real.train_logits, y_train, real.val_logits, y_test);
        const ch06::AccuracyReport s = ch06::accuracy_report(shuf.train_logits, shuffled.train, shuf.val_logits, shuffled.test);
        std::printf("%6d %9d | %9.1f%% %9.1f%% | %9.1f%% %9.1f%%\n", static_cast<int>(w), static_cast<int>(65 * w + (w + 1) * 10),
                    100 * r.train_accuracy, 100 * r.test_accuracy, 100 * s.train_accuracy, 100 * s.test_accuracy);
        widths.push_back(static_cast<double>(w));
        real_train.push_back(100 * r.train_accuracy);
        real_test.push_back(100 * r.test_accuracy);
        shuf_train.push_back(100 * s.train_accuracy);
        shuf_test.push_back(100 * s.test_accuracy);
      }
      lesson.table("ch06_memorisation.dat", {"width", "real_train", "real_test", "shuffled_train", "shuffled_test"},
                   {widths, real_train, real_test, shuf_train, shuf_test});
      bool real_fits = real_train.front() < 99.0, real_generalises = true;
      for (std::size_t i = 1; i < widths.size(); ++i) {
        real_fits = real_fits && real_train[i] > 99.0;
        real_generalises = real_generalises && real_test[i] > 90.0;
      }
      lesson.claim(real_fits && real_generalises,
                   "with real labels every network but the narrowest fits its training set and generalises");
      bool shuffled_at_chance = true;
      for (double t : shuf_test) shuffled_at_chance = shuffled_at_chance && t < 20.0;
      lesson.claim(shuffled_at_chance, "with shuffled labels the test accuracy stays near chance");
      lesson.claim(shuf_train.back() > 90.0 && shuf_train.back() > shuf_train.front(),
                   "with shuffled labels the widest networks fit almost every random label");
    }
    lesson.end("memorisation");

    // ---- Benchmark contamination ------------------------------------------------------------
    lesson.begin("contamination");
    {
      //! [contamination]
      // A benchmark of 400 test digits, half of which (the "seen" ones) were
      // also in the training set, labels and all.
      const std::vector<Index> bench_rows(order.begin() + 1000, order.begin() + 1400);
      const scalebook::Dataset bench = scalebook::take_rows(digits, bench_rows);
      Matrix x_seen = bench.x.topRows(200) / 16.0, x_fresh = bench.x.bottomRows(200) / 16.0;
      const std::vector<int> y_bench = labels_of(bench.y);
      const std::vector<int> y_seen(y_bench.begin(), y_bench.begin() + 200), y_fresh(y_bench.begin() + 200, y_bench.end());
      Matrix x_contaminated(700, 64);
      x_contaminated << x_train, x_seen;
      std::vector<int> y_contaminated = y_train;
      y_contaminated.insert(y_contaminated.end(), y_seen.begin(), y_seen.end());
      //! [contamination]
      const ch06::LabelSplit shuffled = ch06::shuffle_train_labels(y_train, y_fresh, 605);
      std::vector<int> y_memoriser = shuffled.train;  // knows nothing about digits,
      y_memoriser.insert(y_memoriser.end(), y_seen.begin(), y_seen.end());  // only the seen answers
      // The benchmark's items as they are, shifted one pixel to the right, and with noise of
      // standard deviation 0.2 on every pixel's intensity: seen, fresh, seen, fresh, seen, fresh.
      const double noise_sd = 0.2;
      Rng noise_rng(606);
      const Matrix x_seen_noisy = noisy(x_seen, noise_sd, noise_rng), x_fresh_noisy = noisy(x_fresh, noise_sd, noise_rng);
      Matrix x_eval(1200, 64);
      x_eval << x_seen, x_fresh, shifted_right(x_seen), shifted_right(x_fresh), x_seen_noisy, x_fresh_noisy;
      std::printf("benchmark: 400 digits, 200 of them also in training (seen)\n");
      std::printf("width 256, 150 epochs on 500 + 200 images; accuracy on\n\n");
      char noise_title[32];
      std::snprintf(noise_title, sizeof noise_title, "noise sd %.1f", noise_sd);
      std::printf("%-36s %9s %6s %6s | %-13s | %s\n", "", "", "", "", "shifted right", noise_title);
      std::printf("%-36s %9s %6s %6s | %6s %6s | %6s %6s\n", "", "benchmark", "seen", "fresh", "seen", "fresh", "seen",
                  "fresh");
      double accuracy[2][6];  // model, then seen, fresh, shifted seen, shifted fresh, noisy seen, noisy fresh
      for (int which = 0; which < 2; ++which) {
        scalebook::MlpConfig config;
        config.hidden = {256};
        config.batch_size = 32;
        config.epochs = 150;
        config.learning_rate = 3e-3;
        config.seed = 950 + which;
        const std::vector<int>& labels = which == 0 ? y_contaminated : y_memoriser;
        const scalebook::ClassifierRun run = scalebook::train_classifier(x_contaminated, labels, x_eval, 10, config);
        census.add(65 * 256 + 257 * 10);
        for (int part = 0; part < 6; part += 2) {
          const ch06::AccuracyReport r = ch06::accuracy_report(run.val_logits.middleRows(200 * part, 200), y_seen,
                                                               run.val_logits.middleRows(200 * (part + 1), 200), y_fresh);
          accuracy[which][part] = r.train_accuracy;
          accuracy[which][part + 1] = r.test_accuracy;
        }
        const double* a = accuracy[which];
        std::printf("%-36s %8.1f%% %5.1f%% %5.1f%% | %5.1f%% %5.1f%% | %5.1f%% %5.1f%%\n",
                    which == 0 ? "real labels" : "500 shuffled + the 200 seen answers", 100 * (a[0] + a[1]) / 2,
                    100 * a[0], 100 * a[1], 100 * a[2], 100 * a[3], 100 * a[4], 100 * a[5]);
      }
      const double* real = accuracy[0];
      const double* memoriser = accuracy[1];
      lesson.value("bench_items", x_seen.rows() + x_fresh.rows());
      lesson.value("bench_seen", x_seen.rows());
      lesson.value("noise_sd", noise_sd, "%.1f");
      lesson.value("real_shifted_seen", 100 * real[2], "%.1f%%");
      lesson.value("real_shifted_fresh", 100 * real[3], "%.1f%%");
      lesson.value("real_fresh", 100 * real[1], "%.1f%%");
      lesson.value("real_noisy_fresh", 100 * real[5], "%.1f%%");
      lesson.value("real_noisy_seen", 100 * real[4], "%.1f%%");
      lesson.value("memoriser_fresh", 100 * memoriser[1], "%.1f%%");
      lesson.value("memoriser_noisy_seen", 100 * memoriser[4], "%.1f%%");
      const double real_noise_cost = std::max(real[0] - real[4], real[1] - real[5]);
      lesson.value("real_noise_cost_points", 100 * real_noise_cost, "%.1f");
      lesson.claim(memoriser[0] > 0.99 && memoriser[1] < 0.5 && memoriser[1] < real[1],
                   "the memoriser answers the seen items from memory and does poorly on the fresh ones");
      lesson.claim(real[2] < real[0] - 0.3 && real[3] < real[1] - 0.3,
                   "the one-pixel shift costs the model trained on real labels much of its accuracy, on fresh items as on seen ones");
      lesson.claim(real_noise_cost < 0.06 && memoriser[0] - memoriser[4] > 0.3 && memoriser[4] < 0.6,
                   "the noise costs the model that generalises a few points at most, while the memoriser's seen answers "
                   "fall by far more, towards its fresh level");
    }
    lesson.end("contamination");

    lesson.begin("cost");
    std::printf("networks trained: %d, from %ld to %ld parameters\n", census.networks, static_cast<long>(census.fewest),
                static_cast<long>(census.most));
    lesson.end("cost");
  });
}
