// Chapter 7 checks — under the hood: what attention costs, and exact tiled attention.
//
// Every case is named after its exercise ("7.6 ...") so that progress and grading count per
// exercise. FLOP and byte counts are worked out by hand or from the formulas written in this file;
// softmax and attention are computed here by plain loops with std::exp; tile counts come from the
// mask rule applied entry by entry. Nothing is taken from the code under test. When a check fails,
// its message names the known mistake the output looks like, if any.
//
// The memory check counts every heap allocation of tiled_attention through allocation_meter.hpp,
// which replaces malloc in this binary (so this is the only file of the binary that includes it).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "allocation_meter.hpp"
#include "scalebook/linalg.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"
#include "under_the_hood.hpp"

using namespace scalebook;
using namespace scalebook::ch07;
using scalebook::testing::identical;
using scalebook::testing::near;
using scalebook::testing::suspect;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The known mistakes, as the failure messages name them.
const std::string kMultiplyAddAsOne = "a multiply-add counted as one FLOP instead of two?";
const std::string kSumNotRescaled = "running sum not rescaled when the maximum grows?";
const std::string kAccNotRescaled = "output accumulator not rescaled when the maximum grows?";
const std::string kFiniteMax = "running maximum initialised to a finite number (like -10000) instead of -infinity?";
const std::string kSkipOffByOne = "causal block skipping off by one block?";
const std::string kPartialDropped = "last partial block dropped (n / block rounded down instead of up)?";
const std::string kAlignmentSwapped = "top-left and bottom-right alignment swapped?";

std::string str(long long x) { return std::to_string(x); }

std::string masking_name(Masking m) {
  switch (m) {
    case Masking::None: return "None";
    case Masking::CausalTopLeft: return "CausalTopLeft";
    case Masking::CausalBottomRight: return "CausalBottomRight";
  }
  return "?";
}

// May query i see key j? The rule of chapter 4, written out here.
bool allowed(Masking masking, Index i, Index j, Index n_q, Index n_k) {
  switch (masking) {
    case Masking::None: return true;
    case Masking::CausalTopLeft: return j <= i;
    case Masking::CausalBottomRight: return j <= i + (n_k - n_q);
  }
  return false;
}

// Exception checks: the exact type, and a message that starts with the function's name (lib's
// throws_typed, as CHECK_THROWS_TYPED; `what` names the bad input in the report).
template <class Error, class F>
void check_throws(const char* function, F&& call, const std::string& what) {
  const scalebook::testing::ThrowMatch thrown = scalebook::testing::throws_typed(
      [&] { call(); }, [](const std::exception& e) { return typeid(e) == typeid(Error); },
      scalebook::testing::type_name(typeid(Error)), function, std::string(function) + " on " + what, "");
  if (!thrown) FAIL_CHECK(thrown.report);
}

// ---- formulas of the counts, written out here ----------------------------------------------------

// A product of an (a, b) matrix by a (b, c) matrix: a·b·c multiply-adds, two FLOPs each.
std::int64_t product_flops(std::int64_t a, std::int64_t b, std::int64_t c) { return 2 * a * b * c; }

struct LayerCounts {
  std::int64_t projections, attention, mlp;
};

LayerCounts layer_by_formula(std::int64_t n, std::int64_t d, std::int64_t h, std::int64_t ff) {
  const std::int64_t d_head = d / h;
  const std::int64_t per_head = product_flops(n, d_head, n) + 5 * n * n + product_flops(n, n, d_head);
  return {4 * product_flops(n, d, d), h * per_head, product_flops(n, d, ff) + product_flops(n, ff, d)};
}

// ---- softmax and attention by loops ----------------------------------------------------------------

// The two-pass stable softmax of one row: maximum, then sum, then weights; -inf entries weigh 0,
// a row of -inf is all zeros.
std::vector<double> two_pass_softmax(const std::vector<double>& x) {
  double m = -kInf;
  for (double v : x) m = std::max(m, v);
  std::vector<double> w(x.size(), 0.0);
  if (m == -kInf) return w;
  double l = 0.0;
  for (double v : x) l += std::exp(v - m);
  for (std::size_t j = 0; j < x.size(); ++j) w[j] = std::exp(x[j] - m) / l;
  return w;
}

Matrix two_pass_softmax_rows(const Matrix& s) {
  Matrix w(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i) {
    std::vector<double> row(s.cols());
    for (Index j = 0; j < s.cols(); ++j) row[j] = s(i, j);
    const std::vector<double> r = two_pass_softmax(row);
    for (Index j = 0; j < s.cols(); ++j) w(i, j) = r[j];
  }
  return w;
}

// Naive masked attention: scores q_i·k_j / sqrt(d_k), softmax over the allowed keys, times v.
Matrix attention_by_loops(const Matrix& q, const Matrix& k, const Matrix& v, Masking masking) {
  const Index n_q = q.rows(), n_k = k.rows();
  const double root = std::sqrt(static_cast<double>(q.cols()));
  Matrix out = Matrix::Zero(n_q, v.cols());
  for (Index i = 0; i < n_q; ++i) {
    std::vector<double> scores(n_k);
    for (Index j = 0; j < n_k; ++j) {
      double dot = 0.0;
      for (Index c = 0; c < q.cols(); ++c) dot += q(i, c) * k(j, c);
      scores[j] = allowed(masking, i, j, n_q, n_k) ? dot / root : -kInf;
    }
    const std::vector<double> w = two_pass_softmax(scores);
    for (Index j = 0; j < n_k; ++j)
      for (Index c = 0; c < v.cols(); ++c) out(i, c) += w[j] * v(j, c);
  }
  return out;
}

// The tiled algorithm per query, by loops, with switches for the known mistakes: its output is
// what a tiled_attention with that mistake returns (rows do not depend on block_q).
struct Slips {
  bool rescale_sum = true;
  bool rescale_acc = true;
  double initial_max = -kInf;
  bool drop_partial_key_block = false;
};

