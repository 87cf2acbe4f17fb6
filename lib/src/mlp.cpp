// The small-MLP trainer (see scalebook/mlp.hpp): float32, row-major buffers allocated once per
// training run, and hand-blocked products so that a batch of 16 rows costs microseconds.
//
// Layout: activations are (rows, width) row-major and weights W are (in, out) row-major. Every
// product is a sum of scaled rows ("axpy" form) vectorised along contiguous memory: Z = A W;
// dW = A^T D; and the gradient for the layer below in transposed form, dA^T = W D^T, for which
// the backward pass keeps each layer's gradient D in both layouts (a (rows, width) copy is 8 to
// 16 times smaller than W, so it is the one transposed). Each output entry sums its terms in
// increasing order of the inner index: the result does not depend on the blocking.
#include "scalebook/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "scalebook/random.hpp"
#include "scalebook/softmax.hpp"

// The hot loops are compiled twice on x86-64 GCC: for AVX2 with FMA and for the baseline; the
// dynamic loader picks one for the machine (ifunc). Elsewhere: one portable version.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SCALEBOOK_HOT [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define SCALEBOOK_HOT
#endif

// The 32-byte vectors below never cross a call boundary (always_inline): no ABI to worry about.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace scalebook {

namespace {

using f8 = float __attribute__((vector_size(32)));

[[gnu::always_inline]] inline f8 load8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, const f8& v) { std::memcpy(p, &v, sizeof v); }

// C (R rows, 8V columns) += A (R rows, kd) B (kd, 8V); A's entry (r, p) is a[r * ars + p * acs].
template <int R, int V>
[[gnu::always_inline]] inline void micro(int kd, const float* a, long ars, long acs, const float* b,
                                         long ldb, float* c, long ldc) {
  f8 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = load8(c + r * ldc + 8 * v);
  for (int p = 0; p < kd; ++p) {
    f8 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = load8(b + p * ldb + 8 * v);
    for (int r = 0; r < R; ++r) {
      const float s = a[r * ars + p * acs];
      for (int v = 0; v < V; ++v) acc[r][v] += s * bv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) store8(c + r * ldc + 8 * v, acc[r][v]);
}

// C (m, n) += A (m, kd) B (kd, n): A's entry (i, p) at a[i * ars + p * acs], B and C row-major.
SCALEBOOK_HOT void gemm_acc(int m, int n, int kd, const float* a, long ars, long acs,
                            const float* b, long ldb, float* c, long ldc) {
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    int i = 0;
    for (; i + 4 <= m; i += 4) micro<4, 2>(kd, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc);
    for (; i < m; ++i) micro<1, 2>(kd, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc);
  }
  for (; j + 8 <= n; j += 8) {
    for (int i = 0; i < m; ++i) micro<1, 1>(kd, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc);
  }
  for (; j < n; ++j) {  // the last columns one by one (e.g. the single output unit)
    for (int i = 0; i < m; ++i) {
      float sum = c[i * ldc + j];
      for (int p = 0; p < kd; ++p) sum += a[i * ars + p * acs] * b[p * ldb + j];
      c[i * ldc + j] = sum;
    }
  }
}

// RMSprop on n parameters: v = rho v + (1 - rho) g^2; p -= lr g / sqrt(v + eps).
SCALEBOOK_HOT void rmsprop(long n, float* p, const float* g, float* v, float lr, float rho, float eps) {
  const float one_minus_rho = 1.0f - rho;
  for (long i = 0; i < n; ++i) {
    v[i] = rho * v[i] + one_minus_rho * (g[i] * g[i]);
    p[i] -= lr * g[i] / std::sqrt(v[i] + eps);
  }
}

struct Layer {
  int in = 0, out = 0;
  std::vector<float> w, b;        // (in, out), (out)
  std::vector<float> gw, gb;      // gradients
  std::vector<float> vw, vb;      // RMSprop's running mean squares
};

