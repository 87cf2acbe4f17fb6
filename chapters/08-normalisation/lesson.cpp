// Chapter 8 lesson — normalisation: what keeps activations at the scale attention assumes.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet) and writes ch08_init_variance.dat and ch08_depth.dat for the figures.
// Usage: ch08_lesson [data folder]. Deterministic: fixed seeds, fixed precision, one thread.
//
// Linked against the reference (the book's numbers) and against a student's track, where the same
// program shows their own numbers beside the book's.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "normalisation.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/linalg.hpp"
#include "scalebook/random.hpp"
#include "scalebook/standardize.hpp"
#include "torch_fixtures.hpp"

namespace ch08 = scalebook::ch08;
namespace torch_fixture = scalebook::ch08::torch_fixture;
using scalebook::Index;
using scalebook::Matrix;
using scalebook::Rng;
using scalebook::RowVector;
using scalebook::matmul;
using scalebook::normal_matrix;

namespace {

constexpr double kEps = 1e-5;  // nn.LayerNorm's default

// ---- Printing ------------------------------------------------------------------------------

// "0.7071"; NaN and infinity spelled the same way on every platform (printf's "-nan" is not).
std::string number(double x, int decimals = 4) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, x == 0.0 ? 0.0 : x);  // no "-0.0000"
  return buffer;
}

// Like printf's "%.3g" with NaN spelled out: for numbers far apart.
std::string number_g(double x, int digits = 3) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

void print_matrix(const char* label, const Matrix& m, int decimals = 3) {
  std::printf("%s\n", label);
  for (Index i = 0; i < m.rows(); ++i) {
    std::printf("  ");
    for (Index j = 0; j < m.cols(); ++j) std::printf(" %9s", number(m(i, j), decimals).c_str());
    std::printf("\n");
  }
}

double max_abs_difference(const Matrix& a, const Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

// ---- Numerics: what the contract's rules avoid ------------------------------------------------

//! [one-pass]
// The variance in one pass, as the mean of the squares minus the squared mean:
// algebraically the same as the two-pass variance, numerically not.
Matrix layer_norm_one_pass(const Matrix& x, double eps) {
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    const double mean = x.row(i).mean();
    const double variance = x.row(i).squaredNorm() / x.cols() - mean * mean;
    y.row(i) = (x.row(i).array() - mean) / std::sqrt(variance + eps);
  }
  return y;
}
//! [one-pass]

// eps added outside the root: (x - mean) / (sqrt(var) + eps).
Matrix layer_norm_eps_outside(const Matrix& x, double eps) {
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    const double mean = x.row(i).mean();
    const double variance = (x.row(i).array() - mean).square().mean();
    y.row(i) = (x.row(i).array() - mean) / (std::sqrt(variance) + eps);
  }
  return y;
}

// RMSNorm as its formula reads, in the row's own units.
Matrix rms_norm_as_written(const Matrix& x, double eps) {
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i)
    y.row(i) = x.row(i) / std::sqrt(x.row(i).squaredNorm() / x.cols() + eps);
  return y;
}

// ---- Chapter 3's assumption at initialisation --------------------------------------------------

// Tokens as a network's activations come: each token has its own offset and its own scale (a
// factor between 1/4 and 4), times SCALE overall.
Matrix raw_tokens(Index n, Index d, double scale, Rng& rng) {
  Matrix x = normal_matrix(n, d, rng);
  for (Index i = 0; i < n; ++i) {
    const double offset = 2.0 * rng.normal();
    const double spread = std::pow(4.0, 2.0 * rng.uniform() - 1.0);
    x.row(i) = scale * ((x.row(i) * spread).array() + offset).matrix();
  }
  return x;
}

struct ScoreStats {
  double q_mean, q_variance, score_variance, cosine;  // cosine: mean |cos(q_t, q_u)| over pairs t != u
};

