// Chapter 4 lesson — causal masking: the future is not available.
//
// Prints every number the chapter page shows (the page cuts the sections out of this program's
// output with \snippet, and quotes the values named with lesson.value as {{name}}) and writes
// the data of the heatmap figure. Deterministic: fixed seeds and fixed print formats. The book
// runs it on the reference solution; `./workbook run` runs it on the student's own code.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "causal_masking.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/random.hpp"

using namespace scalebook;
using namespace scalebook::ch04;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A number for the page: "0" only when it is exactly zero; NaN and infinities spelled out.
std::string fmt(double x, const char* format = "%.4f") {
  if (std::isnan(x)) return "nan";
  if (x == -kInf) return "-inf";
  if (x == kInf) return "inf";
  if (x == 0.0) return "0";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
}

void print_matrix(const Matrix& m, const char* format = "%.4f") {
  for (Index i = 0; i < m.rows(); ++i) {
    std::printf("   ");
    for (Index j = 0; j < m.cols(); ++j) std::printf(" %9s", fmt(m(i, j), format).c_str());
    std::printf("\n");
  }
}

// A mask as a grid: 1 = may attend, . = masked. Query i stands for sequence position i + shift.
void print_mask(const BoolMatrix& m, Index shift = 0) {
  std::printf("%27s", "key");
  for (Index j = 0; j < m.cols(); ++j) std::printf(" %ld", static_cast<long>(j));
  std::printf("\n");
  for (Index i = 0; i < m.rows(); ++i) {
    std::printf("  query %ld (position %2ld)    ", static_cast<long>(i), static_cast<long>(i + shift));
    for (Index j = 0; j < m.cols(); ++j) std::printf(" %c", m(i, j) ? '1' : '.');
    std::printf("\n");
  }
}

double largest_difference(const Matrix& a, const Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

const char* yes_no(bool b) { return b ? "yes" : "no"; }

//! [code-scores]
// Q Kᵀ / sqrt(d_k), as chapter 3 taught.
Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  return q * k.transpose() / std::sqrt(static_cast<double>(q.cols()));
}
//! [code-scores]