class Network {
 public:
  Network(int inputs, const std::vector<Index>& hidden, int outputs, int max_rows, Rng& rng) {
    int in = inputs;
    std::vector<int> widths;
    for (Index h : hidden) widths.push_back(static_cast<int>(h));
    widths.push_back(outputs);
    act_.emplace_back(static_cast<std::size_t>(max_rows) * in);
    for (int out : widths) {
      Layer layer;
      layer.in = in;
      layer.out = out;
      const std::size_t size = static_cast<std::size_t>(in) * out;
      layer.w.resize(size);
      const double limit = std::sqrt(6.0 / (in + out));  // Glorot uniform
      for (float& x : layer.w) x = static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
      layer.b.assign(out, 0.0f);
      layer.gw.assign(size, 0.0f);
      layer.gb.assign(out, 0.0f);
      layer.vw.assign(size, 0.0f);
      layer.vb.assign(out, 0.0f);
      layers_.push_back(std::move(layer));
      act_.emplace_back(static_cast<std::size_t>(max_rows) * out);
      delta_.emplace_back(static_cast<std::size_t>(max_rows) * out);
      delta_t_.emplace_back(static_cast<std::size_t>(max_rows + 7) * out);  // rows padded to 8
      in = out;
    }
  }

  float* input() { return act_[0].data(); }
  const float* output() const { return act_.back().data(); }

  // The forward pass of m rows already in input().
  void forward(int m) {
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const Layer& layer = layers_[l];
      float* z = act_[l + 1].data();
      for (int i = 0; i < m; ++i) std::memcpy(z + i * layer.out, layer.b.data(), sizeof(float) * layer.out);
      gemm_acc(m, layer.out, layer.in, act_[l].data(), layer.in, 1, layer.w.data(), layer.out, z, layer.out);
      if (l + 1 < layers_.size()) relu(m * layer.out, z);
    }
  }

  int outputs() const { return layers_.back().out; }

  // Gradients of the loss for m rows after forward(m), given d loss / d output in d_output
  // (m, outputs), row-major.
  void backward(int m, const float* d_output) {
    // The transposed gradients (width, mp) have mp = m rounded up to 8 columns, the extra ones 0:
    // the products over them stay in whole vectors.
    const int mp = (m + 7) / 8 * 8;
    const int k = layers_.back().out;
    std::memcpy(delta_.back().data(), d_output, sizeof(float) * m * k);  // (m, k) and its transpose
    std::fill(delta_t_.back().begin(), delta_t_.back().begin() + static_cast<std::ptrdiff_t>(mp) * k, 0.0f);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) delta_t_.back()[static_cast<std::size_t>(j * mp + i)] = d_output[i * k + j];
    for (std::size_t l = layers_.size(); l-- > 0;) {
      Layer& layer = layers_[l];
      const float* d = delta_[l].data();  // (m, out): d loss / d pre-activation
      std::fill(layer.gw.begin(), layer.gw.end(), 0.0f);
      // gw (in, out) = act^T (in, m) d (m, out): A's entry (k, i) is act[i * in + k]
      gemm_acc(layer.in, layer.out, m, act_[l].data(), 1, layer.in, d, layer.out, layer.gw.data(), layer.out);
      std::fill(layer.gb.begin(), layer.gb.end(), 0.0f);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < layer.out; ++j) layer.gb[j] += d[i * layer.out + j];
      if (l == 0) break;  // no gradient for the inputs
      // d_in^T (in, mp) = w (in, out) d^T (out, mp); then ReLU's gradient, into both layouts
      float* d_in_t = delta_t_[l - 1].data();
      std::fill(d_in_t, d_in_t + static_cast<std::ptrdiff_t>(mp) * layer.in, 0.0f);
      gemm_acc(layer.in, mp, layer.out, layer.w.data(), layer.out, 1, delta_t_[l].data(), mp, d_in_t, mp);
      relu_gradient(m, mp, layer.in, act_[l].data(), d_in_t, delta_[l - 1].data());
    }
  }

  void update(float lr, float rho, float eps) {
    for (Layer& layer : layers_) {
      rmsprop(static_cast<long>(layer.w.size()), layer.w.data(), layer.gw.data(), layer.vw.data(), lr, rho, eps);
      rmsprop(static_cast<long>(layer.b.size()), layer.b.data(), layer.gb.data(), layer.vb.data(), lr, rho, eps);
    }
  }

 private:
  static void relu(int n, float* z) {
    for (int i = 0; i < n; ++i) z[i] = z[i] > 0.0f ? z[i] : 0.0f;
  }
  // ReLU passes the gradient where its output h (m, width) is > 0: d_t (width, m) is masked in
  // place and copied to d (m, width).
  static void relu_gradient(int m, int mp, int width, const float* h, float* d_t, float* d) {
    for (int k = 0; k < width; ++k) {
      for (int i = 0; i < m; ++i) {
        // A bit mask, not a branch (the mask is a coin flip, and mispredictions cost more than the
        // arithmetic): h >= 0 always, and h > 0 exactly when its bits, as an integer, are > 0.
        std::int32_t h_bits;
        std::uint32_t g_bits;
        std::memcpy(&h_bits, h + i * width + k, sizeof h_bits);
        std::memcpy(&g_bits, d_t + k * mp + i, sizeof g_bits);
        g_bits &= 0u - static_cast<std::uint32_t>(h_bits > 0);
        std::memcpy(d_t + k * mp + i, &g_bits, sizeof g_bits);
        std::memcpy(d + i * width + k, &g_bits, sizeof g_bits);
      }
    }
  }

  std::vector<Layer> layers_;
  std::vector<std::vector<float>> act_;    // act_[0] the input rows, act_[l + 1] layer l's output
  std::vector<std::vector<float>> delta_;    // delta_[l]: d loss / d layer l's pre-activation (m, out)
  std::vector<std::vector<float>> delta_t_;  // the same, transposed (out, m)
};