//! [init-variance]
// Queries and keys projected from the tokens by W_q and W_k drawn with variance
// 1/d_model (a standard initialisation), and the scaled scores q.k/sqrt(d_k) of
// every pair: chapter 3 needs the components of q and k to have mean 0 and
// variance 1, so that the scores have variance 1.
ScoreStats score_stats(const Matrix& tokens, Index d_k, Rng& rng) {
  const Index d_model = tokens.cols();
  const double sd = 1.0 / std::sqrt(static_cast<double>(d_model));
  const Matrix w_q = normal_matrix(d_model, d_k, rng) * sd;
  const Matrix w_k = normal_matrix(d_model, d_k, rng) * sd;
  const Matrix q = matmul(tokens, w_q), k = matmul(tokens, w_k);
  const Matrix scores = scalebook::matmul_transposed(q, k) / std::sqrt(static_cast<double>(d_k));
  const double q_mean = q.mean();
  const Matrix unit = q.rowwise().normalized();
  const Matrix cosines = scalebook::matmul_transposed(unit, unit).cwiseAbs();
  const double n = static_cast<double>(q.rows());
  return {q_mean, (q.array() - q_mean).square().mean(), (scores.array() - scores.mean()).square().mean(),
          (cosines.sum() - cosines.trace()) / (n * (n - 1))};
}
//! [init-variance]

// ---- Pre-LN against post-LN --------------------------------------------------------------------

// A stack of L residual blocks, each a feed-forward sublayer relu(x W1) W2 (d -> 4d -> d), its
// weights drawn Xavier-normal (variance 2 / (fan_in + fan_out)), gamma = 1 and beta = 0.
struct Stack {
  std::vector<Matrix> w1, w2;
};

Stack make_stack(int layers, Index d, Rng& rng) {
  Stack s;
  const double sd = std::sqrt(2.0 / static_cast<double>(d + 4 * d));
  for (int l = 0; l < layers; ++l) {
    s.w1.push_back(normal_matrix(d, 4 * d, rng) * sd);
    s.w2.push_back(normal_matrix(4 * d, d, rng) * sd);
  }
  return s;
}

//! [depth]
Matrix relu(const Matrix& h) { return h.cwiseMax(0.0); }

// dL/dh from dL/dr where r = relu(h).
Matrix relu_backward(const Matrix& h, const Matrix& dr) {
  return (h.array() > 0.0).select(dr, Matrix::Zero(dr.rows(), dr.cols()));
}

// The Frobenius norm of dL/dW2 in each layer, for L = sum(G * y) at initialisation.
// Post-LN: x <- LN(x + F(x)), the output y is the last x. Pre-LN: x <- x + F(LN(x)),
// and y = LN(x) after the last block. Every LN here is the chapter's layer_norm,
// and every gradient through one is its layer_norm_backward.
std::vector<double> gradient_norms(const Stack& s, const Matrix& x0, const Matrix& g, bool pre) {
  const Index d = x0.cols();
  const RowVector ones = RowVector::Ones(d), zeros = RowVector::Zero(d);
  const auto ln = [&](const Matrix& a) { return ch08::layer_norm(a, ones, zeros, kEps); };
  const auto ln_back = [&](const Matrix& a, const Matrix& da) {
    return ch08::layer_norm_backward(a, ones, kEps, da).dx;
  };
  const std::size_t layers = s.w1.size();
  std::vector<Matrix> in(layers), normed(layers), h(layers), sum(layers);
  Matrix x = x0;
  for (std::size_t l = 0; l < layers; ++l) {  // forward, keeping what backward needs
    in[l] = x;
    normed[l] = pre ? ln(x) : x;
    h[l] = matmul(normed[l], s.w1[l]);
    const Matrix f = matmul(relu(h[l]), s.w2[l]);
    sum[l] = x + f;
    x = pre ? sum[l] : ln(sum[l]);
  }
  Matrix grad = pre ? ln_back(x, g) : g;  // dL/dx after the last block
  std::vector<double> norms(layers);
  for (std::size_t l = layers; l-- > 0;) {  // backward
    const Matrix d_sum = pre ? grad : ln_back(sum[l], grad);
    norms[l] = matmul(relu(h[l]).transpose(), d_sum).norm();  // dL/dW2 = relu(h)^T d_sum
    const Matrix dh = relu_backward(h[l], scalebook::matmul_transposed(d_sum, s.w2[l]));
    const Matrix d_normed = scalebook::matmul_transposed(dh, s.w1[l]);
    grad = d_sum + (pre ? ln_back(in[l], d_normed) : d_normed);
  }
  return norms;
}
//! [depth]