//! [code-sentinel]
// The mistake, written out: a finite stand-in for −∞ on the masked entries.
Matrix softmax_with_sentinel(const Matrix& scores, const BoolMatrix& allowed, double sentinel) {
  Matrix w = allowed.select(scores, Matrix::Constant(scores.rows(), scores.cols(), sentinel));
  for (Index i = 0; i < w.rows(); ++i) {
    const double row_max = w.row(i).maxCoeff();
    for (Index j = 0; j < w.cols(); ++j) w(i, j) = std::exp(w(i, j) - row_max);
    w.row(i) /= w.row(i).sum();
  }
  return w;
}
//! [code-sentinel]

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    // ---- the mask ------------------------------------------------------------------------------
    lesson.begin("mask-grid");
    //! [code-mask]
    const BoolMatrix mask = causal_mask(5, 5);  // entry (i, j): may query i attend to key j?
    //! [code-mask]
    std::printf("causal_mask(5, 5): 1 = may attend, . = masked (the future)\n");
    print_mask(mask);
    lesson.end("mask-grid");

    // ---- masked weights ------------------------------------------------------------------------
    Rng rng(10);
    const Matrix q5 = normal_matrix(5, 4, rng), k5 = normal_matrix(5, 4, rng);
    lesson.begin("masked-weights");
    //! [code-weights]
    const Matrix scores = scaled_scores(q5, k5);  // (5, 5), d_k = 4
    const Matrix weights = masked_softmax(scores, causal_mask(5, 5));
    //! [code-weights]
    std::printf("scores Q K^T / sqrt(4), with the masked entries set to -inf:\n");
    print_matrix(mask.select(scores, Matrix::Constant(5, 5, -kInf)));
    std::printf("masked_softmax (an entry prints as 0 only when it is exactly 0.0):\n");
    print_matrix(weights);
    int zeros = 0, masked = 0;
    for (Index i = 0; i < 5; ++i)
      for (Index j = 0; j < 5; ++j)
        if (!mask(i, j)) {
          ++masked;
          zeros += weights(i, j) == 0.0;
        }
    std::printf("masked weights exactly 0.0: %d of %d\n", zeros, masked);
    std::printf("row sums:");
    for (Index i = 0; i < 5; ++i) std::printf(" %.17g", weights.row(i).sum());
    std::printf("\nweight of position 0 on itself: %.17g (exactly 1: %s)\n", weights(0, 0),
                yes_no(weights(0, 0) == 1.0));
    lesson.end("masked-weights");

    // ---- exactly zero depends on how exp is computed -------------------------------------------
    lesson.begin("exp-of-minus-inf");
    //! [code-exp]
    const double from_libm = std::exp(-kInf);                                   // std::exp
    const Eigen::ArrayXd from_eigen = Eigen::ArrayXd::Constant(4, -kInf).exp();  // vectorised
    //! [code-exp]
    std::printf("std::exp(-inf)               = %.4g (== 0.0: %s)\n", from_libm, yes_no(from_libm == 0.0));
    std::printf("Eigen's vectorised exp(-inf) = %.4g (== 0.0: %s), Eigen %d.%d.%d\n", from_eigen(0),
                yes_no(from_eigen(0) == 0.0), EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                EIGEN_MINOR_VERSION);
    lesson.end("exp-of-minus-inf");

    // ---- the future does not leak --------------------------------------------------------------
    Rng leak_rng(5);
    Matrix q = normal_matrix(6, 4, leak_rng), k = normal_matrix(6, 4, leak_rng),
           v = normal_matrix(6, 3, leak_rng);
    lesson.begin("no-leak");
    //! [code-leak]
    const Matrix before = causal_attention(q, k, v);
    q.row(5) = 3.0 * normal_matrix(1, 4, leak_rng);  // a different last token:
    k.row(5) = 3.0 * normal_matrix(1, 4, leak_rng);  // its query, key and value all change
    v.row(5) = 3.0 * normal_matrix(1, 3, leak_rng);
    const Matrix after = causal_attention(q, k, v);
    //! [code-leak]
    std::printf("six tokens; the last one (position 5) replaced by another\n");
    std::printf("  position   output bit-identical   largest |change|\n");
    for (Index i = 0; i < 6; ++i) {
      const bool same = (after.row(i).array() == before.row(i).array()).all();
      std::printf("  %8ld   %20s   %16s\n", static_cast<long>(i), yes_no(same),
                  fmt(largest_difference(after.row(i), before.row(i))).c_str());
    }
    lesson.end("no-leak");

    // ---- alignment when lengths differ ---------------------------------------------------------
    lesson.begin("alignment");
    //! [code-align]
    const BoolMatrix top_left = causal_mask(2, 5, Alignment::TopLeft);
    const BoolMatrix bottom_right = causal_mask(2, 5, Alignment::BottomRight);
    //! [code-align]
    std::printf("n_q = 2 queries, n_k = 5 keys\n");
    std::printf("TopLeft: the queries are the first two positions\n");
    print_mask(top_left, 0);
    std::printf("BottomRight: the queries are the last two positions\n");
    print_mask(bottom_right, 5 - 2);
    lesson.end("alignment");

    // ---- decoding with a key/value cache -------------------------------------------------------
    Rng decode_rng(6);
    const Matrix qd = normal_matrix(6, 4, decode_rng), kd = normal_matrix(6, 4, decode_rng),
                 vd = normal_matrix(6, 3, decode_rng);
    lesson.begin("decoding");
    //! [code-decode]
    const Matrix full = causal_attention(qd, kd, vd);  // training: the whole sequence in one pass
    Matrix decoded(6, 3), decoded_top_left(6, 3);
    for (Index t = 0; t < 6; ++t) {  // decoding: one new token at a time
      const Matrix cache_k = kd.topRows(t + 1), cache_v = vd.topRows(t + 1);  // the key/value cache
      decoded.row(t) = causal_attention(qd.row(t), cache_k, cache_v, Alignment::BottomRight);
      decoded_top_left.row(t) = causal_attention(qd.row(t), cache_k, cache_v, Alignment::TopLeft);
    }
    //! [code-decode]
    std::printf("decoding 6 tokens one at a time, compared with the full causal pass, row by row\n");
    std::printf("  step t   cached keys   BottomRight: largest difference   bit-identical   TopLeft: largest difference\n");
    for (Index t = 0; t < 6; ++t) {
      const double difference = largest_difference(decoded.row(t), full.row(t));
      std::printf("  %6ld   %11ld   %31s   %13s   %27s\n", static_cast<long>(t), static_cast<long>(t + 1),
                  fmt(difference, "%.3g").c_str(), yes_no(difference == 0.0),
                  fmt(largest_difference(decoded_top_left.row(t), full.row(t))).c_str());
    }
    std::printf("largest difference between BottomRight decoding and the full pass: %s\n",
                fmt(largest_difference(decoded, full), "%.3g").c_str());
    lesson.end("decoding");

    // ---- fully masked rows ---------------------------------------------------------------------
    Rng policy_rng(7);
    const Matrix qp = normal_matrix(4, 3, policy_rng), kp = normal_matrix(2, 3, policy_rng),
                 vp = normal_matrix(2, 2, policy_rng);
    lesson.begin("fully-masked");
    //! [code-policy]
    const BoolMatrix sees_nothing = causal_mask(4, 2, Alignment::BottomRight);
    const Matrix policy_weights = masked_softmax(scaled_scores(qp, kp), sees_nothing);
    const Matrix policy_out = causal_attention(qp, kp, vp, Alignment::BottomRight);
    //! [code-policy]
    std::printf("4 queries, 2 keys, BottomRight: queries 0 and 1 come before every key\n");
    print_mask(sees_nothing, 2 - 4);
    std::printf("weights (our policy: a row with nothing allowed is all zeros):\n");
    print_matrix(policy_weights);
    std::printf("attention output (rows 0 and 1 are the zero vector):\n");
    print_matrix(policy_out);
    // What an unguarded softmax does with a row of -inf:
    const double row_max = -kInf;                    // the maximum of a row of -inf
    const double e = std::exp(-kInf - row_max);      // -inf - (-inf) is NaN, and so is exp(NaN)
    const double unguarded = e / (e + e);
    std::printf("unguarded softmax of (-inf, -inf): max = %s, exp(x - max) = %s, weight = %s\n",
                fmt(row_max).c_str(), fmt(e).c_str(), fmt(unguarded).c_str());
    lesson.end("fully-masked");

    // ---- a finite sentinel ---------------------------------------------------------------------
    lesson.begin("finite-sentinel");
    const double sentinel = -1e9;
    std::printf("1. the masked-weights example, -1e9 instead of -inf: largest difference %s\n",
                fmt(largest_difference(softmax_with_sentinel(scores, mask, sentinel), weights), "%.3g").c_str());
    Matrix low(1, 3);
    low << -3e9, -2e9, 0.0;  // contrived: allowed scores below the sentinel; the future scores 0
    BoolMatrix first_two(1, 3);
    first_two << true, true, false;
    std::printf("2. scores (-3e9, -2e9, 0), the last key masked:\n");
    std::printf("   -inf:");
    print_matrix(masked_softmax(low, first_two));
    std::printf("   -1e9:");
    print_matrix(softmax_with_sentinel(low, first_two, sentinel));
    Matrix two(1, 2);
    two << 0.3, -1.2;
    const BoolMatrix none = BoolMatrix::Constant(1, 2, false);
    std::printf("3. scores (0.3, -1.2), both keys masked:\n");
    std::printf("   -inf:");
    print_matrix(masked_softmax(two, none));
    std::printf("   -1e9:");
    print_matrix(softmax_with_sentinel(two, none, sentinel));
    lesson.end("finite-sentinel");
    // Half precision's largest finite value, which -1e9 exceeds (IEEE 754 binary16, as Eigen has it).
    lesson.value("half_max", static_cast<double>(Eigen::NumTraits<Eigen::half>::highest()), "%.0f");
    lesson.claim(static_cast<double>(Eigen::NumTraits<Eigen::half>::highest()) < -sentinel,
                 "-1e9 is beyond half precision's largest finite value");

    // ---- the heatmap's data --------------------------------------------------------------------
    Rng heat_rng(8);
    const Matrix q8 = normal_matrix(8, 4, heat_rng), k8 = normal_matrix(8, 4, heat_rng);
    const Matrix heat = masked_softmax(scaled_scores(q8, k8), causal_mask(8, 8));
    lesson.matrix("ch04_mask_heatmap.dat", heat);  // row i = query i, column j = key j
  });
}
