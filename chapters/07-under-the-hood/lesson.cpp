// Chapter 7 lesson — under the hood: what attention costs, and exact tiled attention.
//
// Prints every number the chapter page shows (the page cuts the sections out of this program's
// output with \snippet) and writes the data of its figures. Deterministic: counts, fixed seeds,
// fixed formats, and memory measured by counting allocated bytes — never a clock. Timings belong
// to the benchmark (tools/scalebook/bench/ch07.py), not to the book. The book runs this on the reference;
// `./workbook run 7` runs it on the student's own code.
//
// This is the only source file of the lesson program that includes allocation_meter.hpp (it
// replaces malloc to count bytes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "allocation_meter.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/linalg.hpp"
#include "scalebook/masking.hpp"
#include "scalebook/random.hpp"
#include "under_the_hood.hpp"

using namespace scalebook;
using namespace scalebook::ch07;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMiB = 1024.0 * 1024.0;

// "1.23e+09"-style FLOP counts, or exact when short.
std::string count(Count x) {
  char buffer[32];
  if (x < 1000000) std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(x));
  else std::snprintf(buffer, sizeof buffer, "%.3e", static_cast<double>(x));
  return buffer;
}

std::string bytes(double b) {
  char buffer[32];
  if (b >= kMiB) std::snprintf(buffer, sizeof buffer, "%.1f MiB", b / kMiB);
  else std::snprintf(buffer, sizeof buffer, "%.1f KiB", b / 1024.0);
  return buffer;
}

// Naive attention as chapters 3 and 4 wrote it (lib's copies): the whole (n_q, n_k) matrix.
Matrix naive_attention(const Matrix& q, const Matrix& k, const Matrix& v, Masking masking) {
  const Matrix scores = matmul_transposed(q, k) / std::sqrt(static_cast<double>(q.cols()));
  BoolMatrix allowed = BoolMatrix::Constant(q.rows(), k.rows(), true);
  if (masking == Masking::CausalTopLeft) allowed = causal_mask(q.rows(), k.rows(), Alignment::TopLeft);
  if (masking == Masking::CausalBottomRight) allowed = causal_mask(q.rows(), k.rows(), Alignment::BottomRight);
  return matmul(masked_softmax(scores, allowed), v);
}