// The mean over SEEDS stacks of gradient_norms, layer by layer.
std::vector<double> mean_gradient_norms(int layers, bool pre, int seeds) {
  const Index d = 64, n = 16;
  std::vector<double> mean(static_cast<std::size_t>(layers), 0.0);
  for (int seed = 0; seed < seeds; ++seed) {
    Rng rng(800 + seed);
    const Stack s = make_stack(layers, d, rng);
    const Matrix x0 = normal_matrix(n, d, rng), g = normal_matrix(n, d, rng);
    const std::vector<double> norms = gradient_norms(s, x0, g, pre);
    for (int l = 0; l < layers; ++l) mean[static_cast<std::size_t>(l)] += norms[static_cast<std::size_t>(l)] / seeds;
  }
  return mean;
}

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    // ---- Per token, not per feature -------------------------------------------------------
    lesson.begin("per-token");
    {
      //! [per-token]
      Matrix x(4, 5);  // four tokens of five features, each at its own scale
      x << 1, 2, 3, 4, 5,
           -200, 100, 0, 300, -100,
           0.01, 0.03, 0.02, 0.05, 0.04,
           7, 7, 8, 7, 6;
      const RowVector gamma = RowVector::Ones(5), beta = RowVector::Zero(5);
      const Matrix by_token = ch08::layer_norm(x, gamma, beta, 1e-5);  // each row by its own statistics
      const Matrix by_feature = scalebook::standardize(x, scalebook::fit_standardizer(x));  // chapter 1
      //! [per-token]
      print_matrix("the tokens x, one per row:", x, 2);
      print_matrix("\nchapter 1's standardisation (each column by the 4 tokens' mean and deviation):", by_feature);
      print_matrix("\nLayerNorm (each row by its own mean and deviation), gamma = 1, beta = 0:", by_token);
      // Another last token: LayerNorm's other rows stay; chapter 1's change.
      Matrix other = x;
      other.row(3) << 1000, -1000, 500, 0, 2;
      const Matrix by_token_other = ch08::layer_norm(other, gamma, beta, 1e-5);
      const Matrix by_feature_other = scalebook::standardize(other, scalebook::fit_standardizer(other));
      const double token_change = max_abs_difference(by_token.topRows(3), by_token_other.topRows(3));
      const double feature_change = max_abs_difference(by_feature.topRows(3), by_feature_other.topRows(3));
      std::printf("\nthe last token replaced by (1000, -1000, 500, 0, 2): the first three rows move by at most\n"
                  "  %s under LayerNorm, %s under chapter 1's standardisation\n",
                  number_g(token_change).c_str(), number(feature_change).c_str());
      lesson.claim(token_change == 0.0, "LayerNorm's rows do not depend on the other tokens");
      lesson.claim(feature_change > 0.1, "chapter 1's standardisation of a token depends on the others");
      lesson.value("feature_change", feature_change, "%.2f");
    }
    lesson.end("per-token");

    // ---- PyTorch's numbers ----------------------------------------------------------------
    lesson.begin("pytorch");
    {
      using torch_fixture::Huge;
      using torch_fixture::Offset;
      using torch_fixture::Random;
      using torch_fixture::Small;
      double forward = 0, backward = 0, rms = 0;
      for (int k = 0; k < 2; ++k) {
        const Matrix x = k == 0 ? Random::x() : Small::x(), g = k == 0 ? Random::grad_out() : Small::grad_out();
        const RowVector gamma = k == 0 ? Random::gamma() : Small::gamma(), beta = k == 0 ? Random::beta() : Small::beta();
        const Matrix y = ch08::layer_norm(x, gamma, beta, kEps);
        const ch08::LayerNormGrads grads = ch08::layer_norm_backward(x, gamma, kEps, g);
        forward = std::max(forward, max_abs_difference(y, k == 0 ? Random::y() : Small::y()));
        // Each gradient relative to its largest entry (dx of a token of spread 1e-2 reaches hundreds).
        const auto relative = [](const Matrix& a, const Matrix& b) { return max_abs_difference(a, b) / b.cwiseAbs().maxCoeff(); };
        backward = std::max({backward, relative(grads.dx, k == 0 ? Random::dx() : Small::dx()),
                             relative(grads.dgamma, k == 0 ? Random::dgamma() : Small::dgamma()),
                             relative(grads.dbeta, k == 0 ? Random::dbeta() : Small::dbeta())});
        rms = std::max(rms, max_abs_difference(ch08::rms_norm(x, gamma, kEps), k == 0 ? Random::rms() : Small::rms()));
      }
      std::printf("the fixture's 10 tokens (6 of 8 features, 4 of 5), PyTorch 1.13, float64:\n"
                  "  largest |difference| from nn.LayerNorm's output:          %s\n"
                  "  largest |difference| from its gradients (x, weight, bias),\n"
                  "    relative to each gradient's largest entry:               %s\n"
                  "  largest |difference| from RMSNorm's formula in torch:     %s\n",
                  number_g(forward, 2).c_str(), number_g(backward, 2).c_str(), number_g(rms, 2).c_str());
      lesson.claim(forward <= 1e-12 && backward <= 1e-12 && rms <= 1e-12,
                   "layer_norm and rms_norm equal PyTorch's numbers to 1e-12, the gradients to 1e-12 of their largest entry");
      lesson.value("torch_forward", forward, "%.1e");
      lesson.value("torch_backward", backward, "%.1e");

      // A row a double holds exactly around its mean: 1e9 + (-1.5, -0.5, 0.5, 1.5).
      const Matrix ours = ch08::layer_norm(Offset::x(), Offset::gamma(), Offset::beta(), kEps);
      RowVector exact(4);
      exact << -1.5, -0.5, 0.5, 1.5;
      exact /= std::sqrt(1.25 + kEps);
      std::printf("\nthe token 1e9 + (-1.5, -0.5, 0.5, 1.5), whose deviations and variance (1.25) are exact:\n");
      std::printf("  %-34s", "(-1.5, -0.5, 0.5, 1.5)/sqrt(1.25+eps)");
      for (Index j = 0; j < 4; ++j) std::printf(" %19s", number(exact(j), 15).c_str());
      std::printf("\n  %-34s", "layer_norm (two passes)");
      for (Index j = 0; j < 4; ++j) std::printf(" %19s", number(ours(0, j), 15).c_str());
      std::printf("\n  %-34s", "nn.LayerNorm");
      for (Index j = 0; j < 4; ++j) std::printf(" %19s", number(Offset::y()(0, j), 15).c_str());
      const double ours_error = max_abs_difference(ours, exact), torch_error = max_abs_difference(Offset::y(), exact);
      std::printf("\n  largest error: %s (layer_norm), %s (nn.LayerNorm)\n", number_g(ours_error, 2).c_str(),
                  number_g(torch_error, 2).c_str());
      lesson.claim(ours_error <= 1e-12, "on the offset token layer_norm is exact to 1e-12");
      lesson.claim_in_book(torch_error > 1e-9, "PyTorch's running mean loses digits on the offset token");
      lesson.value("torch_offset_error", torch_error, "%.1e");

      const Matrix huge = ch08::layer_norm(Huge::x(), Huge::gamma(), Huge::beta(), kEps);
      std::printf("\nthe token 1e200 (1, 2, 3, 6):\n  layer_norm   ");
      for (Index j = 0; j < 4; ++j) std::printf(" %9s", number(huge(0, j)).c_str());
      std::printf("\n  nn.LayerNorm ");
      for (Index j = 0; j < 4; ++j) std::printf(" %9s", number(Huge::y()(0, j)).c_str());
      std::printf("\n");
      lesson.claim(huge.allFinite() && Huge::y().hasNaN(), "PyTorch gives NaN for 1e200 (1, 2, 3, 6), layer_norm does not");
    }
    lesson.end("pytorch");

    // ---- Two passes ------------------------------------------------------------------------
    lesson.begin("two-passes");
    {
      std::printf("tokens c + (-1.5, -0.5, 0.5, 1.5) (variance 1.25); the largest error of the\n"
                  "normalised token, and the variance the one-pass formula finds\n\n");
      std::printf("%8s %18s %18s %20s\n", "c", "two passes", "one pass", "one-pass variance");
      double worst_two = 0, one_at_1e8 = 0;
      for (double c : {1.0, 1e2, 1e4, 1e6, 1e8}) {
        Matrix x(1, 4);
        x << c - 1.5, c - 0.5, c + 0.5, c + 1.5;
        RowVector exact(4);
        exact << -1.5, -0.5, 0.5, 1.5;
        exact /= std::sqrt(1.25 + kEps);
        const double two = max_abs_difference(ch08::layer_norm(x, RowVector::Ones(4), RowVector::Zero(4), kEps), exact);
        const double one = max_abs_difference(layer_norm_one_pass(x, kEps), exact);
        const double mean = x.mean();
        const double one_pass_variance = x.squaredNorm() / 4 - mean * mean;
        std::printf("%8s %18s %18s %20s\n", number_g(c, 1).c_str(), number_g(two, 2).c_str(), number_g(one, 2).c_str(),
                    number_g(one_pass_variance, 6).c_str());
        worst_two = std::max(worst_two, two);
        if (c == 1e8) one_at_1e8 = one;
      }
      lesson.claim(worst_two <= 1e-12, "two passes stay exact at every offset");
      lesson.claim(one_at_1e8 > 0.1, "one pass loses the variance at an offset of 1e8");
      lesson.value("one_pass_error_1e8", one_at_1e8, "%.2f");
    }
    lesson.end("two-passes");

    // ---- eps inside the root ---------------------------------------------------------------
    lesson.begin("eps-inside");
    {
      std::printf("a token sigma * (-1, 1): its normalised largest entry with eps = 1e-5\n"
                  "(sqrt(eps) = %s) inside and outside the root\n\n", number(std::sqrt(kEps), 5).c_str());
      std::printf("%10s %14s %14s\n", "sigma", "inside", "outside");
      for (double sigma : {1.0, 1e-1, 1e-2, 1e-3, 1e-4}) {
        Matrix x(1, 2);
        x << -sigma, sigma;
        const double inside = ch08::layer_norm(x, RowVector::Ones(2), RowVector::Zero(2), kEps)(0, 1);
        const double outside = layer_norm_eps_outside(x, kEps)(0, 1);
        std::printf("%10s %14s %14s\n", number_g(sigma, 1).c_str(), number(inside).c_str(), number(outside).c_str());
      }
      lesson.value("sqrt_eps", std::sqrt(kEps), "%.4f");
    }
    lesson.end("eps-inside");

    // ---- Squares that overflow -------------------------------------------------------------
    lesson.begin("overflow");
    {
      const double limit = std::sqrt(DBL_MAX);
      std::printf("a double's largest value is %s, so x * x overflows for |x| above %s\n\n",
                  number_g(DBL_MAX, 4).c_str(), number_g(limit, 4).c_str());
      std::printf("tokens c (1, 2, 3, 6): the largest entry of RMSNorm (gamma = 1)\n");
      std::printf("%8s %18s %18s\n", "c", "as written", "rms_norm");
      double written_big = 1, ours_big = 0;
      for (double c : {1.0, 1e100, 1e150, 1e154, 1e155, 1e200, 1e300}) {
        Matrix x(1, 4);
        x << c, 2 * c, 3 * c, 6 * c;
        const double written = rms_norm_as_written(x, kEps)(0, 3);
        const double ours = ch08::rms_norm(x, RowVector::Ones(4), kEps)(0, 3);
        std::printf("%8s %18s %18s\n", number_g(c, 1).c_str(), number(written, 6).c_str(), number(ours, 6).c_str());
        if (c == 1e200) written_big = written, ours_big = ours;
      }
      lesson.claim(written_big == 0.0 && ours_big > 1.0, "as written RMSNorm returns 0 for 1e200 (1, 2, 3, 6); rms_norm does not");
      lesson.value("square_limit", limit, "%.3g");
      lesson.value("largest_double", DBL_MAX, "%.4g");
    }
    lesson.end("overflow");

    // ---- Chapter 3's assumption at initialisation -----------------------------------------
    const Index n = 256, d_model = 256, d_k = 64;
    std::vector<double> scales, var_none, var_layer, var_rms;
    double worst_layer = 0, worst_layer_cosine = 0, rms_low = 1, rms_q_low = 1e300, rms_q_high = 0;
    lesson.begin("init-variance");
    {
      std::printf("%d tokens of d_model = %d (each with its own offset and scale, times s);\n"
                  "W_q, W_k (d_model, d_k = %d) with entries N(0, 1/d_model); over all components\n"
                  "of q and all %d x %d scaled scores q.k/sqrt(d_k)\n\n",
                  static_cast<int>(n), static_cast<int>(d_model), static_cast<int>(d_k), static_cast<int>(n),
                  static_cast<int>(n));
      std::printf("%8s  %22s  %29s  %29s\n", "", "no normalisation", "LayerNorm", "RMSNorm");
      std::printf("%8s  %11s %10s  %9s %10s %8s  %9s %10s %8s\n", "s", "Var(q_c)", "Var(score)", "Var(q_c)",
                  "Var(score)", "|cos|", "Var(q_c)", "Var(score)", "|cos|");
      const RowVector ones = RowVector::Ones(d_model), zeros = RowVector::Zero(d_model);
      for (int e = -3; e <= 3; e += 1) {
        const double s = std::pow(10.0, e);
        Rng rng(8300 + e);
        const Matrix x = raw_tokens(n, d_model, s, rng);
        Rng w1(8400), w2(8400), w3(8400);  // the same projections for the three
        const ScoreStats none = score_stats(x, d_k, w1);
        const ScoreStats layer = score_stats(ch08::layer_norm(x, ones, zeros, kEps), d_k, w2);
        const ScoreStats rms = score_stats(ch08::rms_norm(x, ones, kEps), d_k, w3);
        std::printf("%8s  %11s %10s  %9s %10s %8s  %9s %10s %8s\n", number_g(s, 1).c_str(),
                    number_g(none.q_variance).c_str(), number_g(none.score_variance).c_str(),
                    number(layer.q_variance, 3).c_str(), number(layer.score_variance, 3).c_str(),
                    number(layer.cosine, 3).c_str(), number(rms.q_variance, 3).c_str(),
                    number(rms.score_variance, 3).c_str(), number(rms.cosine, 3).c_str());
        scales.push_back(s);
        var_none.push_back(none.score_variance);
        var_layer.push_back(layer.score_variance);
        var_rms.push_back(rms.score_variance);
        if (e >= -1) {  // where the tokens' spread is well above sqrt(eps)
          worst_layer = std::max(worst_layer, std::abs(layer.score_variance - 1.0));
          worst_layer_cosine = std::max(worst_layer_cosine, layer.cosine);
          rms_low = std::min(rms_low, rms.cosine);
          rms_q_low = std::min(rms_q_low, rms.q_variance);
          rms_q_high = std::max(rms_q_high, rms.q_variance);
        }
      }
      lesson.table("ch08_init_variance.dat", {"s", "var_none", "var_layer_norm", "var_rms_norm"},
                   {scales, var_none, var_layer, var_rms});
      // Two independent random directions in d_k = 64 dimensions: mean |cos| = sqrt(2 / (pi d_k)) = 0.0997.
      const double independent = std::sqrt(2.0 / (3.141592653589793 * static_cast<double>(d_k)));
      std::printf("\n(|cos|: the mean |cosine| between two tokens' queries; independent directions in\n"
                  "d_k = %d dimensions give sqrt(2 / (pi d_k)) = %s)\n", static_cast<int>(d_k), number(independent, 3).c_str());
      lesson.claim(worst_layer < 0.1 && worst_layer_cosine < 1.2 * independent,
                   "after LayerNorm the scaled scores have variance within 0.1 of 1 and two tokens' queries are as "
                   "unrelated as independent directions, for s from 0.1 up");
      lesson.claim(rms_low > 3 * independent, "after RMSNorm two tokens' queries are far more aligned than independent ones");
      lesson.value("independent_cosine", independent, "%.2f");
      lesson.claim(rms_q_high - rms_q_low < 0.05, "after RMSNorm Var(q_c) no longer depends on s from 0.1 up");
      lesson.claim(var_none.front() < 1e-3 && var_none.back() > 1e3, "without normalisation the variance follows s");
      lesson.claim(var_layer.front() < 0.5, "at s = 1e-3 eps takes its share");
      lesson.value("worst_layer_miss", worst_layer, "%.2f");
      lesson.value("rms_cosine", rms_low, "%.2f");
      lesson.value("rms_q_variance", rms_q_low, "%.2f");
      lesson.value("init_tokens", static_cast<long long>(n));
      lesson.value("init_d_model", static_cast<long long>(d_model));
      lesson.value("init_d_k", static_cast<long long>(d_k));
      lesson.value("tiny_scale_variance", var_layer.front(), "%.2f");
      lesson.value("good_scale", 0.1, "%.1f");
    }
    lesson.end("init-variance");

    // ---- Pre-LN against post-LN ------------------------------------------------------------
    lesson.begin("depth");
    {
      const int seeds = 8, layers = 12;
      const std::vector<double> post = mean_gradient_norms(layers, false, seeds);
      const std::vector<double> pre = mean_gradient_norms(layers, true, seeds);
      std::printf("%d blocks of d = 64 (feed-forward 64 -> 256 -> 64), 16 tokens, Xavier-normal weights;\n"
                  "||dL/dW2|| in each block for L = sum(G * y), G ~ N(0, 1), the mean of %d draws\n\n",
                  layers, seeds);
      std::printf("%6s %12s %12s\n", "block", "post-LN", "pre-LN");
      std::vector<double> index;
      for (int l = 0; l < layers; ++l) {
        std::printf("%6d %12s %12s\n", l + 1, number(post[static_cast<std::size_t>(l)], 3).c_str(),
                    number(pre[static_cast<std::size_t>(l)], 3).c_str());
        index.push_back(l + 1);
      }
      lesson.table("ch08_depth.dat", {"block", "post_ln", "pre_ln"}, {index, post, pre});
      const double post_ratio = post.back() / post.front();
      const double pre_ratio = pre.back() / pre.front();
      std::printf("\nlast block / first block: %s (post-LN), %s (pre-LN)\n", number(post_ratio, 2).c_str(),
                  number(pre.back() / pre.front(), 2).c_str());
      const auto [post_low, post_high] = std::minmax_element(post.begin(), post.end());
      const double post_spread = *post_high / *post_low;
      bool falling = true;
      for (std::size_t l = 1; l < pre.size(); ++l) falling = falling && pre[l] < pre[l - 1];
      lesson.claim(post_spread < 1.2, "post-LN's blocks get gradients within a factor 1.2 of each other");
      lesson.claim(falling && pre.front() > 1.5 * pre.back(), "pre-LN's gradients fall from the first block to the last");
      lesson.value("post_spread", post_spread, "%.2f");
      lesson.value("post_ratio", post_ratio, "%.2f");
      lesson.value("pre_ratio", pre_ratio, "%.2f");
      lesson.value("depth_blocks", static_cast<long long>(layers));

      std::printf("\nthe last block's ||dL/dW2|| as the stack deepens\n%8s %12s %12s\n", "blocks", "post-LN", "pre-LN");
      std::vector<double> post_last, pre_last;
      for (int depth : {3, 6, 12, 24, 48}) {
        post_last.push_back(mean_gradient_norms(depth, false, seeds).back());
        pre_last.push_back(mean_gradient_norms(depth, true, seeds).back());
        std::printf("%8d %12s %12s\n", depth, number(post_last.back(), 3).c_str(), number(pre_last.back(), 3).c_str());
      }
      // Xiong et al.: post-LN's last-layer gradient does not shrink with depth, pre-LN's falls
      // like 1/sqrt(L): from 6 to 24 blocks, by about half.
      const double post_change = post_last[3] / post_last[1], pre_change = pre_last[3] / pre_last[1];
      std::printf("from 6 to 24 blocks: x %s (post-LN), x %s (pre-LN; 1/sqrt(4) = 0.5)\n",
                  number(post_change, 2).c_str(), number(pre_change, 2).c_str());
      lesson.claim(std::abs(post_change - 1.0) < 0.15, "post-LN's last block keeps its gradient as the stack deepens");
      lesson.claim(pre_change > 0.4 && pre_change < 0.65, "pre-LN's last block's gradient falls about like 1/sqrt(L)");
      lesson.value("post_change", post_change, "%.2f");
      lesson.value("depth_from", 6);
      lesson.value("depth_to", 24);
      lesson.value("pre_change", pre_change, "%.2f");
    }
    lesson.end("depth");
  });
}