void check_data(const char* function, const Matrix& x, const Vector& y, const char* x_name,
                const char* y_name) {
  if (x.rows() != y.rows()) {
    throw ShapeError(std::string(function) + ": " + x_name + " " + shape_of(x) + " and " + y_name +
                     " " + shape_of(y) + " must have the same number of rows");
  }
  require_finite(function, x_name, x);
  require_finite(function, y_name, y);
}

// Mean squared and mean absolute error of the network on all rows of (x, y), in chunks.
void evaluate(Network& net, const Matrix& x, const Vector& y, int chunk, double& mse, double& mae) {
  double squares = 0.0, absolutes = 0.0;
  const Index n = x.rows(), d = x.cols();
  for (Index start = 0; start < n; start += chunk) {
    const int m = static_cast<int>(std::min<Index>(chunk, n - start));
    float* in = net.input();
    for (int i = 0; i < m; ++i)
      for (Index c = 0; c < d; ++c) in[i * d + c] = static_cast<float>(x(start + i, c));
    net.forward(m);
    for (int i = 0; i < m; ++i) {
      const double error = static_cast<double>(net.output()[i]) - static_cast<float>(y(start + i));
      squares += error * error;
      absolutes += std::abs(error);
    }
  }
  mse = squares / static_cast<double>(n);
  mae = absolutes / static_cast<double>(n);
}

void check_config(const char* fn, const MlpConfig& config) {
  for (Index h : config.hidden) require_positive(fn, "every hidden width", h);
  require_positive(fn, "batch_size", config.batch_size);
  if (config.epochs < 0) throw ShapeError(std::string(fn) + ": epochs must be >= 0, got " + std::to_string(config.epochs));
  if (!(config.learning_rate > 0.0) || !std::isfinite(config.learning_rate) || !(config.rho >= 0.0) ||
      !(config.rho < 1.0) || !(config.epsilon > 0.0) || !std::isfinite(config.epsilon)) {
    throw ValueError(std::string(fn) + ": need learning_rate > 0, 0 <= rho < 1 and epsilon > 0, got " +
                     std::to_string(config.learning_rate) + ", " + std::to_string(config.rho) + ", " +
                     std::to_string(config.epsilon));
  }
}

// The logits (rows, k) of the network for all rows of x, in chunks.
Matrix logits_of(Network& net, const Matrix& x, int chunk) {
  const Index n = x.rows(), d = x.cols();
  const int k = net.outputs();
  Matrix logits(n, k);
  for (Index start = 0; start < n; start += chunk) {
    const int m = static_cast<int>(std::min<Index>(chunk, n - start));
    float* in = net.input();
    for (int i = 0; i < m; ++i)
      for (Index c = 0; c < d; ++c) in[i * d + c] = static_cast<float>(x(start + i, c));
    net.forward(m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) logits(start + i, j) = static_cast<double>(net.output()[i * k + j]);
  }
  return logits;
}

}  // namespace

