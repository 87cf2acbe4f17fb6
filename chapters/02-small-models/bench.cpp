// Chapter 2 benchmark — DLwP's K-fold on Boston housing (4 folds x 100 epochs, Dense(64) -
// Dense(64) - Dense(1), batch 16, RMSprop, features standardised per fold), timed three ways:
//
//   1. the chapter's own functions of the build's track, through small_models.hpp: 2.4
//      kfold_splits, 2.1 dense_forward, 2.2 dense_backward and 2.3 rmsprop_step, in double,
//      compiled for speed (ch02_bench_track). The reference's in the reference track, the
//      student's in any other (the student edition's `./workbook bench 2`);
//   2. lib's trainer (scalebook/mlp.hpp): the same computation in float32, hand-blocked;
//   3. PyTorch (tools/scalebook/bench/ch02_torch.py, one thread, float32), when python3-torch is installed.
//
//   ch02_bench [--no-torch] [--repeat N]
//
// Every row is timed the same way: the best of N runs (default 3) of the whole K-fold, in CPU
// seconds of the process (a shared machine's other work does not count), data loading excluded;
// the Python script takes the same --repeat N. A benchmark, not a test: PyTorch stays optional.
// Before timing the track, its 2.4 must split as lib's kfold_splits does and its 2.1 to 2.3 must
// train one fold for two epochs as lib's trainer does: timing an unfinished or wrong answer would
// mean nothing. Exit status 3 says why not, naming the exercise to finish first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "scalebook/data.hpp"
#include "scalebook/mlp.hpp"
#include "scalebook/random.hpp"
#include "scalebook/standardize.hpp"
#include "small_models.hpp"

#ifndef SCALEBOOK_TORCH_BENCH
#error "chapters/02-small-models/CMakeLists.txt defines SCALEBOOK_TORCH_BENCH"
#endif
#ifndef SCALEBOOK_BENCH_TRACK
#error "chapters/02-small-models/CMakeLists.txt defines SCALEBOOK_BENCH_TRACK (whose exercises are timed)"
#endif

namespace {

using scalebook::Index;
using scalebook::Matrix;
using scalebook::Vector;

constexpr int kFolds = 4;
constexpr int kEpochs = 100;
constexpr Index kBatch = 16;
constexpr Index kHidden = 64;
constexpr std::uint64_t kSeed = 2000;  // fold f trains with seed kSeed + f, on every row

struct Run {
  double seconds = 0.0;
  std::vector<double> maes;  // each fold's validation MAE after the last epoch
};

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// The best of `repeat` runs of one K-fold, in CPU seconds.
Run best_of(int repeat, const std::function<std::vector<double>()>& kfold) {
  Run best;
  best.seconds = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const double start = cpu_seconds();
    std::vector<double> maes = kfold();
    const double seconds = cpu_seconds() - start;
    if (seconds < best.seconds) best = {seconds, std::move(maes)};
  }
  return best;
}

struct FoldData {
  Matrix x_train, x_val;
  Vector y_train, y_val;
};

// One fold's rows, standardised with its training part's statistics (chapter 1).
FoldData fold_data(const scalebook::Dataset& data, const std::vector<Index>& train_rows,
                   const std::vector<Index>& val_rows) {
  const scalebook::Dataset train = scalebook::take_rows(data, train_rows);
  const scalebook::Dataset val = scalebook::take_rows(data, val_rows);
  const scalebook::Standardizer s = scalebook::fit_standardizer(train.x);
  return {scalebook::standardize(train.x, s), scalebook::standardize(val.x, s), train.y, val.y};
}

// lib's trainer on every fold: scalebook::kfold_splits and scalebook::train_mlp.
std::vector<double> kfold_lib(const scalebook::Dataset& data) {
  std::vector<double> maes;
  const std::vector<scalebook::Fold> folds = scalebook::kfold_splits(data.x.rows(), kFolds);
  for (std::size_t f = 0; f < folds.size(); ++f) {
    const FoldData d = fold_data(data, folds[f].train, folds[f].validation);
    scalebook::MlpConfig config;
    config.hidden = {kHidden, kHidden};
    config.epochs = kEpochs;
    config.batch_size = kBatch;
    config.seed = kSeed + f;
    maes.push_back(scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config).val_mae.back());
  }
  return maes;
}

// One Dense layer's parameters and RMSprop's running mean squares.
struct Layer {
  Matrix w, b, v_w, v_b;
  bool relu = true;
};