Matrix tiled_model(const Matrix& q, const Matrix& k, const Matrix& v, Index block_k, Masking masking,
                   Slips slips) {
  const Index n_q = q.rows(), n_k = k.rows();
  const double root = std::sqrt(static_cast<double>(q.cols()));
  const Index key_blocks = slips.drop_partial_key_block ? n_k / block_k : (n_k + block_k - 1) / block_k;
  Matrix out = Matrix::Zero(n_q, v.cols());
  for (Index i = 0; i < n_q; ++i) {
    double m = slips.initial_max, l = 0.0;
    std::vector<double> acc(v.cols(), 0.0);
    for (Index b = 0; b < key_blocks; ++b) {
      const Index j0 = b * block_k, j1 = std::min(n_k, j0 + block_k);
      std::vector<double> s;
      std::vector<Index> js;
      for (Index j = j0; j < j1; ++j) {
        if (!allowed(masking, i, j, n_q, n_k)) continue;
        double dot = 0.0;
        for (Index c = 0; c < q.cols(); ++c) dot += q(i, c) * k(j, c);
        s.push_back(dot / root);
        js.push_back(j);
      }
      if (s.empty()) continue;
      double new_m = m;
      for (double x : s) new_m = std::max(new_m, x);
      const double alpha = std::exp(m - new_m);
      double tile_sum = 0.0;
      std::vector<double> tile_acc(v.cols(), 0.0);
      for (std::size_t t = 0; t < s.size(); ++t) {
        const double p = std::exp(s[t] - new_m);
        tile_sum += p;
        for (Index c = 0; c < v.cols(); ++c) tile_acc[c] += p * v(js[t], c);
      }
      l = (slips.rescale_sum ? alpha * l : l) + tile_sum;
      for (Index c = 0; c < v.cols(); ++c) acc[c] = (slips.rescale_acc ? alpha * acc[c] : acc[c]) + tile_acc[c];
      m = new_m;
    }
    for (Index c = 0; c < v.cols(); ++c) out(i, c) = l == 0.0 ? 0.0 : acc[c] / l;
  }
  return out;
}

// The outputs of the known mistakes of 7.6 for this input.
std::string tiled_suspects(const Matrix& out, const Matrix& q, const Matrix& k, const Matrix& v,
                           Index block_k, Masking masking) {
  Slips no_sum, no_acc, neither, dropped;
  no_sum.rescale_sum = false;
  no_acc.rescale_acc = false;
  neither.rescale_sum = neither.rescale_acc = false;
  dropped.drop_partial_key_block = true;
  const bool has_partial = k.rows() % block_k != 0;
  Masking swapped = masking == Masking::CausalTopLeft ? Masking::CausalBottomRight
                    : masking == Masking::CausalBottomRight ? Masking::CausalTopLeft : Masking::None;
  std::string why = suspect(out, {{kSumNotRescaled.c_str(), tiled_model(q, k, v, block_k, masking, no_sum)},
                                  {kAccNotRescaled.c_str(), tiled_model(q, k, v, block_k, masking, no_acc)},
                                  {"running sum and output accumulator not rescaled when the maximum grows?",
                                   tiled_model(q, k, v, block_k, masking, neither)}});
  if (why.empty() && has_partial) {
    why = suspect(out, {{kPartialDropped.c_str(), tiled_model(q, k, v, block_k, masking, dropped)}});
  }
  if (why.empty() && swapped != masking && q.rows() != k.rows()) {
    why = suspect(out, {{kAlignmentSwapped.c_str(), attention_by_loops(q, k, v, swapped)}});
  }
  if (why.empty() && out.array().isNaN().any()) {
    why = "NaN in the output: a query whose first tiles are all masked has m = -inf, and "
          "exp(-inf - (-inf)) is NaN; or " + std::string(kFiniteMax);
  }
  return why;
}

// The tiles holding at least one allowed score, found entry by entry.
Index tiles_with_allowed_scores(Index n_q, Index n_k, Index block_q, Index block_k, Masking masking) {
  Index count = 0;
  for (Index i0 = 0; i0 < n_q; i0 += block_q) {
    for (Index j0 = 0; j0 < n_k; j0 += block_k) {
      bool any = false;
      for (Index i = i0; i < std::min(n_q, i0 + block_q) && !any; ++i)
        for (Index j = j0; j < std::min(n_k, j0 + block_k) && !any; ++j) any = allowed(masking, i, j, n_q, n_k);
      count += any;
    }
  }
  return count;
}

Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// Runs tiled_attention and checks the tile counts against the mask rule (first, so that a count
// that names the mistake is the first failure), then the output against the loops.
void check_tiled(const Matrix& q, const Matrix& k, const Matrix& v, Index block_q, Index block_k,
                 Masking masking) {
  INFO("n_q = ", q.rows(), ", n_k = ", k.rows(), ", d_k = ", q.cols(), ", d_v = ", v.cols(),
       ", block_q = ", block_q, ", block_k = ", block_k, ", masking = ", masking_name(masking));
  const TiledResult result = tiled_attention(q, k, v, block_q, block_k, masking);
  const Index total = ceil_div(q.rows(), block_q) * ceil_div(k.rows(), block_k);
  const Index with_allowed = tiles_with_allowed_scores(q.rows(), k.rows(), block_q, block_k, masking);
  CHECK_MESSAGE(result.tiles_computed + result.tiles_skipped == total,
                "tiles_computed + tiles_skipped = ", result.tiles_computed + result.tiles_skipped,
                ", but the blocks make ", total, " tiles: ", kPartialDropped);
  const Masking swapped = masking == Masking::CausalTopLeft ? Masking::CausalBottomRight : Masking::CausalTopLeft;
  std::string why;
  if (masking != Masking::None && q.rows() != k.rows() &&
      result.tiles_computed == tiles_with_allowed_scores(q.rows(), k.rows(), block_q, block_k, swapped))
    why = kAlignmentSwapped;
  else if (result.tiles_computed > with_allowed)
    why = "tiles whose scores are all masked were computed (and masked) instead of skipped: " + kSkipOffByOne;
  else if (result.tiles_computed < with_allowed)
    why = "tiles holding allowed scores were skipped: " + kSkipOffByOne;
  CHECK_MESSAGE(result.tiles_computed == with_allowed, "tiles_computed = ", result.tiles_computed, ", expected ",
                with_allowed, " (the tiles holding at least one allowed score). ", why);
  const Matrix expected = attention_by_loops(q, k, v, masking);
  CHECK_MESSAGE(near(result.output, expected, 1e-12),
                tiled_suspects(result.output, q, k, v, block_k, masking));
}

// |actual - expected| <= tol · |expected| entry by entry; exact zeros must stay exact zeros.
bool relatively_near(const Matrix& actual, const Matrix& expected, double tol, std::string* report) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    *report = "shape " + shape_of(actual) + ", expected " + shape_of(expected);
    return false;
  }
  double worst = 0.0;
  Index wi = 0, wj = 0;
  bool ok = true;
  for (Index i = 0; i < actual.rows(); ++i) {
    for (Index j = 0; j < actual.cols(); ++j) {
      const double a = actual(i, j), e = expected(i, j);
      const double rel = e == 0.0 ? (a == 0.0 ? 0.0 : kInf) : std::abs(a - e) / std::abs(e);
      if (!(rel <= tol)) ok = false;
      if (!(rel <= worst)) {
        worst = rel;
        wi = i;
        wj = j;
      }
    }
  }
  char text[200];
  std::snprintf(text, sizeof text, "worst relative difference %.3g at (%ld, %ld): %.17g vs %.17g (tolerance %.3g)",
                worst, static_cast<long>(wi), static_cast<long>(wj), actual(wi, wj), expected(wi, wj), tol);
  *report = text;
  return ok;
}