ClassifierRun train_classifier(const Matrix& x_train, const std::vector<int>& y_train, const Matrix& x_val,
                               Index classes, const MlpConfig& config) {
  const char* fn = "train_classifier";
  require_nonempty(fn, "x_train", x_train);
  if (static_cast<std::size_t>(x_train.rows()) != y_train.size()) {
    throw ShapeError(std::string(fn) + ": x_train " + shape_of(x_train) + " and y_train (" +
                     std::to_string(y_train.size()) + " labels) must have the same number of rows");
  }
  require_finite(fn, "x_train", x_train);
  require_finite(fn, "x_val", x_val);
  if (x_val.rows() > 0) require_same_cols(fn, "x_train", x_train, "x_val", x_val);
  if (classes < 2) throw ShapeError(std::string(fn) + ": need at least 2 classes, got " + std::to_string(classes));
  for (std::size_t i = 0; i < y_train.size(); ++i) {
    if (y_train[i] < 0 || y_train[i] >= classes) {
      throw ValueError(std::string(fn) + ": y_train[" + std::to_string(i) + "] = " + std::to_string(y_train[i]) +
                       " is not a class 0.." + std::to_string(classes - 1));
    }
  }
  check_config(fn, config);

  const Index n = x_train.rows(), d = x_train.cols();
  const int k = static_cast<int>(classes);
  const int batch = static_cast<int>(std::min<Index>(config.batch_size, n));
  const int chunk = 128;
  Rng rng(config.seed);
  Network net(static_cast<int>(d), config.hidden, k, std::max(batch, chunk), rng);

  std::vector<float> xs(static_cast<std::size_t>(n * d));
  for (Index i = 0; i < n; ++i)
    for (Index c = 0; c < d; ++c) xs[static_cast<std::size_t>(i * d + c)] = static_cast<float>(x_train(i, c));
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<float> d_output(static_cast<std::size_t>(batch) * k);
  Matrix logits(batch, k);

  const float lr = static_cast<float>(config.learning_rate), rho = static_cast<float>(config.rho),
              eps = static_cast<float>(config.epsilon);
  ClassifierRun run;
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    for (Index i = n - 1; i > 0; --i) {
      const Index j = static_cast<Index>(rng.next_u64() % static_cast<std::uint64_t>(i + 1));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    double loss = 0.0;
    for (Index start = 0; start < n; start += batch) {
      const int m = static_cast<int>(std::min<Index>(batch, n - start));
      float* in = net.input();
      for (int i = 0; i < m; ++i) {
        std::memcpy(in + i * d, xs.data() + order[static_cast<std::size_t>(start + i)] * d, sizeof(float) * d);
      }
      net.forward(m);
      const float* out = net.output();
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) logits(i, j) = static_cast<double>(out[i * k + j]);
      // Softmax cross-entropy: p = softmax(logits) (lib's stable softmax), loss -ln p[label],
      // d loss / d logits = (p - onehot) / m for the batch mean.
      const Matrix p = softmax_rows(logits.topRows(m));
      for (int i = 0; i < m; ++i) {
        const int label = y_train[static_cast<std::size_t>(order[static_cast<std::size_t>(start + i)])];
        loss -= std::log(std::max(p(i, label), 1e-300));
        for (int j = 0; j < k; ++j) {
          const double g = (p(i, j) - (j == label ? 1.0 : 0.0)) / m;
          d_output[static_cast<std::size_t>(i * k + j)] = static_cast<float>(g);
        }
      }
      net.backward(m, d_output.data());
      net.update(lr, rho, eps);
    }
    run.loss.push_back(loss / static_cast<double>(n));
  }
  run.train_logits = logits_of(net, x_train, chunk);
  run.val_logits = x_val.rows() > 0 ? logits_of(net, x_val, chunk) : Matrix(0, k);
  return run;
}

