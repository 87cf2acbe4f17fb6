// Chapter 7 benchmark — naive vs tiled attention, and the machine's own limit.
//
// Compiled at -O3 -march=native as its own target (ch07_bench, not part of `all`: students never
// wait for it), with lib's Eigen alignment (see CMakeLists.txt). It times the build's track: in
// the reference track the REFERENCE tiled attention (the reference solution's
// ex6_tiled_attention.cpp, included here so that the code measured is the code the book shows,
// compiled for speed) in double (the exercise) and float; in any other track
// (SCALEBOOK_BENCH_CONTRACT: the student's exercises, in the student edition) exercise 7.6 through
// its contract, in double only. The naive side is the track's own plain attention, through the
// chapter contracts: chapter 4's causal_attention (4.3) with a causal mask, chapter 3's
// scaled_scores and softmax_rows (3.2, 3.3) times V without one. Before timing, each must run and
// agree with the benchmark's own naive version: timing a wrong or unfinished answer would mean
// nothing (exit status 3 names the exercise to finish first).
//
// Benchmarks (Google Benchmark; the runner tools/scalebook/bench/ch07.py asks for a warm-up and repetitions
// and keeps the best):
//   tiled/<type>/<n>/<causal>        the track's 7.6 (tiled_attention_core in the reference track),
//                                    blocks of kBlockQ x kBlockK
//   naive/double/<n>/<causal>        the track's 4.3 (causal), or 3.2 and 3.3 times V (no mask)
//   naive_eigen/<type>/<n>/<causal>  the benchmark's own naive version: the (n, n) score matrix,
//                                    a softmax over it in place, times V
//   eigen_qk/<type>/<n>              Eigen's product (n, d)·(d, n): the shape of Q Kᵀ
//   eigen_pv/<type>/<n>              Eigen's product (n, n)·(n, d): the shape of weights times V
// Counters: GFLOPs (rate of the FLOPs actually performed: 2 per multiply-add of the products),
// useful_GFLOPs (4·d per allowed score: what attention needs), peak_MiB (heap bytes live at once
// during one call, measured by counting every allocation).
//
// d = 64; one thread (Eigen without OpenMP is single-threaded). Times are CPU times of the
// benchmark's thread (the machine may be shared: CPU time does not count waiting for a core).

// No range checks in the hot loops: scalebook/core.hpp keeps Eigen's assertions on otherwise.
#define eigen_assert(x) \
  do {                  \
  } while (false)

#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "allocation_meter.hpp"
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>

// The track's plain attention (ch07_bench_naive): chapter 3's 3.2 and 3.3, chapter 4's 4.3.
#include "attention_scaling.hpp"
#include "causal_masking.hpp"
#ifdef SCALEBOOK_BENCH_CONTRACT
#include "under_the_hood.hpp"  // the track's 7.6, compiled at -O3 -march=native (ch07_bench_track)
#else
#include "ex6_tiled_attention.cpp"  // the reference itself, compiled here at -O3 -march=native
#endif

namespace {

using scalebook::Index;
using scalebook::ch07::Masking;

constexpr Index kD = 64;
#ifndef SCALEBOOK_BENCH_BLOCK_Q
#define SCALEBOOK_BENCH_BLOCK_Q 128
#endif
#ifndef SCALEBOOK_BENCH_BLOCK_K
#define SCALEBOOK_BENCH_BLOCK_K 128
#endif
constexpr Index kBlockQ = SCALEBOOK_BENCH_BLOCK_Q;  // tiles of kBlockQ queries by kBlockK keys
constexpr Index kBlockK = SCALEBOOK_BENCH_BLOCK_K;

template <class Scalar>
using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

template <class Scalar>
Mat<Scalar> random_matrix(Index rows, Index cols, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  Mat<Scalar> m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) m(i, j) = static_cast<Scalar>(normal(engine));
  return m;
}

// The benchmark's own naive attention, as most code writes it: the whole (n, n) matrix, stored transposed (a column
// per query, so the softmax runs over contiguous memory), masked by -inf when causal, then a
// softmax per query and one product with V.
template <class Scalar>
void naive_attention(const Mat<Scalar>& q, const Mat<Scalar>& k, const Mat<Scalar>& v, bool causal,
                     Mat<Scalar>& scores_t, Mat<Scalar>& out) {
  const Index n_q = q.rows(), n_k = k.rows();
  const Scalar scale = Scalar(1) / std::sqrt(static_cast<Scalar>(q.cols()));
  scores_t.resize(n_k, n_q);
  scores_t.noalias() = k * q.transpose();
  scores_t *= scale;
  for (Index i = 0; i < n_q; ++i) {
    auto column = scores_t.col(i);
    const Index visible = causal ? std::min(n_k, i + 1) : n_k;
    column.tail(n_k - visible).setConstant(-std::numeric_limits<Scalar>::infinity());
    const Scalar m = column.head(visible).maxCoeff();
    column.head(visible) = (column.head(visible).array() - m).exp().matrix();
    column.tail(n_k - visible).setZero();
    column /= column.head(visible).sum();
  }
  out.noalias() = scores_t.transpose() * v;
}