Matrix row_of(std::initializer_list<double> xs) {
  Matrix m(1, static_cast<Index>(xs.size()));
  Index j = 0;
  for (double x : xs) m(0, j++) = x;
  return m;
}

}  // namespace

// The memory proof measures tiled_attention where it runs. Here, in this process; the grading
// path's checks binary links a definition of the same name instead (strong, so it wins over this
// weak one), which reads the worker's memory from the kernel, outside the worker (remote.def).
namespace scalebook::ch07 {
__attribute__((weak)) HeapUse tiled_attention_heap_use(const Matrix& q, const Matrix& k, const Matrix& v,
                                                       Index block_q, Index block_k, Masking masking) {
  AllocationMeter meter;
  const TiledResult result = tiled_attention(q, k, v, block_q, block_k, masking);
  const AllocationReading reading = meter.stop();
  return {reading.peak_bytes, reading.largest_block};
}
}  // namespace scalebook::ch07

TEST_SUITE("07-under-the-hood") {

// ---- 7.1 attention_flops ---------------------------------------------------------------------------

TEST_CASE("7.1 a worked example counts each stage") {
  // n_q = 3 queries, n_k = 5 keys: 15 scores. Each is a dot product of length d_k = 4: 4 multiply-
  // adds = 8 FLOPs, 120 in all. Softmax: 5 FLOPs per score, 75. Weights times V (d_v = 2): each
  // weight multiplies and adds into 2 outputs, 4 FLOPs, 60 in all. Total 255.
  const StageFlops f = attention_flops(3, 5, 4, 2);
  const std::string why = f.scores == 60 || f.weighted_sum == 30 ? kMultiplyAddAsOne : "";
  CHECK_MESSAGE(f.scores == 120, "scores: 15 dot products of length 4. ", why);
  CHECK_MESSAGE(f.softmax == 75, "softmax: 5 FLOPs per score (scale, subtract max, exp, add, divide)");
  CHECK_MESSAGE(f.weighted_sum == 60, "weighted sum: 15 weights times rows of length 2. ", why);
  CHECK_MESSAGE(f.total() == 255, "attention_flops(3, 5, 4, 2): the three stages must add up to 120 + 75 + 60 = 255, got ", f.total());
  // d_k and d_v are not interchangeable, nor are n_q and n_k... but the count is symmetric in them.
  const StageFlops g = attention_flops(5, 3, 2, 4);
  CHECK_MESSAGE(g.scores == 60, "n_q = 5, n_k = 3, d_k = 2: 15 dot products of length 2. ", g.scores == 30 ? kMultiplyAddAsOne : "");
  CHECK_MESSAGE(g.weighted_sum == 120, "d_v = 4: 15 weights times rows of length 4");
}

TEST_CASE("7.1 a long sequence is counted exactly in 64 bits") {
  // n = 2^20 tokens, d_k = d_v = 128: 2^40 scores. Scores 2·2^40·128 = 2^48 FLOPs: an int overflows.
  const Index n = Index{1} << 20;
  const StageFlops f = attention_flops(n, n, 128, 128);
  const std::int64_t pairs = std::int64_t{1} << 40;
  CHECK_MESSAGE(f.scores == (std::int64_t{1} << 48), "2·n²·d_k with n = 2^20, d_k = 128. ",
                f.scores == (std::int64_t{1} << 47) ? kMultiplyAddAsOne : "overflow in 32-bit arithmetic?");
  CHECK_MESSAGE(f.softmax == 5 * pairs, "softmax with n = 2^20: 5 FLOPs per score, 5 · 2^40, got ", f.softmax);
  CHECK_MESSAGE(f.weighted_sum == (std::int64_t{1} << 48), "weighted sum with n = 2^20, d_v = 128: 2·n²·d_v = 2^48, got ", f.weighted_sum);
  CHECK_MESSAGE(f.total() == 2 * (std::int64_t{1} << 48) + 5 * pairs, "the total with n = 2^20 must be 2 · 2^48 + 5 · 2^40, got ", f.total());
  // One query against one key of width one: the smallest attention.
  const StageFlops one = attention_flops(1, 1, 1, 1);
  CHECK_MESSAGE(one.scores == 2, "a dot product of length 1 is one multiply-add: 2 FLOPs. ",
                one.scores == 1 ? kMultiplyAddAsOne : "");
  CHECK_MESSAGE(one.total() == 2 + 5 + 2, "attention_flops(1, 1, 1, 1) must total 2 + 5 + 2 = 9, got ", one.total());
}

TEST_CASE("7.1 sizes below one throw ShapeError") {
  for (Index bad : {Index{0}, Index{-1}, Index{-1} << 40}) {
    const std::string what = "a size of " + str(bad);
    check_throws<ShapeError>("attention_flops", [&] { attention_flops(bad, 4, 4, 4); }, what + " for n_q");
    check_throws<ShapeError>("attention_flops", [&] { attention_flops(4, bad, 4, 4); }, what + " for n_k");
    check_throws<ShapeError>("attention_flops", [&] { attention_flops(4, 4, bad, 4); }, what + " for d_k");
    check_throws<ShapeError>("attention_flops", [&] { attention_flops(4, 4, 4, bad); }, what + " for d_v");
  }
}

// ---- 7.2 layer_flops -------------------------------------------------------------------------------

TEST_CASE("7.2 a small layer worked by hand") {
  // n = 10, d_model = 8, two heads of width 4, d_ff = 32.
  // Projections: 4 products (10, 8)·(8, 8): 4 · 2·10·8·8 = 5120.
  // Attention per head: scores 2·10·10·4 = 800, softmax 5·100 = 500, times V 800; two heads: 4200.
  // MLP: (10, 8)·(8, 32) and (10, 32)·(32, 8): 2 · 2·10·8·32 = 10240.
  const LayerFlops f = layer_flops(10, LayerShape{8, 2, 32});
  const bool halved = f.projections == 2560 || f.mlp == 5120;
  CHECK_MESSAGE(f.projections == 5120, "Q, K, V and output projections, each (10, 8)·(8, 8). ",
                halved ? kMultiplyAddAsOne : "");
  CHECK_MESSAGE(f.attention == 4200, "two heads of width 4: per head 800 + 500 + 800. ",
                f.attention == 3600 ? std::string("the softmax left out?") : f.attention == 3700 ? "softmax counted once, not per head?" : "");
  CHECK_MESSAGE(f.mlp == 10240, "up to d_ff and back down. ", halved ? kMultiplyAddAsOne : "");
  CHECK_MESSAGE(f.total() == 5120 + 4200 + 10240, "the layer's total must be 5120 + 4200 + 10240, got ", f.total());
}

TEST_CASE("7.2 GPT-2 small at 1024 and 8192 tokens") {
  // d_model = 768, 12 heads, d_ff = 3072 (the counts are the formulas written in this file).
  for (std::int64_t n : {1024, 8192}) {
    INFO("n = ", n);
    const LayerCounts expected = layer_by_formula(n, 768, 12, 3072);
    const LayerFlops f = layer_flops(n, LayerShape{768, 12, 3072});
    CHECK_MESSAGE(f.projections == expected.projections, "GPT-2 small's projections: 4 products (n, 768)·(768, 768), expected ", expected.projections, ", got ", f.projections);
    CHECK_MESSAGE(f.attention == expected.attention, "GPT-2 small's attention over 12 heads of width 64: expected ", expected.attention, ", got ", f.attention);
    CHECK_MESSAGE(f.mlp == expected.mlp, "GPT-2 small's MLP, 768 to 3072 and back: expected ", expected.mlp, ", got ", f.mlp);
  }
  // One head as wide as the model, one token: every term at its smallest.
  const LayerFlops tiny = layer_flops(1, LayerShape{1, 1, 1});
  CHECK_MESSAGE(tiny.projections == 8, "one token, d_model 1: 4 products of 2 FLOPs, got ", tiny.projections);
  CHECK_MESSAGE(tiny.attention == 2 + 5 + 2, "one token, one head of width 1: 2 + 5 + 2 FLOPs of attention, got ", tiny.attention);
  CHECK_MESSAGE(tiny.mlp == 4, "one token, d_ff 1: 2 products of 2 FLOPs, got ", tiny.mlp);
}

TEST_CASE("7.2 bad sizes and shapes throw ShapeError") {
  for (Index bad : {Index{0}, Index{-1}, Index{-1} << 40}) {
    const std::string what = "a size of " + str(bad);
    check_throws<ShapeError>("layer_flops", [&] { layer_flops(bad, LayerShape{8, 2, 32}); }, what + " for n");
    check_throws<ShapeError>("layer_flops", [&] { layer_flops(4, LayerShape{bad, 2, 32}); }, what + " for d_model");
    check_throws<ShapeError>("layer_flops", [&] { layer_flops(4, LayerShape{8, bad, 32}); }, what + " for n_heads");
    check_throws<ShapeError>("layer_flops", [&] { layer_flops(4, LayerShape{8, 2, bad}); }, what + " for d_ff");
  }
  check_throws<ShapeError>("layer_flops", [] { layer_flops(4, LayerShape{10, 3, 32}); }, "d_model 10, 3 heads");
  check_throws<ShapeError>("layer_flops", [] { layer_flops(4, LayerShape{8, 16, 32}); }, "more heads than d_model");
}

// ---- 7.3 crossover_length --------------------------------------------------------------------------

TEST_CASE("7.3 the crossover is the smallest length where attention reaches the rest") {
  struct Case {
    Index d, h, ff;
  };
  // d = 5, h = 1, d_ff = 5: attention 25·n², the rest 300·n: exactly equal at n = 12 (rounding
  // down and adding one would say 13). d = 768 (GPT-2 small): 14155776 / 3132 = 4519.8, so 4520.
  // d = 6, h = 1, d_ff = 11: the rest 552·n, attention 29·n²; 552 = 19·29 + 1 leaves 1 over, so
  // n = 20, and a ceiling division that adds q - 2 instead of q - 1 says 19.
  for (Case c : {Case{5, 1, 5}, Case{768, 12, 3072}, Case{64, 1, 256}, Case{4096, 32, 16384}, Case{1, 1, 1},
                 Case{8, 8, 1}, Case{6, 1, 11}}) {
    INFO("d_model = ", c.d, ", n_heads = ", c.h, ", d_ff = ", c.ff);
    // Search by the formulas of this file: the first n at which attention >= projections + mlp.
    Index expected = 1;
    while (true) {
      const LayerCounts counts = layer_by_formula(expected, c.d, c.h, c.ff);
      if (counts.attention >= counts.projections + counts.mlp) break;
      ++expected;
    }
    const Index n = crossover_length(LayerShape{c.d, c.h, c.ff});
    std::string why;
    const LayerCounts at = layer_by_formula(std::max<Index>(n, 1), c.d, c.h, c.ff);
    const std::int64_t rest = 8 * c.d * c.d + 4 * c.d * c.ff, per_pair = 4 * c.d + 5 * c.h;
    if (n == expected - 1 && rest % per_pair == 1)
      why = "one too short where " + str(rest) + " / " + str(per_pair) + " leaves 1 over: a ceiling division (p + q - 1) / q "
            "adds exactly q - 1, no less";
    else if (n == expected - 1) why = "one too short: rounded down instead of up?";
    else if (n == expected + 1) why = "one too long: rounded down and added one, which is wrong when the division is exact?";
    else if (n > 0 && at.attention < at.projections) why = "attention has not even reached the projections there";
    else if (n > 0 && n < expected) why = "the MLP left out? The crossover compares attention with the projections AND the MLP";
    CHECK_MESSAGE(n == expected, "crossover_length returned ", n, "; the smallest n where attention's FLOPs reach the "
                                 "projections' and the MLP's together is ", expected, std::string(why.empty() ? "" : " | ") + why);
  }
}

TEST_CASE("7.3 bad shapes throw ShapeError") {
  for (Index bad : {Index{0}, Index{-1}, Index{-1} << 40}) {
    const std::string what = "a size of " + str(bad);
    check_throws<ShapeError>("crossover_length", [&] { crossover_length(LayerShape{bad, 2, 32}); }, what + " for d_model");
    check_throws<ShapeError>("crossover_length", [&] { crossover_length(LayerShape{8, bad, 32}); }, what + " for n_heads");
    check_throws<ShapeError>("crossover_length", [&] { crossover_length(LayerShape{8, 2, bad}); }, what + " for d_ff");
  }
  check_throws<ShapeError>("crossover_length", [] { crossover_length(LayerShape{10, 3, 32}); }, "d_model 10, 3 heads");
}

// ---- 7.4 attention_memory --------------------------------------------------------------------------

TEST_CASE("7.4 naive memory is the whole score matrix and tiled memory does not grow with n") {
  // n = 4096, d_v = 64, blocks of 128, doubles: naive 4096² · 8 = 134217728 bytes (128 MiB);
  // tiled (128·128 + 128·64 + 2·128) · 8 = 198656 bytes, at n = 4096 and at n = 65536 alike.
  const MemoryUse m = attention_memory(4096, 4096, 64, 128, 128, 8);
  CHECK_MESSAGE(m.naive == 134217728, "naive attention at n = 4096 holds the 4096 x 4096 scores in doubles: 134217728 bytes, got ", m.naive);
  CHECK_MESSAGE(m.tiled == 198656, "one 128 x 128 tile, a 128 x 64 accumulator, 128 maxima and 128 sums");
  const MemoryUse long_one = attention_memory(65536, 65536, 64, 128, 128, 8);
  CHECK_MESSAGE(long_one.naive == std::int64_t{65536} * 65536 * 8, "naive attention at n = 65536 holds 65536² doubles (count in 64 bits), got ", long_one.naive);
  CHECK_MESSAGE(long_one.tiled == 198656, "the tiled working memory must not depend on n");
  // Floats take 4 bytes; n_q and n_k differ (decoding: one query, many cached keys).
  const MemoryUse f = attention_memory(1, 1000, 64, 128, 128, 4);
  CHECK_MESSAGE(f.naive == 4000, "one query and 1000 keys in floats: 1000 scores of 4 bytes, got ", f.naive);
  CHECK_MESSAGE(f.tiled == (1 * 128 + 1 * 64 + 2 * 1) * 4, "one query: a 1 x 128 tile, one accumulator row, one max, one sum");
}

TEST_CASE("7.4 a block longer than its sequence is cut to it") {
  // n_q = 3, n_k = 5, blocks of 64: the only tile is 3 x 5. d_v = 2: (15 + 6 + 6) · 8 = 216.
  const MemoryUse m = attention_memory(3, 5, 2, 64, 64, 8);
  CHECK_MESSAGE(m.naive == 120, "3 queries and 5 keys in doubles: 15 scores of 8 bytes, got ", m.naive);
  CHECK_MESSAGE(m.tiled == 216, "b_q = min(64, 3) = 3 and b_k = min(64, 5) = 5");
  const MemoryUse ones = attention_memory(7, 9, 3, 1, 1, 8);  // blocks of one row
  CHECK_MESSAGE(ones.tiled == (1 + 3 + 2) * 8, "blocks of one row: a 1 x 1 tile, a 1 x 3 accumulator, one max and one sum, got ", ones.tiled);
}

TEST_CASE("7.4 bad sizes throw ShapeError") {
  for (Index bad : {Index{0}, Index{-1}, Index{-1} << 40}) {
    const std::string what = "a size of " + str(bad);
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(bad, 8, 8, 4, 4, 8); }, what + " for n_q");
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(8, bad, 8, 4, 4, 8); }, what + " for n_k");
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(8, 8, bad, 4, 4, 8); }, what + " for d_v");
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(8, 8, 8, bad, 4, 8); }, what + " for block_q");
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(8, 8, 8, 4, bad, 8); }, what + " for block_k");
    check_throws<ShapeError>("attention_memory", [&] { attention_memory(8, 8, 8, 4, 4, bad); }, what + " for bytes_per_number");
  }
}