double largest_difference(const Matrix& a, const Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

// The online softmax of one row started from a finite "very negative" maximum instead of -infinity:
// the shortcut the page warns about. Returns the weights (NaN where the sum underflowed to 0).
RowVector online_from(const RowVector& x, double start, double& sum) {
  double m = start;
  sum = 0.0;
  for (Index j = 0; j < x.size(); ++j) {
    const double new_m = std::max(m, x(j));
    sum = sum * std::exp(m - new_m) + std::exp(x(j) - new_m);
    m = new_m;
  }
  RowVector w(x.size());
  for (Index j = 0; j < x.size(); ++j) w(j) = std::exp(x(j) - m) / sum;
  return w;
}

// Kaplan et al.'s count of attention per token in the forward pass: 2 n_layer n_ctx d_attn (their
// table 1 does not say which products: QK^T alone, or QK^T and the product with V over the causal
// half). Per layer and sequence 2 n^2 d, half of 4 n^2 d; the crossover with the linear parts.
Index kaplan_crossover(const LayerShape& s) {
  const Count d = s.model_width, linear = 8 * d * d + 4 * d * s.mlp_width;  // per token
  return static_cast<Index>((linear + 2 * d - 1) / (2 * d));
}

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    // ---- FLOPs of attention ------------------------------------------------------------------------
    lesson.begin("attention-flops");
    std::printf("attention_flops(n, n, 64, 64): one head, d_k = d_v = 64\n");
    std::printf("%7s %11s %11s %11s %11s %8s\n", "n", "scores", "softmax", "weighted", "total", "softmax");
    for (Index n = 256; n <= 8192; n *= 2) {
      //! [code-flops]
      const StageFlops f = attention_flops(n, n, 64, 64);
      //! [code-flops]
      std::printf("%7ld %11s %11s %11s %11s %7.1f%%\n", static_cast<long>(n), count(f.scores).c_str(),
                  count(f.softmax).c_str(), count(f.weighted_sum).c_str(), count(f.total()).c_str(),
                  100.0 * static_cast<double>(f.softmax) / static_cast<double>(f.total()));
    }
    const StageFlops a1 = attention_flops(1024, 1024, 64, 64), a2 = attention_flops(2048, 2048, 64, 64);
    std::printf("doubling n from 1024 to 2048 multiplies the total by %.2f\n",
                static_cast<double>(a2.total()) / static_cast<double>(a1.total()));
    lesson.claim(a2.total() == 4 * a1.total(), "doubling the sequence quadruples the work");
    lesson.claim(static_cast<double>(a1.softmax) < 0.05 * static_cast<double>(a1.total()),
                 "the softmax is a few percent of the FLOPs");
    lesson.end("attention-flops");

    // ---- a whole layer -----------------------------------------------------------------------------
    const LayerShape gpt2{768, 12, 3072};  // GPT-2 small
    lesson.begin("layer-flops");
    std::printf("layer_flops(n, {768, 12, 3072}): one GPT-2-small layer\n");
    std::printf("%7s %12s %12s %12s %10s\n", "n", "projections", "attention", "MLP", "attention");
    std::vector<double> ns, attention_part, linear_part;
    for (Index n = 128; n <= 32768; n *= 2) {
      const LayerFlops f = layer_flops(n, gpt2);
      std::printf("%7ld %12s %12s %12s %9.1f%%\n", static_cast<long>(n), count(f.projections).c_str(),
                  count(f.attention).c_str(), count(f.mlp).c_str(),
                  100.0 * static_cast<double>(f.attention) / static_cast<double>(f.total()));
    }
    const LayerFlops at_1024 = layer_flops(1024, gpt2);
    lesson.claim(5 * at_1024.attention < at_1024.total(), "at a thousand tokens attention is less than a fifth of the layer");
    for (Index n = 64; n <= 65536; n *= 2) {
      const LayerFlops f = layer_flops(n, gpt2);
      ns.push_back(static_cast<double>(n));
      attention_part.push_back(static_cast<double>(f.attention));
      linear_part.push_back(static_cast<double>(f.projections + f.mlp));
    }
    lesson.end("layer-flops");

    // ---- the crossover -----------------------------------------------------------------------------
    lesson.begin("crossover");
    struct Model {
      const char* name;
      LayerShape shape;
    };
    const Model models[] = {{"small (512, 8 heads)", {512, 8, 2048}},
                            {"GPT-2 small (768, 12)", {768, 12, 3072}},
                            {"GPT-2 medium (1024, 16)", {1024, 16, 4096}},
                            {"GPT-2 XL (1600, 25)", {1600, 25, 6400}},
                            {"7B-class (4096, 32)", {4096, 32, 16384}},
                            {"GPT-3 (12288, 96)", {12288, 96, 49152}}};
    std::printf("%-26s %9s %14s %20s\n", "d_model, heads (d_ff = 4d)", "crossover", "crossover / d",
                "Kaplan's count / d");
    bool about_6d = true, later_when_wider = true, kaplan_twice = true;
    Index previous = 0;
    for (const Model& m : models) {
      //! [code-crossover]
      const Index n_star = crossover_length(m.shape);
      //! [code-crossover]
      const double d = static_cast<double>(m.shape.model_width);
      const Index kaplan = kaplan_crossover(m.shape);
      std::printf("%-26s %9ld %14.2f %20.2f\n", m.name, static_cast<long>(n_star), static_cast<double>(n_star) / d,
                  static_cast<double>(kaplan) / d);
      about_6d = about_6d && n_star > 5.5 * d && n_star < 6.0 * d;
      later_when_wider = later_when_wider && n_star > previous;
      kaplan_twice = kaplan_twice && kaplan > 2 * n_star && kaplan < 2.1 * static_cast<double>(n_star);
      previous = n_star;
    }
    lesson.claim(about_6d, "the crossover length is just under 6 d");
    lesson.claim(later_when_wider, "the wider the model, the later attention dominates the arithmetic");
    lesson.claim(kaplan_twice, "with Kaplan et al.'s count the crossover lies about twice as far");
    const Index gpt2_star = crossover_length(gpt2);
    lesson.end("crossover");
    lesson.table("ch07_flops.dat", {"n", "attention", "projections_and_mlp"}, {ns, attention_part, linear_part});
    lesson.table("ch07_crossover.dat", {"n", "flops"},
                 {{static_cast<double>(gpt2_star)},
                  {static_cast<double>(layer_flops(gpt2_star, gpt2).attention)}});

    // ---- memory: formula ---------------------------------------------------------------------------
    lesson.begin("memory");
    std::printf("attention_memory(n, n, 64, 128, 128, bytes): working memory of one head\n");
    std::printf("%8s %14s %14s %14s\n", "n", "naive double", "naive float", "tiled double");
    std::vector<double> mem_n, mem_naive, mem_tiled;
    for (Index n = 1024; n <= 131072; n *= 2) {
      const MemoryUse d = attention_memory(n, n, 64, 128, 128, 8);
      const MemoryUse f = attention_memory(n, n, 64, 128, 128, 4);
      std::printf("%8ld %14s %14s %14s\n", static_cast<long>(n), bytes(static_cast<double>(d.naive)).c_str(),
                  bytes(static_cast<double>(f.naive)).c_str(), bytes(static_cast<double>(d.tiled)).c_str());
    }
    const MemoryUse small = attention_memory(1024, 1024, 64, 128, 128, 8), large = attention_memory(131072, 131072, 64, 128, 128, 8);
    lesson.claim(small.tiled == large.tiled && large.tiled < 1024 * 1024,
                 "tiling needs a few hundred KiB whatever n is");
    const double mib = 1024.0 * 1024.0;
    lesson.value("naive_small_n", 1024);
    lesson.value("naive_small_mib", static_cast<double>(small.naive) / mib, "%.0f");
    lesson.value("naive_large_n", 8192);
    lesson.value("naive_large_mib", static_cast<double>(attention_memory(8192, 8192, 64, 128, 128, 8).naive) / mib, "%.0f");
    for (Index n = 64; n <= 131072; n *= 2) {
      const MemoryUse d = attention_memory(n, n, 64, 128, 128, 8);
      mem_n.push_back(static_cast<double>(n));
      mem_naive.push_back(static_cast<double>(d.naive));
      mem_tiled.push_back(static_cast<double>(d.tiled));
    }
    lesson.end("memory");
    lesson.table("ch07_memory.dat", {"n", "naive", "tiled"}, {mem_n, mem_naive, mem_tiled});

    // ---- memory: measured --------------------------------------------------------------------------
    lesson.begin("memory-measured");
    std::printf("heap bytes live at once during one call (d = 64, causal, double):\n");
    std::printf("%6s %16s %16s %16s %16s\n", "n", "naive (ch. 4)", "tiled 128 x 128", "output itself",
                "tiled - output");
    const double tiled_formula = static_cast<double>(attention_memory(128, 128, 64, 128, 128, 8).tiled);
    double fixed_low = 1e300, fixed_high = 0.0;
    std::vector<double> measured_n, measured_naive, measured_tiled;
    Rng memory_rng(70);
    for (Index n = 128; n <= 2048; n *= 2) {
      const Matrix q = normal_matrix(n, 64, memory_rng), k = normal_matrix(n, 64, memory_rng),
                   v = normal_matrix(n, 64, memory_rng);
      AllocationReading naive_reading, tiled_reading;
      {
        AllocationMeter meter;
        const Matrix out = naive_attention(q, k, v, Masking::CausalTopLeft);
        naive_reading = meter.stop();
      }
      {
        //! [code-meter]
        scalebook::AllocationMeter meter;  // counts every malloc from here...
        const TiledResult out = tiled_attention(q, k, v, 128, 128, Masking::CausalTopLeft);
        tiled_reading = meter.stop();  // ...to here
        //! [code-meter]
      }
      const double output_bytes = static_cast<double>(n) * 64 * 8;
      const double fixed = static_cast<double>(tiled_reading.peak_bytes) - output_bytes;
      fixed_low = std::min(fixed_low, fixed);
      fixed_high = std::max(fixed_high, fixed);
      std::printf("%6ld %16s %16s %16s %16s\n", static_cast<long>(n),
                  bytes(static_cast<double>(naive_reading.peak_bytes)).c_str(),
                  bytes(static_cast<double>(tiled_reading.peak_bytes)).c_str(), bytes(output_bytes).c_str(),
                  bytes(fixed).c_str());
      measured_n.push_back(static_cast<double>(n));
      measured_naive.push_back(static_cast<double>(naive_reading.peak_bytes));
      measured_tiled.push_back(static_cast<double>(tiled_reading.peak_bytes));
      lesson.claim(static_cast<double>(naive_reading.peak_bytes) > 8.0 * static_cast<double>(n * n),
                   "the naive version holds more than the formula's one matrix");
    }
    std::printf("attention_memory's tiled figure for these blocks (7.4): %s\n", bytes(tiled_formula).c_str());
    lesson.claim(fixed_high - fixed_low < 1024 && std::abs(fixed_high - tiled_formula) < 1024 &&
                     fixed_low > measured_n.front() * 64 * 8,
                 "the tiled version holds its output plus a fixed working set, the same at every n, which "
                 "is what exercise 7.4's formula gives; at the smallest n it is larger than the output");
    lesson.end("memory-measured");
    lesson.table("ch07_memory_measured.dat", {"n", "naive", "tiled"}, {measured_n, measured_naive, measured_tiled});

    // ---- online softmax ----------------------------------------------------------------------------
    lesson.begin("online-softmax");
    const std::vector<double> xs = {1.0, 3.0, 2.0, 5.0, -kInf, 4.0};
    std::printf("one pass over x; m = running maximum, l = sum of exp(x - m)\n");
    std::printf("%4s %6s %8s %10s %12s\n", "step", "x", "m", "rescale", "l");
    {
      double m = -kInf, l = 0.0;
      for (std::size_t t = 0; t < xs.size(); ++t) {
        const double x = xs[t];
        double factor = 1.0;
        if (x != -kInf) {
          const double new_m = std::max(m, x);
          factor = std::exp(m - new_m);
          l = l * factor + std::exp(x - new_m);
          m = new_m;
        }
        std::printf("%4zu %6s %8.0f %10.6f %12.9f\n", t + 1, x == -kInf ? "-inf" : std::to_string(static_cast<int>(x)).c_str(),
                    m, factor, l);
      }
    }
    RowVector row(static_cast<Index>(xs.size()));
    for (std::size_t t = 0; t < xs.size(); ++t) row(static_cast<Index>(t)) = xs[t];
    //! [code-online]
    const SoftmaxState state = softmax_state(row);      // one pass: m and l together
    const Matrix weights = online_softmax(Matrix(row));  // then exp(x - m) / l
    //! [code-online]
    std::printf("softmax_state: m = %.0f, l = %.9f\n", state.max, state.sum);
    std::printf("weights:");
    for (Index j = 0; j < weights.cols(); ++j) std::printf(" %.6f", weights(0, j));
    std::printf("\n");
    // Against the two-pass softmax on many random rows.
    Rng softmax_rng(71);
    const Matrix many = 4.0 * normal_matrix(1000, 64, softmax_rng);
    const Matrix online = online_softmax(many);
    double worst = 0.0;
    for (Index i = 0; i < many.rows(); ++i) {
      const double m = many.row(i).maxCoeff();
      double l = 0.0;
      for (Index j = 0; j < many.cols(); ++j) l += std::exp(many(i, j) - m);
      for (Index j = 0; j < many.cols(); ++j)
        worst = std::max(worst, std::abs(online(i, j) - std::exp(many(i, j) - m) / l) / (std::exp(many(i, j) - m) / l));
    }
    std::printf("1000 rows of 64 scores: largest relative difference to the\n");
    // The count itself is roundoff (another correct order of operations gives another count): the
    // line prints the bound the claim holds, so that every correct implementation prints it alike.
    const double units = worst / (std::numeric_limits<double>::epsilon() / 2);
    std::printf("two-pass softmax %.2e (%s units of roundoff)\n", worst, units < 10 ? "under 10" : std::to_string(units).c_str());
    lesson.claim(units < 10, "the online softmax agrees to a handful of units of roundoff");
    // -infinity into the update itself, and a finite sentinel in place of -infinity.
    const double nan_factor = std::exp(-kInf - std::max(-kInf, -kInf));
    std::printf("\na -inf score while m = -inf: exp(m - max(m, x)) = exp(-inf - (-inf)) = %s\n",
                std::isnan(nan_factor) ? "NaN" : "a number");
    const double underflow = std::log(std::numeric_limits<double>::denorm_min()) - std::log(2.0);
    const double underflow_float = static_cast<double>(std::log(std::numeric_limits<float>::denorm_min()) - std::log(2.0f));
    const double normal = std::log(std::numeric_limits<double>::min());
    const double normal_float = static_cast<double>(std::log(std::numeric_limits<float>::min()));
    std::printf("exp(x) is a normal double down to x = %.2f, subnormal (fewer digits) below,\n"
                "0 below %.2f (in float: normal down to %.2f, 0 below %.2f)\n",
                normal, underflow, normal_float, underflow_float);
    lesson.value("normal_limit", -normal, "%.0f");
    lesson.value("zero_limit", -underflow, "%.0f");
    lesson.value("normal_limit_float", -normal_float, "%.0f");
    lesson.value("zero_limit_float", -underflow_float, "%.0f");
    const double sentinel = -1000.0;
    RowVector near_scores(4), mid_scores(4), far_scores(4);
    near_scores << -1010.0, -1012.0, -1011.0, -1013.0;  // all 10 or more below the sentinel
    mid_scores = near_scores.array() - 730.0;            // 740 or more below it: subnormal
    far_scores = near_scores.array() - 790.0;            // all 800 or more below it
    double near_sum = 0.0, mid_sum = 0.0, far_sum = 0.0;
    const RowVector near_w = online_from(near_scores, sentinel, near_sum);
    const RowVector mid_w = online_from(mid_scores, sentinel, mid_sum);
    const RowVector far_w = online_from(far_scores, sentinel, far_sum);
    const double near_error = largest_difference(near_w, online_softmax(Matrix(near_scores)));
    const RowVector mid_exact = online_softmax(Matrix(mid_scores));
    const double mid_error = largest_difference(mid_w, mid_exact);
    const double mid_relative = (mid_w - mid_exact).cwiseAbs().cwiseQuotient(mid_exact).maxCoeff();
    std::printf("start at m = %.0f instead of -inf:\n", sentinel);
    std::printf("  scores 10..13 below it:   l = %.3e, weights off by at most %.1e\n", near_sum, near_error);
    std::printf("  scores 740..743 below it: l = %.3e, weights off by up to %.1e (%.1f%% relative), all finite\n",
                mid_sum, mid_error, 100 * mid_relative);
    std::printf("  scores 800..803 below it: l = %g, weights %s\n", far_sum, std::isnan(far_w(0)) ? "NaN" : "finite");
    lesson.claim(std::isnan(nan_factor), "the update with m = -inf and a -inf score gives NaN, so -inf scores are skipped");
    lesson.claim(near_error < 1e-15 && mid_sum > 0.0 && mid_w.allFinite() && mid_relative > 0.01 && far_sum == 0.0 &&
                     std::isnan(far_w(0)),
                 "a finite sentinel is exact while exp(x - m) stays normal, silently loses precision between about "
                 "708 and 745 below it, and gives 0/0 beyond");
    lesson.end("online-softmax");

    // ---- tiled equals naive ------------------------------------------------------------------------
    lesson.begin("tiled-equals-naive");
    struct Config {
      Index n_q, n_k, block_q, block_k;
      Masking masking;
      const char* name;
    };
    const Config configs[] = {{256, 256, 64, 64, Masking::None, "no mask"},
                              {256, 256, 64, 64, Masking::CausalTopLeft, "causal"},
                              {300, 300, 64, 48, Masking::CausalTopLeft, "causal"},
                              {100, 300, 32, 64, Masking::CausalTopLeft, "causal top-left"},
                              {100, 300, 32, 64, Masking::CausalBottomRight, "causal bottom-right"},
                              {300, 100, 64, 32, Masking::CausalBottomRight, "causal bottom-right"},
                              {64, 64, 1, 1, Masking::CausalTopLeft, "causal"},
                              {64, 64, 64, 64, Masking::CausalTopLeft, "causal"}};
    std::printf("%5s %5s %7s %7s  %-20s %9s %8s\n", "n_q", "n_k", "block_q", "block_k", "mask", "max diff",
                "tiles");
    Rng tiled_rng(72);
    double worst_tiled = 0.0;
    for (const Config& c : configs) {
      const Matrix q = normal_matrix(c.n_q, 32, tiled_rng), k = normal_matrix(c.n_k, 32, tiled_rng),
                   v = normal_matrix(c.n_k, 16, tiled_rng);
      //! [code-tiled]
      const TiledResult tiled = tiled_attention(q, k, v, c.block_q, c.block_k, c.masking);
      //! [code-tiled]
      const Matrix naive = naive_attention(q, k, v, c.masking);
      worst_tiled = std::max(worst_tiled, largest_difference(tiled.output, naive));
      std::printf("%5ld %5ld %7ld %7ld  %-20s %9.1e %4ld/%ld\n", static_cast<long>(c.n_q), static_cast<long>(c.n_k),
                  static_cast<long>(c.block_q), static_cast<long>(c.block_k), c.name,
                  largest_difference(tiled.output, naive), static_cast<long>(tiled.tiles_computed),
                  static_cast<long>(tiled.tiles_computed + tiled.tiles_skipped));
    }
    lesson.claim(worst_tiled < 1e-14, "the tiled result is the same attention, to rounding");
    lesson.end("tiled-equals-naive");

    // ---- which tiles are computed ------------------------------------------------------------------
    lesson.begin("tiles");
    const auto draw = [](Index n_q, Index n_k, Index block, Masking masking, const char* title) {
      const Matrix q = Matrix::Ones(n_q, 1), k = Matrix::Ones(n_k, 1), v = Matrix::Ones(n_k, 1);
      const TiledResult t = tiled_attention(q, k, v, block, block, masking);
      const Index shift = masking == Masking::CausalBottomRight ? n_k - n_q : 0;
      std::printf("%s: %ld x %ld scores in tiles of %ld, %ld computed, %ld skipped\n", title,
                  static_cast<long>(n_q), static_cast<long>(n_k), static_cast<long>(block),
                  static_cast<long>(t.tiles_computed), static_cast<long>(t.tiles_skipped));
      for (Index i0 = 0; i0 < n_q; i0 += block) {
        std::printf("   ");
        for (Index j0 = 0; j0 < n_k; j0 += block) {
          // A tile is computed when its last query sees its first key; it needs the mask when its
          // last key is later than its first query's last visible key.
          const Index i1 = std::min(n_q, i0 + block) - 1, j1 = std::min(n_k, j0 + block) - 1;
          const bool any = j0 <= i1 + shift, full = j1 <= i0 + shift;
          std::printf(" %s", !any ? "  .  " : full ? "[###]" : "[#. ]");
        }
        std::printf("\n");
      }
    };
    draw(16, 16, 4, Masking::CausalTopLeft, "causal, n = 16");
    draw(8, 16, 4, Masking::CausalBottomRight, "bottom-right, 8 queries");
    std::printf("[###] computed, no mask needed; [#. ] computed and masked;\n");
    std::printf("  .   skipped: every score in it is masked\n");
    for (Index n : {1024, 4096}) {
      const Matrix ones = Matrix::Ones(n, 1);
      const TiledResult t = tiled_attention(ones, ones, ones, 128, 128, Masking::CausalTopLeft);
      const Index all = t.tiles_computed + t.tiles_skipped;
      std::printf("n = %ld in tiles of 128: %ld of %ld tiles computed (%.1f%%)\n", static_cast<long>(n),
                  static_cast<long>(t.tiles_computed), static_cast<long>(all),
                  100.0 * static_cast<double>(t.tiles_computed) / static_cast<double>(all));
      if (n == 4096) {
        lesson.claim(2 * t.tiles_computed > all && 2 * t.tiles_computed < all * 21 / 20,
                     "for long sequences skipping the causal tiles halves the work");
      }
    }
    lesson.end("tiles");
    // Data of the tile figure: 32 x 32 causal scores in tiles of 8; 2 = allowed, 1 = masked inside
    // a computed tile, 0 = in a skipped tile.
    {
      const Index n = 32, block = 8;
      lesson.value("figure_tile", block);
      Matrix picture(n, n);
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) {
          const Index tile_last_query = std::min(n, (i / block + 1) * block) - 1;
          const bool computed = (j / block) * block <= tile_last_query;
          picture(i, j) = j <= i ? 2.0 : computed ? 1.0 : 0.0;
        }
      lesson.matrix("ch07_tiles.dat", picture);
    }
  });
}
