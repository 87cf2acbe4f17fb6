// Chapter 2 benchmark — DLwP's K-fold on Boston housing (4 folds x 100 epochs, Dense(64) -
// Dense(64) - Dense(1), batch 16, RMSprop, features standardised per fold) with lib's trainer,
// and the same in PyTorch (tools/bench_ch02_torch.py, one thread, float32) when python3-torch is
// installed. Prints both times and their ratio. A benchmark, not a test: PyTorch stays optional.
//
//   ch02_bench [--no-torch] [--repeat N]
//
// Both sides are timed the same way: the best of N runs (default 3) of the whole K-fold, data
// loading excluded (the Python script takes the same --repeat N).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "scalebook/data.hpp"
#include "scalebook/mlp.hpp"
#include "scalebook/standardize.hpp"

#ifndef SCALEBOOK_TORCH_BENCH
#error "chapters/02-small-models/CMakeLists.txt defines SCALEBOOK_TORCH_BENCH"
#endif

namespace {

struct Run {
  double seconds = 0.0;
  std::vector<double> maes;
};

Run kfold(const scalebook::Dataset& data) {
  Run run;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<scalebook::Fold> folds = scalebook::kfold_splits(data.x.rows(), 4);
  for (std::size_t f = 0; f < folds.size(); ++f) {
    const scalebook::Dataset train = scalebook::take_rows(data, folds[f].train);
    const scalebook::Dataset val = scalebook::take_rows(data, folds[f].validation);
    const scalebook::Standardizer s = scalebook::fit_standardizer(train.x);
    scalebook::MlpConfig config;
    config.seed = 2000 + f;
    const scalebook::History h = scalebook::train_mlp(scalebook::standardize(train.x, s), train.y,
                                                      scalebook::standardize(val.x, s), val.y, config);
    run.maes.push_back(h.val_mae.back());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// Runs the PyTorch script; returns its seconds, or a negative number when it cannot run.
double torch_seconds(int repeat, std::string& report) {
  const char* python = std::getenv("SCALEBOOK_PYTHON");
  std::string interpreter = python != nullptr ? python : "";
  if (interpreter.empty()) {
    // Debian's python3 has python3-torch; a python3 earlier on PATH (pyenv, venv) may not.
    interpreter = std::system("test -x /usr/bin/python3") == 0 ? "/usr/bin/python3" : "python3";
  }
  const std::string probe = interpreter + " -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    report = "PyTorch: not installed for " + interpreter + " (apt-get install python3-torch); skipped";
    return -1.0;
  }
  const std::string command = interpreter + " '" SCALEBOOK_TORCH_BENCH "' '" + scalebook::data_dir().string() + "' --repeat " +
                              std::to_string(repeat);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1.0;
  char line[512];
  double seconds = -1.0;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    report += std::string("  ") + line;
    if (std::strncmp(line, "torch_seconds ", 14) == 0) seconds = std::atof(line + 14);
  }
  pclose(pipe);
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
  try {
    const scalebook::Dataset data = scalebook::load_boston_split().train;
    Run best;
    best.seconds = 1e300;
    for (int r = 0; r < repeat; ++r) {
      Run run = kfold(data);
      if (run.seconds < best.seconds) best = run;
    }
    double mean = 0.0;
    std::printf("scalebook K-fold (4 x 100 epochs, 2 x Dense(64), batch 16, 404 Boston rows)\n  fold MAE");
    for (double m : best.maes) {
      std::printf(" %.3f", m);
      mean += m / static_cast<double>(best.maes.size());
    }
    std::printf("\n  mean MAE %.3f\n  scalebook_seconds %.4f (best of %d)\n", mean, best.seconds, repeat);
    if (torch) {
      std::string report;
      const double t = torch_seconds(repeat, report);
      std::printf("%s", report.c_str());
      if (t > 0.0) std::printf("ratio: PyTorch / scalebook = %.1fx\n", t / best.seconds);
      else if (report.find("skipped") == std::string::npos) std::printf("PyTorch run failed\n");
      if (report.find("skipped") != std::string::npos) std::printf("\n");
    }
  } catch (const scalebook::Error& e) {
    std::fprintf(stderr, "ch02_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