// ---- 7.5 softmax_state and online_softmax ----------------------------------------------------------

TEST_CASE("7.5 the state of a row is its maximum and the sum relative to it") {
  // (1, 3, 2): m = 3, l = e^-2 + e^0 + e^-1.
  const SoftmaxState s = softmax_state(row_of({1.0, 3.0, 2.0}));
  CHECK_MESSAGE(s.max == 3.0, "softmax_state of (1, 3, 2) must have max 3, got ", s.max);
  CHECK_MESSAGE(std::abs(s.sum - (std::exp(-2.0) + 1.0 + std::exp(-1.0))) <= 1e-15, "softmax_state of (1, 3, 2) must have sum e^-2 + 1 + e^-1, got ", s.sum);
  // (0, 1, 2, 3): the maximum grows at every step. l = 1 + e^-1 + e^-2 + e^-3. Without rescaling,
  // every new term is exp(x - x) = 1 and l = 4.
  const SoftmaxState growing = softmax_state(row_of({0.0, 1.0, 2.0, 3.0}));
  const double expected = 1.0 + std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0);
  CHECK_MESSAGE(growing.max == 3.0, "softmax_state of (0, 1, 2, 3) must have max 3, got ", growing.max);
  CHECK_MESSAGE(std::abs(growing.sum - expected) <= 1e-15, "sum ", growing.sum, ", expected ", expected, ". ",
                std::abs(growing.sum - 4.0) < 1e-12 ? kSumNotRescaled : "");
}