// The same network, draws and steps as lib's trainer (scalebook/mlp.hpp: Glorot-uniform weights
// drawn row by row, layer after layer, rounded to float as lib's are; one Fisher-Yates shuffle per
// epoch; MSE loss), with the track's 2.1, 2.2 and 2.3. Returns the validation MAE after the last
// epoch (computed after every epoch, as lib's trainer and PyTorch's do).
double train_track(const FoldData& d, std::uint64_t seed, int epochs = kEpochs) {
  scalebook::Rng rng(seed);
  std::vector<Layer> layers;
  const std::vector<Index> widths = {d.x_train.cols(), kHidden, kHidden, 1};
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    const Index in = widths[l], out = widths[l + 1];
    Layer layer{Matrix(in, out), Matrix::Zero(1, out), Matrix::Zero(in, out), Matrix::Zero(1, out),
                l + 2 < widths.size()};
    const double limit = std::sqrt(6.0 / static_cast<double>(in + out));
    for (Index r = 0; r < in; ++r)
      for (Index c = 0; c < out; ++c) layer.w(r, c) = static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
    layers.push_back(std::move(layer));
  }
  auto forward = [&](const Matrix& x, std::vector<Matrix>* inputs) {
    Matrix a = x;
    for (const Layer& layer : layers) {
      if (inputs != nullptr) inputs->push_back(a);
      a = scalebook::ch02::dense_forward(a, layer.w, layer.b, layer.relu);
    }
    return a;
  };
  const Index n = d.x_train.rows();
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  double val_mae = 0.0;
  std::vector<Matrix> inputs;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (Index i = n - 1; i > 0; --i)
      std::swap(order[static_cast<std::size_t>(i)], order[rng.next_u64() % static_cast<std::uint64_t>(i + 1)]);
    for (Index start = 0; start < n; start += kBatch) {
      const Index m = std::min(kBatch, n - start);
      Matrix x(m, d.x_train.cols()), y(m, 1);
      for (Index i = 0; i < m; ++i) {
        x.row(i) = d.x_train.row(order[static_cast<std::size_t>(start + i)]);
        y(i, 0) = d.y_train(order[static_cast<std::size_t>(start + i)]);
      }
      inputs.clear();
      Matrix grad = 2.0 * (forward(x, &inputs) - y) / static_cast<double>(m);  // d MSE / d output
      for (std::size_t l = layers.size(); l-- > 0;) {
        Layer& layer = layers[l];
        const scalebook::ch02::DenseGradients g =
            scalebook::ch02::dense_backward(inputs[l], layer.w, layer.b, layer.relu, grad);
        scalebook::ch02::rmsprop_step(layer.w, g.dw, layer.v_w);
        scalebook::ch02::rmsprop_step(layer.b, g.db, layer.v_b);
        grad = g.dx;
      }
    }
    val_mae = (forward(d.x_val, nullptr).col(0) - d.y_val).cwiseAbs().mean();
  }
  return val_mae;
}