History train_mlp(const Matrix& x_train, const Vector& y_train, const Matrix& x_val,
                  const Vector& y_val, const MlpConfig& config) {
  const char* fn = "train_mlp";
  require_nonempty(fn, "x_train", x_train);
  check_data(fn, x_train, y_train, "x_train", "y_train");
  check_data(fn, x_val, y_val, "x_val", "y_val");
  if (x_val.rows() > 0) require_same_cols(fn, "x_train", x_train, "x_val", x_val);
  check_config(fn, config);

  const Index n = x_train.rows(), d = x_train.cols();
  const int batch = static_cast<int>(std::min<Index>(config.batch_size, n));
  const int chunk = 128;  // rows per forward pass when evaluating
  Rng rng(config.seed);
  Network net(static_cast<int>(d), config.hidden, 1, std::max(batch, chunk), rng);

  // The training rows in float, row-major, and the targets: copied once.
  std::vector<float> xs(static_cast<std::size_t>(n * d)), ys(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < d; ++c) xs[static_cast<std::size_t>(i * d + c)] = static_cast<float>(x_train(i, c));
    ys[static_cast<std::size_t>(i)] = static_cast<float>(y_train(i));
  }
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<float> d_output(static_cast<std::size_t>(batch));

  const float lr = static_cast<float>(config.learning_rate), rho = static_cast<float>(config.rho),
              eps = static_cast<float>(config.epsilon);
  History history;
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    for (Index i = n - 1; i > 0; --i) {
      const Index j = static_cast<Index>(rng.next_u64() % static_cast<std::uint64_t>(i + 1));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    double squares = 0.0, absolutes = 0.0;
    for (Index start = 0; start < n; start += batch) {
      const int m = static_cast<int>(std::min<Index>(batch, n - start));
      float* in = net.input();
      for (int i = 0; i < m; ++i) {
        std::memcpy(in + i * d, xs.data() + order[static_cast<std::size_t>(start + i)] * d, sizeof(float) * d);
      }
      net.forward(m);
      const float* out = net.output();
      for (int i = 0; i < m; ++i) {
        const float error = out[i] - ys[static_cast<std::size_t>(order[static_cast<std::size_t>(start + i)])];
        squares += static_cast<double>(error) * error;
        absolutes += std::abs(static_cast<double>(error));
        d_output[static_cast<std::size_t>(i)] = 2.0f * error / static_cast<float>(m);  // d mean(e^2) / d out_i
      }
      net.backward(m, d_output.data());
      net.update(lr, rho, eps);
    }
    history.loss.push_back(squares / static_cast<double>(n));
    history.mae.push_back(absolutes / static_cast<double>(n));
    if (x_val.rows() > 0) {
      double mse = 0.0, mae = 0.0;
      evaluate(net, x_val, y_val, chunk, mse, mae);
      history.val_loss.push_back(mse);
      history.val_mae.push_back(mae);
    }
  }
  evaluate(net, x_train, y_train, chunk, history.final_train_loss, history.final_train_mae);
  return history;
}

std::vector<Fold> kfold_splits(Index n, int k) {
  if (k < 2) throw ShapeError("kfold_splits: k must be at least 2, got " + std::to_string(k));
  if (k > n) {
    throw ShapeError("kfold_splits: k = " + std::to_string(k) + " folds need at least k rows, got n = " +
                     std::to_string(n));
  }
  const Index size = n / k;
  std::vector<Fold> folds(static_cast<std::size_t>(k));
  for (int f = 0; f < k; ++f) {
    for (Index i = 0; i < n; ++i) {
      const bool validates = i >= f * size && i < (f + 1) * size;
      (validates ? folds[static_cast<std::size_t>(f)].validation : folds[static_cast<std::size_t>(f)].train).push_back(i);
    }
  }
  return folds;
}

std::vector<double> smooth_curve(const std::vector<double>& values, double factor) {
  if (values.empty()) throw ShapeError("smooth_curve: values is empty");
  if (!(factor >= 0.0 && factor < 1.0)) {
    throw ValueError("smooth_curve: factor must be in [0, 1), got " + std::to_string(factor));
  }
  std::vector<double> smoothed;
  for (double v : values) {
    if (std::isnan(v)) throw ValueError("smooth_curve: values holds NaN");
    smoothed.push_back(smoothed.empty() ? v : factor * smoothed.back() + (1.0 - factor) * v);
  }
  return smoothed;
}

Index best_epoch(const std::vector<double>& values) {
  if (values.empty()) throw ShapeError("best_epoch: values is empty");
  Index best = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) throw ValueError("best_epoch: values holds NaN at " + std::to_string(i));
    if (values[i] < values[static_cast<std::size_t>(best)]) best = static_cast<Index>(i);
  }
  return best;
}

}  // namespace scalebook