TEST_CASE("7.5 online softmax equals the two-pass softmax to 1e-15 relative") {
  Rng rng(705);
  // Rows of 1 to 32 scores with a spread of 3: the maximum grows several times along a row.
  for (Index cols : {1, 2, 5, 17, 32}) {
    INFO("rows of ", cols, " scores");
    const Matrix scores = 3.0 * normal_matrix(12, cols, rng);
    const Matrix w = online_softmax(scores);
    const Matrix expected = two_pass_softmax_rows(scores);
    std::string report;
    const bool ok = relatively_near(w, expected, 1e-15, &report);
    Matrix unrescaled(scores.rows(), cols);  // what a sum without rescaling gives
    for (Index i = 0; i < scores.rows(); ++i) {
      double m = -kInf, l = 0.0;
      for (Index j = 0; j < cols; ++j) {
        m = std::max(m, scores(i, j));
        l += std::exp(scores(i, j) - m);
      }
      for (Index j = 0; j < cols; ++j) unrescaled(i, j) = std::exp(scores(i, j) - m) / l;
    }
    CHECK_MESSAGE(ok, report, ". ", suspect(w, {{kSumNotRescaled.c_str(), unrescaled}}));
  }
  // The comparison itself: an error just outside the tolerance fails it, one just inside passes.
  const Matrix w = two_pass_softmax_rows(normal_matrix(3, 4, rng));
  std::string report;
  CHECK_MESSAGE(!relatively_near(w * (1.0 + 2e-15), w, 1e-15, &report), "2e-15 relative must fail");
  CHECK_MESSAGE(relatively_near(w * (1.0 + 5e-16), w, 1e-15, &report), "5e-16 relative must pass");
  CHECK_MESSAGE(relatively_near(online_softmax(w), two_pass_softmax_rows(w), 1e-15, &report), "online_softmax of softmax weights differs from the two-pass softmax: ", report);
}