// The track's K-fold: its 2.4 splits the rows; its 2.1 to 2.3 train each fold.
std::vector<double> kfold_track(const scalebook::Dataset& data) {
  std::vector<double> maes;
  const scalebook::ch02::Folds folds = scalebook::ch02::kfold_splits(data.x.rows(), kFolds);
  for (std::size_t f = 0; f < folds.size(); ++f) {
    const FoldData d = fold_data(data, folds[f].train, folds[f].validation);
    maes.push_back(train_track(d, kSeed + f));
  }
  return maes;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

// Runs the PyTorch script; returns its seconds, or a negative number when it cannot run.
double torch_seconds(int repeat, std::string& version, double& torch_mae, std::string& note) {
  const char* python = std::getenv("SCALEBOOK_PYTHON");
  std::string interpreter = python != nullptr ? python : "";
  if (interpreter.empty()) {
    // Debian's python3 has python3-torch; a python3 earlier on PATH (pyenv, venv) may not.
    interpreter = std::system("test -x /usr/bin/python3") == 0 ? "/usr/bin/python3" : "python3";
  }
  const std::string probe = interpreter + " -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    note = "PyTorch: not installed for " + interpreter + " (apt-get install python3-torch); skipped";
    return -1.0;
  }
  const std::string command = interpreter + " '" SCALEBOOK_TORCH_BENCH "' '" + scalebook::data_dir().string() +
                              "' --repeat " + std::to_string(repeat);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1.0;
  char line[512];
  double seconds = -1.0;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string text(line);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.rfind("torch_seconds ", 0) == 0) seconds = std::atof(text.c_str() + 14);
    else if (text.rfind("torch_mean_mae ", 0) == 0) torch_mae = std::atof(text.c_str() + 15);
    else if (text.rfind("torch_version ", 0) == 0) version = text.substr(14);
  }
  if (pclose(pipe) != 0 || seconds <= 0.0) note = "PyTorch: the run failed (" + command + ")";
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  bool torch = true;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-torch") == 0) {
      torch = false;
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      repeat = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--no-torch] [--repeat N]\n", argv[0]);
      return 2;
    }
  }
  const std::string track = SCALEBOOK_BENCH_TRACK;  // "yours" or "the reference's"
  const std::string whose = track == "yours" ? "your" : track;  // before a noun
  scalebook::Dataset data;
  Run lib;
  try {
    data = scalebook::load_boston_split().train;
    lib = best_of(repeat, [&] { return kfold_lib(data); });
  } catch (const scalebook::Error& e) {
    std::fprintf(stderr, "ch02_bench: %s\n", e.what());
    return 1;
  }
  // Before it is timed, the track's code must train one fold for two epochs as lib's trainer does
  // and split the rows as lib does (float32 against double: they agree to about 1e-6; over all
  // 100 epochs, to about 1e-3, too loosely to tell a small mistake).
  constexpr int kCheckEpochs = 2;
  try {
    const std::vector<scalebook::Fold> expected = scalebook::kfold_splits(data.x.rows(), kFolds);
    const FoldData d = fold_data(data, expected[0].train, expected[0].validation);
    const double mine = train_track(d, kSeed, kCheckEpochs);
    scalebook::MlpConfig config;
    config.hidden = {kHidden, kHidden};
    config.epochs = kCheckEpochs;
    config.batch_size = kBatch;
    config.seed = kSeed;
    const double lib_mae = scalebook::train_mlp(d.x_train, d.y_train, d.x_val, d.y_val, config).val_mae.back();
    if (!(std::abs(mine - lib_mae) <= 1e-4 * std::abs(lib_mae))) {
      std::fprintf(stderr,
                   "ch02_bench: %s chapter-2 functions (2.1 to 2.3) do not yet train the network as lib's trainer "
                   "does (after %d epochs of fold 1: validation MAE %.6g, lib's %.6g): ./workbook check 2 says "
                   "where\n", whose.c_str(), kCheckEpochs, mine, lib_mae);
      return 3;
    }
    const scalebook::ch02::Folds folds = scalebook::ch02::kfold_splits(data.x.rows(), kFolds);
    bool same = folds.size() == expected.size();
    for (std::size_t f = 0; same && f < folds.size(); ++f)
      same = folds[f].train == expected[f].train && folds[f].validation == expected[f].validation;
    if (!same) {
      std::fprintf(stderr, "ch02_bench: %s kfold_splits (exercise 2.4) does not yet split the %ld rows into %d "
                   "folds as lib's does: ./workbook check 2 says where\n", whose.c_str(),
                   static_cast<long>(data.x.rows()), kFolds);
      return 3;
    }
  } catch (const scalebook::NotImplemented& e) {
    std::fprintf(stderr,
                 "ch02_bench: the first row trains with %s chapter-2 functions (2.1 to 2.4), and %s.\n"
                 "Finish exercise %s first: ./workbook check 2 shows where each exercise stands.\n",
                 whose.c_str(), e.what(), e.exercise_id().c_str());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "ch02_bench: %s chapter-2 functions (2.1 to 2.4) did not train the network: %s\n"
                 "./workbook check 2 shows which exercise is wrong.\n",
                 whose.c_str(), e.what());
    return 3;
  }
  const Run mine = best_of(repeat, [&] { return kfold_track(data); });

  std::printf("DLwP's K-fold on the book's 404 Boston rows: %d folds x %d epochs, Dense(%ld) - Dense(%ld) - "
              "Dense(1),\nbatch %ld, RMSprop, one thread. Every row: the best of %d runs, CPU seconds of the "
              "process,\ndata loading excluded.\n",
              kFolds, kEpochs, static_cast<long>(kHidden), static_cast<long>(kHidden), static_cast<long>(kBatch),
              repeat);
  std::printf("  %-62s %8s %9s\n", "code timed", "seconds", "mean MAE");
  const std::string mine_label = (track == "yours" ? "yours" : "reference") +
                                 std::string(": exercises 2.1-2.4 (small_models.hpp), double");
  std::printf("  %-62s %8.3f %9.3f\n", mine_label.c_str(), mine.seconds, mean(mine.maes));
  std::printf("  %-62s %8.3f %9.3f\n", "lib's trainer (scalebook/mlp.hpp), float32", lib.seconds, mean(lib.maes));
  std::printf("  fold MAE, %s: ", track == "yours" ? "yours" : "reference");
  for (double m : mine.maes) std::printf(" %.3f", m);
  std::printf("; lib's:");
  for (double m : lib.maes) std::printf(" %.3f", m);
  std::printf("\n");
  if (torch) {
    std::string version = "?", note;
    double torch_mae = 0.0;
    const double t = torch_seconds(repeat, version, torch_mae, note);
    if (t > 0.0 && note.empty()) {
      const std::string label = "PyTorch " + version + " (torch.nn, one thread), float32";
      std::printf("  %-62s %8.3f %9.3f\n", label.c_str(), t, torch_mae);
      std::printf("ratio: PyTorch / %s = %.1fx; PyTorch / lib's trainer = %.1fx\n",
                  track == "yours" ? "yours" : "the reference", t / mine.seconds, t / lib.seconds);
    } else {
      std::printf("%s\n", note.c_str());
    }
  }
  std::printf("ratio: %s / lib's trainer = %.1fx\n", track == "yours" ? "yours" : "the reference",
              mine.seconds / lib.seconds);
  return 0;
}