// The track's naive attention, through the chapter contracts: 4.3 with a causal mask, 3.2 and 3.3
// (then the product with V) without one.
void track_naive(const Mat<double>& q, const Mat<double>& k, const Mat<double>& v, bool causal, Mat<double>& out) {
  if (causal) {
    out = scalebook::ch04::causal_attention(q, k, v, scalebook::Alignment::TopLeft);
  } else {
    const Mat<double> weights = scalebook::ch03::softmax_rows(scalebook::ch03::scaled_scores(q, k));
    out.noalias() = weights * v;
  }
}

#ifdef SCALEBOOK_BENCH_CONTRACT
// Exercise 7.6 through its contract (double only): the same call as the reference's core.
template <class Scalar>
void tiled_core(const Mat<Scalar>& q, const Mat<Scalar>& k, const Mat<Scalar>& v, Masking masking, Mat<Scalar>& out,
                Index& computed, Index& skipped) {
  static_assert(std::is_same_v<Scalar, double>, "exercise 7.6 computes in double");
  scalebook::ch07::TiledResult result = scalebook::ch07::tiled_attention(q, k, v, kBlockQ, kBlockK, masking);
  out = std::move(result.output);
  computed = result.tiles_computed;
  skipped = result.tiles_skipped;
}
#else
template <class Scalar>
void tiled_core(const Mat<Scalar>& q, const Mat<Scalar>& k, const Mat<Scalar>& v, Masking masking, Mat<Scalar>& out,
                Index& computed, Index& skipped) {
  scalebook::ch07::tiled_attention_core<Scalar>(q, k, v, kBlockQ, kBlockK, masking, out, computed, skipped);
}
#endif

// FLOPs of the products the tiled attention performs: each computed tile costs
// 2·b_q·b_k·(d_k + d_v). Counted from the same block structure as the reference.
double tiled_product_flops(Index n, Index block_q, Index block_k, bool causal) {
  double flops = 0;
  for (Index i0 = 0; i0 < n; i0 += block_q) {
    const Index bq = std::min(block_q, n - i0);
    const Index last_key = causal ? i0 + bq - 1 : n - 1;
    for (Index j0 = 0; j0 <= last_key && j0 < n; j0 += block_k) {
      const Index bk = std::min(block_k, n - j0);
      flops += 2.0 * bq * bk * (2 * kD);
    }
  }
  return flops;
}

double useful_flops(Index n, bool causal) {
  const double pairs = causal ? 0.5 * n * (n + 1.0) : double(n) * n;
  return pairs * 4.0 * kD;  // a dot product of length d and a row of d_v = d multiply-adds
}

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