TEST_CASE("7.5 scores far below -10000 keep their weights") {
  // (-20000, -20001, -20003) has the softmax of (0, -1, -3). A maximum that starts at -10000 never
  // moves, every exp(x - m) underflows to 0, and the sum is 0.
  const Matrix scores = row_of({-20000.0, -20001.0, -20003.0});
  const Matrix expected = two_pass_softmax_rows(row_of({0.0, -1.0, -3.0}));
  const SoftmaxState s = softmax_state(scores);
  CHECK_MESSAGE(s.max == -20000.0, "max ", s.max, ". ", s.max == -10000.0 ? kFiniteMax : std::string());
  CHECK_MESSAGE(std::abs(s.sum - (1.0 + std::exp(-1.0) + std::exp(-3.0))) <= 1e-15, "sum ", s.sum, ". ",
                s.sum == 0.0 ? kFiniteMax : "");
  const Matrix w = online_softmax(scores);
  std::string report;
  CHECK_MESSAGE(relatively_near(w, expected, 1e-15, &report), report, ". ",
                w.array().isNaN().any() || (w.array() == 0.0).all() ? kFiniteMax : "");
  // Large positive scores must not overflow either.
  const Matrix big = row_of({1000.0, 999.0, 997.0});
  CHECK_MESSAGE(relatively_near(online_softmax(big), expected, 1e-15, &report), "online_softmax of (1000, 999, 997) must not overflow: ", report);
}

TEST_CASE("7.5 scores below any finite starting maximum keep their weights") {
  // (-1e31, -2e31): the first score is the maximum, its weight is 1 and the other's exp(-1e31) = 0.
  // A maximum that starts at a finite "small enough" number such as -1e30 never moves: every
  // exp(x - m) underflows to 0, the sum is 0, and a fix-up that treats a zero sum as a fully
  // masked row returns weights 0, 0.
  const Matrix scores = row_of({-1e31, -2e31});
  const SoftmaxState s = softmax_state(scores);
  const bool finite_start = std::isfinite(s.max) && s.max > -1e31;
  CHECK_MESSAGE((s.max == -1e31 && s.sum == 1.0),
                "softmax_state of (-1e31, -2e31) must be {-1e31, 1}, got {" << s.max << ", " << s.sum << "}"
                    << (finite_start || s.sum == 0.0 ? " | looks like a known mistake: " + kFiniteMax : std::string()));
  const Matrix w = online_softmax(scores);
  CHECK_MESSAGE(identical(w, row_of({1.0, 0.0})),
                "online_softmax of the row (-1e31, -2e31) must give weights (1, 0): these scores are finite, "
                "not masked"
                    << ((w.array() == 0.0).all() || w.array().isNaN().any() ? " | looks like a known mistake: " + kFiniteMax
                                                                            : std::string()));
}

TEST_CASE("7.5 minus infinity is a masked score and a row of it gets zeros") {
  // (-inf, 0, -inf, ln 3): weights (0, 1/4, 0, 3/4), the zeros exact.
  const double ln3 = std::log(3.0);
  const Matrix scores(row_of({-kInf, 0.0, -kInf, ln3}));
  const Matrix w = online_softmax(scores);
  CHECK_MESSAGE((w(0, 0) == 0.0 && w(0, 2) == 0.0), "masked weights must be exactly 0.0");
  CHECK_MESSAGE(std::abs(w(0, 1) - 0.25) <= 1e-15, "online_softmax of (-inf, 0, -inf, ln 3): weight 1 must be 1/4, got ", w(0, 1));
  CHECK_MESSAGE(std::abs(w(0, 3) - 0.75) <= 1e-15, "online_softmax of (-inf, 0, -inf, ln 3): weight 3 must be 3/4, got ", w(0, 3));
  // A masked score first: the running maximum starts at -inf and must not produce NaN.
  const SoftmaxState s = softmax_state(row_of({-kInf, 2.0}));
  CHECK_MESSAGE((s.max == 2.0 && s.sum == 1.0), "state of (-inf, 2) is {2, 1}, got {", s.max, ", ", s.sum, "}");
  // Fully masked rows: state {-inf, 0}, weights all zero (chapter 4's policy), no NaN.
  const SoftmaxState none = softmax_state(row_of({-kInf, -kInf, -kInf}));
  CHECK_MESSAGE((none.max == -kInf && none.sum == 0.0), "state of a row of -inf is {-inf, 0}, got {",
                none.max, ", ", none.sum, "}. ", none.max == -10000.0 ? kFiniteMax : "");
  Matrix two_rows(2, 3);
  two_rows << -kInf, -kInf, -kInf, 1.0, -kInf, 1.0;
  const Matrix w2 = online_softmax(two_rows);
  CHECK_MESSAGE(identical(w2, (Matrix(2, 3) << 0.0, 0.0, 0.0, 0.5, 0.0, 0.5).finished()),
                "a row of -inf gets weights 0 (not NaN); the other row is unaffected");
  const Matrix single = online_softmax(row_of({-kInf}));
  CHECK_MESSAGE(single(0, 0) == 0.0, "online_softmax of the single score -inf must give weight 0, got ", single(0, 0));
}

TEST_CASE("7.5 bad input throws ShapeError or ValueError") {
  check_throws<ShapeError>("online_softmax", [] { online_softmax(Matrix(0, 3)); }, "0 x 3 scores");
  check_throws<ShapeError>("online_softmax", [] { online_softmax(Matrix(3, 0)); }, "3 x 0 scores");
  check_throws<ShapeError>("online_softmax", [] { online_softmax(Matrix(0, 0)); }, "0 x 0 scores");
  check_throws<ShapeError>("softmax_state", [] { softmax_state(RowVector(0)); }, "an empty row");
  for (double bad : {kNaN, kInf}) {
    for (Index j : {0, 2}) {
      Matrix scores = Matrix::Zero(2, 3);
      scores(1, j) = bad;
      const std::string what = "scores(1, " + str(j) + ") = " + (std::isnan(bad) ? "nan" : "+inf");
      check_throws<ValueError>("online_softmax", [&] { online_softmax(scores); }, what);
      RowVector row = RowVector::Zero(3);
      row(j) = bad;
      check_throws<ValueError>("softmax_state", [&] { softmax_state(row); }, what);
    }
  }
}

// ---- 7.6 tiled_attention ---------------------------------------------------------------------------

TEST_CASE("7.6 one tile covering everything equals naive attention") {
  Rng rng(761);
  const Matrix q = normal_matrix(6, 4, rng), k = normal_matrix(9, 4, rng), v = normal_matrix(9, 3, rng);
  for (Masking masking : {Masking::None, Masking::CausalTopLeft, Masking::CausalBottomRight}) {
    check_tiled(q, k, v, 6, 9, masking);      // exactly one tile
    check_tiled(q, k, v, 100, 100, masking);  // blocks longer than the sequences
  }
}

