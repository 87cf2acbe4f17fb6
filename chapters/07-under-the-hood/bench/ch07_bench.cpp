// Chapter 7 benchmark — naive vs tiled attention, and the machine's own limit.
//
// Compiled at -O3 -march=native as its own target (ch07_bench, not part of `all`: students never
// wait for it). In the reference track it includes the REFERENCE tiled attention (solutions/
// 07-under-the-hood/ex6_tiled_attention.cpp) so that the code measured is the code the book shows,
// compiled for speed, and runs its algorithm in double (the exercise) and float. In any other track
// (SCALEBOOK_BENCH_CONTRACT: the student's exercises, in the student edition) it calls exercise
// 7.6 through its contract, in double only, after making sure it runs and agrees with the naive
// version: timing a wrong or unfinished answer would mean nothing.
//
// Benchmarks (Google Benchmark; the runner tools/bench_ch07.py asks for warm-up and repetitions
// and reads medians):
//   tiled/<type>/<n>/<causal>    tiled_attention_core, blocks of kBlockQ x kBlockK
//   naive/<type>/<n>/<causal>    the (n, n) score matrix, a softmax over it, times V
//   eigen_qk/<type>/<n>          Eigen's product (n, d)·(d, n): the shape of Q Kᵀ
//   eigen_pv/<type>/<n>          Eigen's product (n, n)·(n, d): the shape of weights times V
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
#ifdef SCALEBOOK_BENCH_CONTRACT
#include <cstdio>
#include <exception>
#include <type_traits>

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

// Naive attention as most code writes it: the whole (n, n) matrix, stored transposed (a column
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

template <class Scalar>
void bm_naive(benchmark::State& state) {
  const Index n = state.range(0);
  const bool causal = state.range(1) != 0;
  const auto q = random_matrix<Scalar>(n, kD, 1), k = random_matrix<Scalar>(n, kD, 2),
             v = random_matrix<Scalar>(n, kD, 3);
  Mat<Scalar> scores_t, out;
  {
    scalebook::AllocationMeter meter;
    naive_attention<Scalar>(q, k, v, causal, scores_t, out);
    state.counters["peak_MiB"] = mib(meter.stop().peak_bytes);
  }
  for (auto _ : state) {
    naive_attention<Scalar>(q, k, v, causal, scores_t, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double performed = 2.0 * n * n * kD * 2;  // both products in full, masked or not
  state.counters["GFLOPs"] = benchmark::Counter(performed * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["useful_GFLOPs"] =
      benchmark::Counter(useful_flops(n, causal) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
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
BENCHMARK(bm_naive<double>)->Name("naive/double")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_naive<float>)->Name("naive/float")->Apply(sizes_with_causal)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_qk<double>)->Name("eigen_qk/double")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_qk<float>)->Name("eigen_qk/float")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_pv<double>)->Name("eigen_pv/double")->Apply(sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_eigen_pv<float>)->Name("eigen_pv/float")->Apply(sizes)->Unit(benchmark::kMillisecond);

#ifdef SCALEBOOK_BENCH_CONTRACT
// Before timing the track's 7.6: it must run and agree with the naive version on a causal and an
// unmasked case of a size with a ragged last tile. Exit status 3 says why not, on one line.
int track_is_ready() {
  const Index n = 2 * kBlockQ + 37;
  const Mat<double> q = random_matrix<double>(n, kD, 1), k = random_matrix<double>(n, kD, 2),
                    v = random_matrix<double>(n, kD, 3);
  for (const bool causal : {true, false}) {
    Mat<double> scores_t, expected, out;
    Index computed = 0, skipped = 0;
    naive_attention<double>(q, k, v, causal, scores_t, expected);
    try {
      tiled_core<double>(q, k, v, causal ? Masking::CausalTopLeft : Masking::None, out, computed, skipped);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "ch07_bench: exercise 7.6 did not run: %s\n", error.what());
      return 3;
    }
    if (out.rows() != n || out.cols() != kD || !((out - expected).cwiseAbs().maxCoeff() <= 1e-9)) {
      std::fprintf(stderr,
                   "ch07_bench: exercise 7.6 does not yet agree with the naive attention (n = %ld, %s): "
                   "./workbook check 7 says where\n",
                   static_cast<long>(n), causal ? "causal" : "no mask");
      return 3;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (const int code = track_is_ready(); code != 0) return code;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
#else
BENCHMARK_MAIN();
#endif