template <class Scalar>
void bm_tiled(benchmark::State& state) {
  const Index n = state.range(0);
  const bool causal = state.range(1) != 0;
  const auto q = random_matrix<Scalar>(n, kD, 1), k = random_matrix<Scalar>(n, kD, 2),
             v = random_matrix<Scalar>(n, kD, 3);
  Mat<Scalar> out;
  Index computed = 0, skipped = 0;
  const Masking masking = causal ? Masking::CausalTopLeft : Masking::None;
  {
    out.resize(0, 0);
    scalebook::AllocationMeter meter;
    tiled_core<Scalar>(q, k, v, masking, out, computed, skipped);
    state.counters["peak_MiB"] = mib(meter.stop().peak_bytes);
  }
  for (auto _ : state) {
    tiled_core<Scalar>(q, k, v, masking, out, computed, skipped);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(tiled_product_flops(n, kBlockQ, kBlockK, causal) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["useful_GFLOPs"] =
      benchmark::Counter(useful_flops(n, causal) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tiles_computed"] = static_cast<double>(computed);
  state.counters["tiles_skipped"] = static_cast<double>(skipped);
}

// Times one naive attention, call(q, k, v, causal, out), of n = range(0) queries and keys, with a
// causal mask when range(1) is 1.
template <class Scalar, class Call>
void time_naive(benchmark::State& state, Call call) {
  const Index n = state.range(0);
  const bool causal = state.range(1) != 0;
  const auto q = random_matrix<Scalar>(n, kD, 1), k = random_matrix<Scalar>(n, kD, 2),
             v = random_matrix<Scalar>(n, kD, 3);
  Mat<Scalar> out;
  {
    scalebook::AllocationMeter meter;
    call(q, k, v, causal, out);
    state.counters["peak_MiB"] = mib(meter.stop().peak_bytes);
  }
  for (auto _ : state) {
    call(q, k, v, causal, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double performed = 2.0 * n * n * kD * 2;  // both products in full, masked or not
  state.counters["GFLOPs"] = benchmark::Counter(performed * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["useful_GFLOPs"] =
      benchmark::Counter(useful_flops(n, causal) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_naive(benchmark::State& state) { time_naive<double>(state, track_naive); }  // the track's 4.3, or 3.2 and 3.3

template <class Scalar>
void bm_naive_eigen(benchmark::State& state) {
  Mat<Scalar> scores_t;  // reused from call to call, as most code would
  time_naive<Scalar>(state, [&](const Mat<Scalar>& q, const Mat<Scalar>& k, const Mat<Scalar>& v, bool causal,
                                Mat<Scalar>& out) { naive_attention<Scalar>(q, k, v, causal, scores_t, out); });
}

template <class Scalar>
void bm_eigen_qk(benchmark::State& state) {  // (n, d)·(d, n)
  const Index n = state.range(0);
  const auto q = random_matrix<Scalar>(n, kD, 1), k = random_matrix<Scalar>(n, kD, 2);
  Mat<Scalar> s(n, n);
  for (auto _ : state) {
    s.noalias() = q * k.transpose();
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * n * kD * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <class Scalar>
void bm_eigen_pv(benchmark::State& state) {  // (n, n)·(n, d)
  const Index n = state.range(0);
  const auto p = random_matrix<Scalar>(n, n, 4), v = random_matrix<Scalar>(n, kD, 3);
  Mat<Scalar> out(n, kD);
  for (auto _ : state) {
    out.noalias() = p * v;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * n * kD * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void sizes_with_causal(benchmark::internal::Benchmark* b) {
  for (Index n = 256; n <= 8192; n *= 2)
    for (int causal : {1, 0}) b->Args({n, causal});
  b->ArgNames({"n", "causal"});
}

void sizes(benchmark::internal::Benchmark* b) {
  for (Index n = 256; n <= 8192; n *= 2) b->Args({n});
  b->ArgNames({"n"});
}

}  // namespace

BENCHMARK(bm_tiled<double>)->Name("tiled/double")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
#ifndef SCALEBOOK_BENCH_CONTRACT
BENCHMARK(bm_tiled<float>)->Name("tiled/float")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(bm_naive)->Name("naive/double")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_naive_eigen<double>)->Name("naive_eigen/double")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_naive_eigen<float>)->Name("naive_eigen/float")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_qk<double>)->Name("eigen_qk/double")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_qk<float>)->Name("eigen_qk/float")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_pv<double>)->Name("eigen_pv/double")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_pv<float>)->Name("eigen_pv/float")->Apply(sizes)->Unit(benchmark::kMillisecond);

#ifdef SCALEBOOK_BENCH_CONTRACT
constexpr const char* kWhose = "your";
#else
constexpr const char* kWhose = "the reference's";
#endif

// Runs one of the track's exercises before it is timed: it must run and agree with the benchmark's
// own naive attention (to 1e-9) on a causal and an unmasked case of a size with a ragged last tile.
// Returns 0, or 3 after saying on stderr which exercise to finish first.
template <class Call>
int agrees(const char* what, const char* chapter, bool causal, Call call) {
  const Index n = 2 * kBlockQ + 37;
  const Mat<double> q = random_matrix<double>(n, kD, 1), k = random_matrix<double>(n, kD, 2),
                    v = random_matrix<double>(n, kD, 3);
  Mat<double> scores_t, expected, out;
  naive_attention<double>(q, k, v, causal, scores_t, expected);
  try {
    call(q, k, v, causal, out);
  } catch (const scalebook::NotImplemented& error) {
    std::fprintf(stderr, "ch07_bench: a row times %s %s, and %s.\nFinish exercise %s first: ./workbook check %s "
                 "shows where each exercise stands.\n", kWhose, what, error.what(), error.exercise_id().c_str(), chapter);
    return 3;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ch07_bench: %s %s did not run: %s\n./workbook check %s shows which exercise is wrong.\n",
                 kWhose, what, error.what(), chapter);
    return 3;
  }
  if (out.rows() != n || out.cols() != kD || !((out - expected).cwiseAbs().maxCoeff() <= 1e-9)) {
    std::fprintf(stderr,
                 "ch07_bench: %s %s does not yet agree with the naive attention (n = %ld, %s): "
                 "./workbook check %s says where\n",
                 kWhose, what, static_cast<long>(n), causal ? "causal" : "no mask", chapter);
    return 3;
  }
  return 0;
}

int track_is_ready() {
  const auto tiled = [](const Mat<double>& q, const Mat<double>& k, const Mat<double>& v, bool causal,
                        Mat<double>& out) {
    Index computed = 0, skipped = 0;
    tiled_core<double>(q, k, v, causal ? Masking::CausalTopLeft : Masking::None, out, computed, skipped);
  };
  for (const bool causal : {true, false}) {
    if (const int code = agrees("tiled attention (exercise 7.6)", "7", causal, tiled); code != 0) return code;
  }
  if (const int code = agrees("naive attention (exercise 4.3, causal_attention)", "4", true, track_naive);
      code != 0)
    return code;
  return agrees("naive attention without a mask (exercises 3.2 and 3.3, scaled_scores and softmax_rows)", "3",
                false, track_naive);
}

int main(int argc, char** argv) {
  if (const int code = track_is_ready(); code != 0) return code;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