TEST_CASE("7.6 equals naive attention for blocks that do not divide n and for blocks of one row") {
  Rng rng(762);
  struct Lengths {
    Index n_q, n_k;
  };
  struct Blocks {
    Index b_q, b_k;
  };
  for (Lengths n : {Lengths{10, 10}, Lengths{7, 13}, Lengths{13, 5}, Lengths{1, 11}, Lengths{11, 1}}) {
    const Matrix q = normal_matrix(n.n_q, 5, rng), k = normal_matrix(n.n_k, 5, rng),
                 v = normal_matrix(n.n_k, 3, rng);
    for (Blocks b : {Blocks{3, 4}, Blocks{4, 3}, Blocks{1, 1}, Blocks{2, 5}, Blocks{5, 2}, Blocks{10, 1}}) {
      for (Masking masking : {Masking::None, Masking::CausalTopLeft, Masking::CausalBottomRight}) {
        check_tiled(q, k, v, b.b_q, b.b_k, masking);
      }
    }
  }
}

TEST_CASE("7.6 the maximum grows from tile to tile and the sum and accumulator follow") {
  // d_k = 1, q = 2 for every query, k_j = j: the scores grow along the keys, so every key block
  // raises every query's maximum. Large values (scores up to 2·39/1 = 78) make a missing rescaling
  // visible in every digit.
  const Index n = 40;
  Matrix q = Matrix::Constant(8, 1, 2.0), k(n, 1), v(n, 2);
  for (Index j = 0; j < n; ++j) {
    k(j, 0) = static_cast<double>(j);
    v(j, 0) = static_cast<double>(j % 7);
    v(j, 1) = std::cos(static_cast<double>(j));
  }
  for (Index block_k : {1, 3, 8, 16}) {
    check_tiled(q, k, v, 8, block_k, Masking::None);
    check_tiled(q, k, v, 3, block_k, Masking::CausalBottomRight);
  }
}

TEST_CASE("7.6 scores far below -10000 keep their weights") {
  // q rows are 300·(1, 1, 1, 1), keys -300·(1 + j/1000)·(1, 1, 1, 1): scores about -180000. A
  // running maximum that starts at -10000 never moves and every weight underflows to 0.
  const Index n = 12;
  Matrix q = Matrix::Constant(5, 4, 300.0), k(n, 4), v(n, 2);
  for (Index j = 0; j < n; ++j) {
    k.row(j).setConstant(-300.0 * (1.0 + 0.001 * static_cast<double>(n - j)));
    v(j, 0) = static_cast<double>(j);
    v(j, 1) = 1.0;
  }
  for (Masking masking : {Masking::None, Masking::CausalBottomRight}) {
    const TiledResult result = tiled_attention(q, k, v, 2, 5, masking);
    const Matrix expected = attention_by_loops(q, k, v, masking);
    // Ordinary scores pass elsewhere: a failure here is the starting value of the maximum (with
    // Eigen's vectorised exp, which returns a tiny number instead of 0 far below -708, the weights
    // come out uniform rather than NaN or 0).
    CHECK_MESSAGE(near(result.output, expected, 1e-12), "scores far below -10000: ", kFiniteMax);
  }
}

TEST_CASE("7.6 causal tiles above the diagonal are skipped not computed") {
  Rng rng(763);
  // 64 queries and keys in blocks of 8: 8 x 8 tiles; top-left causal leaves 8·9/2 = 36 of them.
  const Matrix q = normal_matrix(64, 4, rng), k = normal_matrix(64, 4, rng), v = normal_matrix(64, 2, rng);
  const TiledResult square = tiled_attention(q, k, v, 8, 8, Masking::CausalTopLeft);
  CHECK_MESSAGE(square.tiles_computed == 36,
                "64 x 64 causal in 8 x 8 tiles: the diagonal and below, 36 tiles. ",
                square.tiles_computed == 44 || square.tiles_computed == 28 ? kSkipOffByOne : "");
  CHECK_MESSAGE(square.tiles_skipped == 28, "64 x 64 causal in 8 x 8 tiles: the 28 tiles above the diagonal are skipped, got ", square.tiles_skipped);
  const TiledResult full = tiled_attention(q, k, v, 8, 8, Masking::None);
  CHECK_MESSAGE((full.tiles_computed == 64 && full.tiles_skipped == 0), "without a mask every tile is computed");
  // Unequal lengths and blocks in both alignments, against the tiles counted entry by entry.
  for (Masking masking : {Masking::CausalTopLeft, Masking::CausalBottomRight}) {
    check_tiled(q.topRows(20), k, v, 6, 7, masking);
    check_tiled(q, k.topRows(23), v.topRows(23), 7, 6, masking);
    check_tiled(q.topRows(33), k.topRows(33), v.topRows(33), 5, 8, masking);
  }
}

TEST_CASE("7.6 queries that may see no key output zeros") {
  Rng rng(764);
  // Bottom-right with 9 queries and 4 keys: queries 0 to 4 come before every key.
  const Matrix q = normal_matrix(9, 3, rng), k = normal_matrix(4, 3, rng), v = normal_matrix(4, 2, rng);
  for (Index block_q : {1, 2, 9}) {
    const TiledResult r = tiled_attention(q, k, v, block_q, 2, Masking::CausalBottomRight);
    CHECK_MESSAGE(!r.output.array().isNaN().any(), "a query with nothing to see outputs zeros, not NaN (chapter 4's policy)");
    CHECK_MESSAGE((r.output.topRows(5).array() == 0.0).all(), "rows 0 to 4 see no key: exactly zero");
    CHECK_MESSAGE(near(r.output, attention_by_loops(q, k, v, Masking::CausalBottomRight), 1e-12), "tiled_attention differs from attention computed by plain loops");
  }
}

