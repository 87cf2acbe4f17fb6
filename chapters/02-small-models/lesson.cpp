// Chapter 2 lesson — small models on scarce data.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet, and quotes the values named with lesson.value as {{name}}) and writes the
// data of the figures: ch02_curves.dat, ch02_smoothed.dat
// and ch02_best.dat (the 500-epoch curves), ch02_gap.dat and ch02_large.dat (a small and a larger
// model as the training set shrinks).
// Usage: ch02_lesson [data folder] [--book]. Deterministic: fixed seeds, fixed splits, one thread.
//
// The K-fold splits, the smoothing and the best epoch are the chapter's exercises; so are the
// layers and the RMSprop step of the network trained "by hand" below. The long experiments use
// lib's trainer (scalebook/mlp.hpp), the same computation in float32, built for speed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scalebook/data.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/mlp.hpp"
#include "scalebook/random.hpp"
#include "scalebook/standardize.hpp"
#include "small_models.hpp"

namespace ch02 = scalebook::ch02;
using scalebook::Dataset;
using scalebook::Index;
using scalebook::Matrix;
using scalebook::RowVector;
using scalebook::Vector;

namespace {

//! [fold-data]
// One fold's rows, standardised with its training part's statistics (chapter 1).
struct FoldData {
  Matrix x_train, x_val;
  Vector y_train, y_val;
};

FoldData fold_data(const Dataset& data, const ch02::Fold& fold) {
  const Dataset train = scalebook::take_rows(data, fold.train), val = scalebook::take_rows(data, fold.validation);
  const scalebook::Standardizer s = scalebook::fit_standardizer(train.x);
  return {scalebook::standardize(train.x, s), scalebook::standardize(val.x, s), train.y, val.y};
}
//! [fold-data]

//! [by-hand]
// A Dense(h)-Dense(1) network trained with the chapter's own functions:
// forward (2.1), backward (2.2) and RMSprop (2.3), on shuffled batches of
// 16, with the draws of lib's trainer (Glorot-uniform, row by row; one
// Fisher-Yates shuffle per epoch). Returns the validation MAE per epoch.
std::vector<double> train_by_hand(const FoldData& d, Index h, int epochs, std::uint64_t seed) {
  scalebook::Rng rng(seed);
  auto glorot = [&](Index in, Index out) {
    Matrix w(in, out);
    const double limit = std::sqrt(6.0 / static_cast<double>(in + out));
    for (Index r = 0; r < in; ++r)
      for (Index c = 0; c < out; ++c)
        w(r, c) = static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
    return w;
  };
  Matrix w1 = glorot(d.x_train.cols(), h), w2 = glorot(h, 1);
  Matrix b1 = Matrix::Zero(1, h), b2 = Matrix::Zero(1, 1);
  Matrix v_w1 = Matrix::Zero(w1.rows(), w1.cols()), v_w2 = Matrix::Zero(h, 1);
  Matrix v_b1 = Matrix::Zero(1, h), v_b2 = Matrix::Zero(1, 1);
  const Index n = d.x_train.rows();
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<double> val_mae;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (Index i = n - 1; i > 0; --i)
      std::swap(order[static_cast<std::size_t>(i)],
                order[rng.next_u64() % static_cast<std::uint64_t>(i + 1)]);
    for (Index start = 0; start < n; start += 16) {
      const Index m = std::min<Index>(16, n - start);
      Matrix x(m, d.x_train.cols()), y(m, 1);
      for (Index i = 0; i < m; ++i) {
        x.row(i) = d.x_train.row(order[static_cast<std::size_t>(start + i)]);
        y(i, 0) = d.y_train(order[static_cast<std::size_t>(start + i)]);
      }
      const Matrix hidden = ch02::dense_forward(x, w1, b1, true);
      const Matrix out = ch02::dense_forward(hidden, w2, b2, false);
      const Matrix grad_out = 2.0 * (out - y) / static_cast<double>(m);  // d MSE
      const ch02::DenseGradients g2 = ch02::dense_backward(hidden, w2, b2, false, grad_out);
      const ch02::DenseGradients g1 = ch02::dense_backward(x, w1, b1, true, g2.dx);
      ch02::rmsprop_step(w2, g2.dw, v_w2);
      ch02::rmsprop_step(b2, g2.db, v_b2);
      ch02::rmsprop_step(w1, g1.dw, v_w1);
      ch02::rmsprop_step(b1, g1.db, v_b1);
    }
    const Matrix pred = ch02::dense_forward(ch02::dense_forward(d.x_val, w1, b1, true), w2, b2, false);
    val_mae.push_back((pred.col(0) - d.y_val).cwiseAbs().mean());
  }
  return val_mae;
}
//! [by-hand]

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    const scalebook::BostonSplit boston = scalebook::load_boston_split();
    const Dataset data = boston.train;  // the book's 404 training rows
    //! [kfold]
    const std::vector<ch02::Fold> folds = ch02::kfold_splits(data.x.rows(), 4);
    std::vector<FoldData> fold_rows;
    for (const ch02::Fold& fold : folds) fold_rows.push_back(fold_data(data, fold));
    //! [kfold]
    const scalebook::MlpConfig defaults;  // DLwP's model: two Dense(64, relu), batch 16, RMSprop
    const Index fold_train_rows = static_cast<Index>(folds[0].train.size());
    const Index updates_per_epoch = (fold_train_rows + defaults.batch_size - 1) / defaults.batch_size;
    lesson.value("boston_rows", boston.train.x.rows() + boston.test.x.rows());
    lesson.value("train_rows", data.x.rows());
    lesson.value("folds", folds.size());
    lesson.value("fold_rows", folds[0].validation.size());
    lesson.value("fold_train_rows", fold_train_rows);
    lesson.value("width", defaults.hidden.front());
    lesson.value("batch", defaults.batch_size);
    lesson.value("epochs", defaults.epochs);
    lesson.value("updates_per_epoch", updates_per_epoch);
    // DLwP's first edition trained its K-fold with batches of one row: an update per row.
    lesson.value("update_ratio", static_cast<double>(fold_train_rows) / static_cast<double>(updates_per_epoch), "%.0f");

    // ---- DLwP's K-fold table --------------------------------------------------------------
    lesson.begin("kfold");
    {
      std::printf("4-fold validation on %d rows: %d validate, %d train per fold\n",
                  static_cast<int>(data.x.rows()), static_cast<int>(folds[0].validation.size()),
                  static_cast<int>(folds[0].train.size()));
      std::printf("Dense(64, relu) - Dense(64, relu) - Dense(1), RMSprop, MSE, batch 16, 100 epochs\n\n");
      std::printf("%-24s %7s %7s %7s %7s %7s\n", "", "fold 1", "fold 2", "fold 3", "fold 4", "mean");
      double sum = 0.0, lowest = 1e300, highest = 0.0;
      std::printf("%-24s", "validation MAE (ours)");
      for (std::size_t f = 0; f < folds.size(); ++f) {
        scalebook::MlpConfig config;
        config.seed = 2000 + f;
        const FoldData& d = fold_rows[f];
        const double mae = scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config).val_mae.back();
        std::printf(" %7.2f", mae);
        sum += mae;
        lowest = std::min(lowest, mae);
        highest = std::max(highest, mae);
      }
      std::printf(" %7.2f\n", sum / 4.0);
      std::printf("%-24s %7.2f %7.2f %7.2f %7.2f %7.2f\n", "DLwP 2nd ed. (Keras)", 2.11, 3.08, 2.65, 2.43, 2.57);
      // Chapter 1 trained the same network on the same folds with seeds 1000 + fold.
      double chapter1_sum = 0.0;
      for (std::size_t f = 0; f < folds.size(); ++f) {
        scalebook::MlpConfig config;
        config.seed = 1000 + f;
        const FoldData& d = fold_rows[f];
        const double mae = scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config).val_mae.back();
        chapter1_sum += mae / 4.0;
      }
      std::printf("\nthe same folds with chapter 1's seeds (1000 + fold): mean %.3f; with ours (2000 + fold): %.3f\n",
                  chapter1_sum, sum / 4.0);
      std::printf("the two means differ by %.3f; our folds span %.3f\n", std::abs(chapter1_sum - sum / 4.0),
                  highest - lowest);
      lesson.claim(std::abs(chapter1_sum - sum / 4.0) < highest - lowest,
                   "changing the seeds moves the mean by less than the folds differ from one another");
    }
    lesson.end("kfold");

    // ---- The same network with the chapter's functions ------------------------------------
    lesson.begin("by-hand");
    {
      const int epochs = 20;
      const std::vector<double> mine = train_by_hand(fold_rows[0], 64, epochs, 77);
      scalebook::MlpConfig config;
      config.hidden = {64};
      config.epochs = epochs;
      config.seed = 77;
      const FoldData& d = fold_rows[0];
      const scalebook::History lib = scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config);
      std::printf("Dense(64, relu) - Dense(1) on fold 1, same seed: validation MAE\n\n");
      std::printf("%6s %18s %18s\n", "epoch", "chapter functions", "lib (float32)");
      for (int e : {1, 2, 5, 10, 20}) {
        std::printf("%6d %18.4f %18.4f\n", e, mine[static_cast<std::size_t>(e - 1)],
                    lib.val_mae[static_cast<std::size_t>(e - 1)]);
      }
      double largest = 0.0;
      for (int e = 0; e < epochs; ++e) {
        const double a = mine[static_cast<std::size_t>(e)], b = lib.val_mae[static_cast<std::size_t>(e)];
        largest = std::max(largest, std::abs(a - b) / std::abs(a));
      }
      std::printf("\nlargest relative difference over the %d epochs: %.1e\n", epochs, largest);
      lesson.claim(largest < 1e-6, "the chapter's functions and lib's float32 trainer agree to 1e-6 at every epoch");
      lesson.value("by_hand_epochs", epochs);
    }
    lesson.end("by-hand");

    // ---- 500 epochs: where validation stops improving -------------------------------------
    lesson.begin("curves");
    {
      const int epochs = 500;
      std::vector<double> val(epochs, 0.0), train(epochs, 0.0);
      for (std::size_t f = 0; f < folds.size(); ++f) {
        scalebook::MlpConfig config;
        config.epochs = epochs;
        config.seed = 3000 + f;
        const FoldData& d = fold_rows[f];
        const scalebook::History h = scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config);
        for (int e = 0; e < epochs; ++e) {
          val[static_cast<std::size_t>(e)] += h.val_mae[static_cast<std::size_t>(e)] / 4.0;
          train[static_cast<std::size_t>(e)] += h.mae[static_cast<std::size_t>(e)] / 4.0;
        }
      }
      //! [smoothing]
      // As DLwP's first edition: drop the first 10 epochs (their scale dwarfs
      // the rest), smooth with factor 0.9. The book reads the plot by eye;
      // the lesson takes the smallest smoothed value.
      const double factor = 0.9;
      const std::vector<double> tail(val.begin() + 10, val.end());
      const std::vector<double> smooth = ch02::smooth_curve(tail, factor);
      const Index best = ch02::best_epoch(smooth) + 10 + 1;  // 1-based epoch
      //! [smoothing]
      std::printf("mean over the 4 folds of the MAE per epoch, 500 epochs\n\n");
      std::printf("%6s %10s %12s %14s\n", "epoch", "train MAE", "val MAE", "val smoothed");
      for (int e : {1, 10, 25, 50, 75, 100, 150, 200, 300, 400, 500}) {
        char smoothed[32] = "";
        if (e > 10) std::snprintf(smoothed, sizeof smoothed, "%.4f", smooth[static_cast<std::size_t>(e - 11)]);
        std::printf("%6d %10.3f %12.3f %14s\n", e, train[static_cast<std::size_t>(e - 1)],
                    val[static_cast<std::size_t>(e - 1)], smoothed);
      }
      std::printf("\nvalidation stops improving after epoch %d (smoothed MAE %.3f)\n",
                  static_cast<int>(best), smooth[static_cast<std::size_t>(best - 11)]);
      lesson.claim(train.back() < train[static_cast<std::size_t>(best - 1)] &&
                       smooth.back() > smooth[static_cast<std::size_t>(best - 11)],
                   "after the best epoch the training error keeps falling while the validation error creeps up");
      // The trailing average lags: the same minimum on the unsmoothed curve, and on a centred
      // average of 19 epochs (9 each side), over the epochs the smoothing sees (11 .. 500).
      const int half = 9;
      const Index raw_best = ch02::best_epoch(tail) + 10 + 1;
      std::vector<double> centred;
      for (int e = 11 + half; e <= epochs - half; ++e) {
        double sum = 0.0;
        for (int j = e - half; j <= e + half; ++j) sum += val[static_cast<std::size_t>(j - 1)];
        centred.push_back(sum / (2 * half + 1));
      }
      const Index centred_best = ch02::best_epoch(centred) + 11 + half;
      const double lag = factor / (1.0 - factor);
      std::printf("lowest point: epoch %d unsmoothed, %d in a centred average over %d epochs, %d smoothed\n",
                  static_cast<int>(raw_best), static_cast<int>(centred_best), 2 * half + 1, static_cast<int>(best));
      std::printf("(the smoothing's weights lie on average 0.9/(1 - 0.9) = %.0f epochs back)\n", lag);
      lesson.value("long_epochs", epochs);
      lesson.value("smoothing_factor", factor, "%.1f");
      lesson.value("lag", lag, "%.0f");
      lesson.value("centred_width", 2 * half + 1);
      lesson.claim(best > centred_best && std::abs(static_cast<double>(best - centred_best) - lag) <= 3.0,
                   "the smoothed minimum comes about the lag's 9 epochs after the centred one");
      std::vector<double> epoch_numbers, smooth_epochs;
      for (int e = 1; e <= epochs; ++e) {
        epoch_numbers.push_back(e);
        if (e > 10) smooth_epochs.push_back(e);
      }
      lesson.table("ch02_curves.dat", {"epoch", "train_mae", "val_mae"}, {epoch_numbers, train, val});
      lesson.table("ch02_smoothed.dat", {"epoch", "val_smoothed"}, {smooth_epochs, smooth});
      lesson.table("ch02_best.dat", {"epoch", "val_smoothed"},
                   {{static_cast<double>(best)}, {smooth[static_cast<std::size_t>(best - 11)]}});
    }
    lesson.end("curves");

    // ---- Scarce data: a small and a large model as the training set shrinks ---------------
    lesson.begin("gap");
    {
      //! [gap-experiment]
      // Fold 1's validation rows; its first 303, 152 or 76 training rows (the
      // rows were shuffled once, so any prefix is a fair sample); 100 epochs.
      struct Model {
        const char* name;
        std::vector<Index> hidden;
      };
      const Model models[2] = {{"2 x 64", {64, 64}}, {"3 x 128", {128, 128, 128}}};
      //! [gap-experiment]
      const int epochs = 100, seeds = 3;
      const FoldData& d = fold_rows[0];
      lesson.value("gap_epochs", epochs);
      lesson.value("gap_seeds", seeds);
      lesson.value("small_layers", models[0].hidden.size());
      lesson.value("small_width", models[0].hidden.front());
      lesson.value("large_layers", models[1].hidden.size());
      lesson.value("large_width", models[1].hidden.front());
      auto parameters = [](const std::vector<Index>& hidden) {
        Index count = 0, in = 12;
        for (Index width : hidden) {
          count += (in + 1) * width;  // weights and biases
          in = width;
        }
        return static_cast<int>(count + in + 1);  // the output unit
      };
      std::printf("parameters: %d (2 x 64) and %d (3 x 128)\n", parameters(models[0].hidden),
                  parameters(models[1].hidden));
      std::printf("fold 1, %d epochs, the first rows of its training part; MAE after\n"
                  "training on those rows and on the 101 validation rows, mean of %d seeds\n\n",
                  epochs, seeds);
      std::printf("%6s %-8s %10s %10s %10s %10s\n", "rows", "model", "train MAE", "val MAE", "gap", "best val");
      std::vector<double> rows_column, gap_small, gap_large, val_small, val_large, best_val_small, best_val_large;
      std::vector<double> curve_small(epochs, 0.0), curve_large(epochs, 0.0);
      for (double fraction : {1.0, 0.5, 0.25}) {
        const Index n = static_cast<Index>(std::lround(fraction * static_cast<double>(d.x_train.rows())));
        rows_column.push_back(static_cast<double>(n));
        for (int m = 0; m < 2; ++m) {
          double train_mae = 0.0, val_mae = 0.0, best = 0.0;
          for (int seed = 0; seed < seeds; ++seed) {
            scalebook::MlpConfig config;
            config.hidden = models[m].hidden;
            config.epochs = epochs;
            config.seed = 4000 + 10 * seed + m;
            const scalebook::History h =
                scalebook::train_mlp(d.x_train.topRows(n), d.y_train.head(n), d.x_val, d.y_val, config);
            train_mae += h.final_train_mae / seeds;
            val_mae += h.val_mae.back() / seeds;
            best += *std::min_element(h.val_mae.begin(), h.val_mae.end()) / seeds;
            if (fraction == 1.0) {
              std::vector<double>& curve = m == 0 ? curve_small : curve_large;
              for (int e = 0; e < epochs; ++e) curve[static_cast<std::size_t>(e)] += h.val_mae[static_cast<std::size_t>(e)] / seeds;
            }
          }
          std::printf("%6d %-8s %10.3f %10.3f %10.3f %10.3f\n", static_cast<int>(n), models[m].name, train_mae,
                      val_mae, val_mae - train_mae, best);
          (m == 0 ? gap_small : gap_large).push_back(val_mae - train_mae);
          (m == 0 ? val_small : val_large).push_back(val_mae);
          (m == 0 ? best_val_small : best_val_large).push_back(best);
        }
      }
      const Index best_small = ch02::best_epoch(curve_small) + 1, best_large = ch02::best_epoch(curve_large) + 1;
      std::printf("\nmean validation curve with 303 rows: lowest at epoch %d (2 x 64) and %d (3 x 128)\n",
                  static_cast<int>(best_small), static_cast<int>(best_large));
      // How flat the larger model's curve is after its lowest point: the next epoch, at least ten
      // later, within 0.005 of that lowest value; and the averages over 20 epochs.
      const double large_low = curve_large[static_cast<std::size_t>(best_large - 1)], again_within = 0.005;
      const int window = 20;
      int again = 0;
      for (int e = static_cast<int>(best_large) + 10; e <= epochs && again == 0; ++e)
        if (curve_large[static_cast<std::size_t>(e - 1)] <= large_low + again_within) again = e;
      std::printf("3 x 128: lowest %.3f at epoch %d, within %.3f of it again at epoch %d\n", large_low,
                  static_cast<int>(best_large), again_within, again);
      lesson.value("large_best_epoch", best_large);
      lesson.value("again_within", again_within, "%.3f");
      lesson.value("window", window);
      lesson.value("half_rows", rows_column[1], "%.0f");
      std::printf("averages over %d epochs:   ", window);
      for (int start = window + 1; start <= epochs; start += window)
        std::printf(" %7s", (std::to_string(start) + "-" + std::to_string(start + window - 1)).c_str());
      std::vector<double> windows_large;
      for (int m = 0; m < 2; ++m) {
        const std::vector<double>& curve = m == 0 ? curve_small : curve_large;
        std::printf("\n  %-24s", models[m].name);
        for (int start = window + 1; start <= epochs; start += window) {
          double sum = 0.0;
          for (int e = start; e < start + window; ++e) sum += curve[static_cast<std::size_t>(e - 1)] / window;
          std::printf(" %7.3f", sum);
          if (m == 1) windows_large.push_back(sum);
        }
      }
      std::printf("\n");
      const std::size_t last = rows_column.size() - 1;
      std::printf("gap growth from %d to %d rows: %+.3f (2 x 64), %+.3f (3 x 128)\n", static_cast<int>(rows_column[0]),
                  static_cast<int>(rows_column[last]), gap_small[last] - gap_small[0], gap_large[last] - gap_large[0]);
      std::printf("final minus best val MAE, 2 x 64 / 3 x 128:\n ");
      bool large_flattered = true;
      for (std::size_t i = 0; i <= last; ++i) {
        const double small_drop = val_small[i] - best_val_small[i], large_drop = val_large[i] - best_val_large[i];
        std::printf(" %d rows %.3f / %.3f%s", static_cast<int>(rows_column[i]), small_drop, large_drop, i < last ? ";" : "");
        large_flattered = large_flattered && large_drop > small_drop;
      }
      std::printf("\n");
      lesson.claim(again - best_large >= 25 && again - best_large <= 40,
                   "the larger model's curve comes within 0.005 of its low again about thirty epochs later");
      bool later_worse = true;
      for (std::size_t w = 1; w < windows_large.size(); ++w)
        later_worse = later_worse && windows_large[w] > windows_large[0] && windows_large[w] - windows_large[0] < 0.1;
      lesson.claim(later_worse, "afterwards the larger model is slightly worse, by the averages over 20 epochs");
      lesson.claim(large_flattered,
                   "the distance from the final to the best validation MAE is the larger for the larger model at every size");
      bool gaps_grow = true, large_gap_larger = true, large_best_lower = true;
      for (std::size_t i = 0; i <= last; ++i) {
        if (i > 0) gaps_grow = gaps_grow && gap_small[i] > gap_small[i - 1] && gap_large[i] > gap_large[i - 1];
        large_gap_larger = large_gap_larger && gap_large[i] > gap_small[i];
        large_best_lower = large_best_lower && best_val_large[i] < best_val_small[i];
      }
      lesson.claim(gaps_grow, "the gap grows as the rows get fewer, for both models");
      lesson.claim(large_gap_larger, "the larger model's gap is the larger one at every size");
      lesson.claim(gap_small[last] - gap_small[0] > gap_large[last] - gap_large[0],
                   "the small model's gap grows the more as rows are removed");
      lesson.claim(large_best_lower, "stopped at its best epoch, the larger model looks better at every size");
      lesson.claim(best_large < best_small, "the larger model's validation curve reaches its lowest point earlier");
      lesson.table("ch02_gap.dat", {"rows", "gap_small", "gap_large", "val_small", "val_large"},
                   {rows_column, gap_small, gap_large, val_small, val_large});
      std::vector<double> epoch_numbers;
      for (int e = 1; e <= epochs; ++e) epoch_numbers.push_back(e);
      lesson.table("ch02_large.dat", {"epoch", "val_small", "val_large"}, {epoch_numbers, curve_small, curve_large});
    }
    lesson.end("gap");
  });
}