TEST_CASE("7.6 tiled attention never allocates an n by n matrix") {
  // n = 1024, d = 8, blocks of 64. The naive (n, n) doubles take 8 MiB; the tiled attention may hold
  // its output, copies of its inputs and per-query state, O((n_q + n_k)·(d_k + d_v)), and a few
  // tiles: the bound below is 8·(2·2048·16 + 8·2048 + 4·64·64) + 256 KiB = 1 MiB in all.
  Rng rng(765);
  const Index n = 1024, d = 8, block = 64;
  const Matrix q = normal_matrix(n, d, rng), k = normal_matrix(n, d, rng), v = normal_matrix(n, d, rng);
  const std::int64_t n_by_n = n * n * static_cast<std::int64_t>(sizeof(double));
  const std::int64_t bound = 8 * (2 * (2 * n) * (2 * d) + 8 * (2 * n) + 4 * block * block) + 256 * 1024;
  {  // The meter sees an (n, n) matrix when one is made: Q Kᵀ, naively.
    AllocationMeter meter;
    const Matrix scores = matmul_transposed(q, k);
    const AllocationReading naive = meter.stop();
    REQUIRE_MESSAGE(naive.largest_block >= n_by_n, "the allocation meter does not work in this build");
    CHECK_MESSAGE(scores.rows() == n, "the check's own naive scores have the wrong shape");
  }
  for (Masking masking : {Masking::None, Masking::CausalTopLeft}) {
    INFO("masking = ", masking_name(masking));
    // Measured here by the allocation meter, or, when graded, by the kernel's counters for the
    // worker process, read from outside it (remote.def).
    const HeapUse tiled = tiled_attention_heap_use(q, k, v, block, block, masking);
    if (tiled.resident_bytes >= 0) {
      // The worker's resident memory counts whole pages, the request and reply buffers, the decoded
      // arguments and result (3 + 1 copies of n x d doubles, 256 KiB) and the pages of code and stack
      // the call touches; measured on the reference: 0.7 to 0.9 MiB. The naive scores alone are 8 MiB.
      // 4 MiB lies between, with room on both sides for allocators and libraries that differ.
      const std::int64_t resident_bound = 4 << 20;
      CHECK_MESSAGE(tiled.resident_bytes < resident_bound, "the worker held at least ", tiled.resident_bytes,
                    " bytes at once during the call; allowed ", resident_bound, " (the n x n matrix alone is ",
                    n_by_n, ")");
      CHECK_MESSAGE(tiled.resident_bytes >= n * d * static_cast<std::int64_t>(sizeof(double)),
                    "the output alone is n x d doubles: the worker's memory counters do not see tiled_attention");
      continue;
    }
    CHECK_MESSAGE(tiled.largest_block < n_by_n / 8, "the largest allocation is ", tiled.largest_block,
                  " bytes; the n x n score matrix would be ", n_by_n);
    CHECK_MESSAGE(tiled.peak_bytes <= bound, "at most ", tiled.peak_bytes, " bytes were live at once; allowed ",
                  bound, " (the n x n matrix alone is ", n_by_n, ")");
    CHECK_MESSAGE(tiled.peak_bytes >= n * d * static_cast<std::int64_t>(sizeof(double)),
                  "the output alone is n x d doubles: the allocation meter does not see tiled_attention");
  }
}

TEST_CASE("7.6 buffers are as long as a block, not as the sequence") {
  // n = 4096 queries and keys of width 1, blocks of 16 and 256 rows (and the other way round): a
  // score tile holds 16·256 doubles (32 KiB). A tile or an accumulator sized max(block, n) or n
  // rows instead of min(block, n) holds 4096·256 doubles (8 MiB); the (n, n) scores would be 128 MiB.
  Rng rng(766);
  const Index n = 4096, d = 1;
  const Matrix q = normal_matrix(n, d, rng), k = normal_matrix(n, d, rng), v = normal_matrix(n, d, rng);
  for (const std::pair<Index, Index>& blocks : {std::pair<Index, Index>{16, 256}, std::pair<Index, Index>{256, 16}}) {
    const Index block_q = blocks.first, block_k = blocks.second;
    INFO("block_q = ", block_q, ", block_k = ", block_k);
    const HeapUse tiled = tiled_attention_heap_use(q, k, v, block_q, block_k, Masking::None);
    if (tiled.resident_bytes >= 0) {
      // Graded: the worker's resident memory (whole pages, request and reply buffers, code); the
      // inputs and output are 128 KiB, the tiles 32 KiB. As in the check above, 4 MiB lies between.
      const std::int64_t resident_bound = 4 << 20;
      CHECK_MESSAGE(tiled.resident_bytes < resident_bound, "tiled_attention with n = 4096, d = 1 and blocks of ", block_q,
                    " queries and ", block_k, " keys made the worker hold ", tiled.resident_bytes, " bytes at once; "
                    "allowed ", resident_bound, ": is a tile or an accumulator as long as the sequence instead of a block?");
      continue;
    }
    // The bound of the check above: O((n_q + n_k)·(d_k + d_v)) for copies, output and per-query
    // state, a few tiles and 256 KiB: 1.2 MiB here.
    const std::int64_t bound = 8 * (2 * (2 * n) * (2 * d) + 8 * (2 * n) + 4 * block_q * block_k) + 256 * 1024;
    CHECK_MESSAGE(tiled.peak_bytes <= bound, "tiled_attention with n = 4096, d = 1 and blocks of ", block_q, " queries and ",
                  block_k, " keys had ", tiled.peak_bytes, " bytes live at once; allowed ", bound, " (a ", block_k, " x ",
                  block_q, " tile is ", 8 * block_q * block_k, "): is a tile or an accumulator sized max(block, n) or n "
                  "instead of min(block, n)?");
  }
}

TEST_CASE("7.6 bad input throws ShapeError or ValueError") {
  const Matrix q = Matrix::Ones(4, 3), k = Matrix::Ones(5, 3), v = Matrix::Ones(5, 2);
  for (Index bad : {Index{0}, Index{-1}, Index{-1} << 40}) {
    const std::string what = "a block size of " + str(bad);
    check_throws<ShapeError>("tiled_attention", [&] { tiled_attention(q, k, v, bad, 2); }, what + " for block_q");
    check_throws<ShapeError>("tiled_attention", [&] { tiled_attention(q, k, v, 2, bad); }, what + " for block_k");
  }
  const auto call = [](const Matrix& a, const Matrix& b, const Matrix& c) { tiled_attention(a, b, c, 2, 2); };
  check_throws<ShapeError>("tiled_attention", [&] { call(Matrix(0, 3), k, v); }, "q is 0 x 3");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, Matrix(0, 3), Matrix(0, 2)); }, "k and v are empty");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, k, Matrix(5, 0)); }, "v is 5 x 0");
  check_throws<ShapeError>("tiled_attention", [&] { call(Matrix(4, 0), Matrix(5, 0), v); }, "d_k = 0");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, Matrix::Ones(5, 2), v); }, "k narrower than q");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, Matrix::Ones(5, 4), v); }, "k wider than q");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, k, Matrix::Ones(4, 2)); }, "v with fewer rows than k");
  check_throws<ShapeError>("tiled_attention", [&] { call(q, k, Matrix::Ones(6, 2)); }, "v with more rows than k");
  for (double bad : {kNaN, kInf, -kInf}) {
    Matrix bad_q = q, bad_k = k, bad_v = v;
    bad_q(2, 1) = bad;
    bad_k(4, 0) = bad;
    bad_v(0, 1) = bad;
    check_throws<ValueError>("tiled_attention", [&] { call(bad_q, k, v); }, "a non-finite entry in q");
    check_throws<ValueError>("tiled_attention", [&] { call(q, bad_k, v); }, "a non-finite entry in k");
    check_throws<ValueError>("tiled_attention", [&] { call(q, k, bad_v); }, "a non-finite entry in v");
  }
}

}  // TEST_SUITE
