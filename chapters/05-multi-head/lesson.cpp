// Chapter 5 lesson — multi-head attention and concatenation.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this program's
// output with \snippet) and writes the data of the figures (ch05_head_weights_h*.dat,
// ch05_concat_layout.dat). Usage: ch05_lesson [data folder]. Deterministic on standard output:
// fixed seeds and fixed formats. The one measurement that is not, the time of the loop and fused
// forms, goes to standard error (the book's determinism test compares standard output byte for
// byte); `./workbook run 5` shows it.
//
// Linked against the reference (the book's numbers) and against a student's track.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "multi_head.hpp"
#include "scalebook/lesson.hpp"
#include "scalebook/linalg.hpp"
#include "scalebook/random.hpp"
#include "scalebook/softmax.hpp"

using namespace scalebook;
using namespace scalebook::ch05;

namespace {

// "1.2e-15"; an exact zero prints as "0".
std::string tiny(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == 0.0) return "0";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", x);
  return buffer;
}

double largest_difference(const Matrix& a, const Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return NAN;
  return (a - b).cwiseAbs().maxCoeff();
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void print_matrix(const Matrix& m, const char* indent = "    ") {
  for (Index i = 0; i < m.rows(); ++i) {
    std::printf("%s", indent);
    for (Index j = 0; j < m.cols(); ++j) std::printf(" %6.3f", m(i, j) == 0.0 ? 0.0 : m(i, j));
    std::printf("\n");
  }
}

// One head's attention weights, written out (the page's heatmaps): q_h k_hᵀ / sqrt(head_dim).
Matrix head_weights(const Matrix& query, const Matrix& key, const MultiHeadParams& p, Index h,
                    double divisor) {
  const Index e = p.embed_dim(), hd = p.head_dim();
  const Matrix q = linear(query, p.in_proj_weight.middleRows(h * hd, hd), p.in_proj_bias.segment(h * hd, hd));
  const Matrix k = linear(key, p.in_proj_weight.middleRows(e + h * hd, hd), p.in_proj_bias.segment(e + h * hd, hd));
  return softmax_rows(matmul_transposed(q, k) / divisor);
}

// ---- the book's listing, transliterated --------------------------------------------------------

//! [code-dense]
// Keras's Dense(units): y = x · kernel + bias, kernel (in, units). Keras creates the kernel on the
// layer's first call, sized from the width of whatever it is given (glorot-uniform, zero bias).
struct Dense {
  Index units;
  scalebook::Rng* rng;
  Matrix kernel;  // (in, units); empty until the first call, unless given (fixed weights)
  RowVector bias;
  Matrix operator()(const Matrix& x) {
    if (kernel.size() == 0) {  // build(): first call
      const double limit = std::sqrt(6.0 / static_cast<double>(x.cols() + units));
      kernel.resize(x.cols(), units);
      for (Index i = 0; i < kernel.rows(); ++i)
        for (Index j = 0; j < kernel.cols(); ++j) kernel(i, j) = limit * (2.0 * rng->uniform() - 1.0);
      bias = RowVector::Zero(units);
    }
    Matrix y = matmul(x, kernel);  // throws ShapeError if x's width is not the kernel's
    y.rowwise() += bias;
    return y;
  }
};
//! [code-dense]

// The listing's globals: num_heads, head_dim, the dense layers, and target and source.
struct Listing {
  Index num_heads, head_dim;
  std::vector<Dense> query_dense, key_dense, value_dense;
  Dense output_dense;
  Matrix target, source;  // one sequence, so the listing's batch axis b is dropped

  //! [code-listing]
  Matrix multi_head_attention(Matrix query, Matrix key, Matrix value) {  // Python rebinds: copies
    std::vector<Matrix> head_outputs;
    for (Index i = 0; i < num_heads; ++i) {
      query = query_dense[i](query);
      key = key_dense[i](key);
      value = value_dense[i](value);
      Matrix scores = matmul_transposed(target, source);  // np.einsum("btd,bsd->bts", target, source)
      scores = scalebook::softmax_rows(scores / std::sqrt(static_cast<double>(head_dim)));
      Matrix head_output = matmul(scores, source);        // np.einsum("bts,bsd->btd", scores, source)
      head_outputs.push_back(head_output);
    }
    Matrix outputs = concat_heads(head_outputs);           // ops.concatenate(head_outputs, axis=-1)
    return output_dense(outputs);
  }
  //! [code-listing]
  // The last head's output, kept to compare the heads.
  std::vector<Matrix> heads(const Matrix& query, const Matrix& key, const Matrix& value) {
    std::vector<Matrix> out;
    Matrix q = query, k = key, v = value;
    for (Index i = 0; i < num_heads; ++i) {
      q = query_dense[i](q);
      k = key_dense[i](k);
      v = value_dense[i](v);
      out.push_back(matmul(softmax_rows(matmul_transposed(target, source) / std::sqrt(static_cast<double>(head_dim))), source));
    }
    return out;
  }
};

// The listing's layers as Keras makes them: each Dense sized on its first call. The seeds of the
// query, key and value layers and of the output layer are separate, to change one and not the other.
Listing keras_listing(Index num_heads, Index head_dim, Rng& qkv_rng, Rng& out_rng, const Matrix& target,
                      const Matrix& source) {
  Listing l{num_heads, head_dim, {}, {}, {}, Dense{head_dim * num_heads, &out_rng, {}, {}}, target, source};
  for (Index i = 0; i < num_heads; ++i) {
    l.query_dense.push_back(Dense{head_dim, &qkv_rng, {}, {}});
    l.key_dense.push_back(Dense{head_dim, &qkv_rng, {}, {}});
    l.value_dense.push_back(Dense{head_dim, &qkv_rng, {}, {}});
  }
  return l;
}

// The same listing with this chapter's fixed per-head weights: head h's kernel is its (E, head_dim)
// slice of W_qᵀ (W_kᵀ, W_vᵀ), made before any call, as a framework with declared shapes does.
Listing fixed_listing(const MultiHeadParams& p, const Matrix& target, const Matrix& source) {
  const Index e = p.embed_dim(), hd = p.head_dim();
  Listing l{p.num_heads, hd, {}, {}, {}, Dense{e, nullptr, p.out_proj_weight.transpose(), p.out_proj_bias.transpose()},
            target, source};
  for (Index h = 0; h < p.num_heads; ++h) {
    const auto dense = [&](Index block) {
      return Dense{hd, nullptr, p.in_proj_weight.middleRows(block * e + h * hd, hd).transpose(),
                   p.in_proj_bias.segment(block * e + h * hd, hd).transpose()};
    };
    l.query_dense.push_back(dense(0));
    l.key_dense.push_back(dense(1));
    l.value_dense.push_back(dense(2));
  }
  return l;
}

std::string shape(const Matrix& m) { return shape_of(m); }

// Seconds for the fastest of `repeats` runs of f.
template <class F>
double fastest(int repeats, F&& f) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    const MultiHeadParams p = fixture_params();  // PyTorch's layer: E = 12, H = 3, head_dim = 4
    const Index e = p.embed_dim(), hd = p.head_dim(), heads = p.num_heads;
    lesson.value("embed_dim", e);
    lesson.value("heads", heads);
    lesson.value("head_dim", hd);
    lesson.value("concat_width", heads * e);
    for (const char* name : {"self", "cross", "cross_long"}) {
      const std::string c = name;
      lesson.value(c + "_queries", fixture(c + "_query").rows());
      lesson.value(c + "_keys", fixture(c + "_key").rows());
    }

    // ---- the layout ------------------------------------------------------------------------------
    lesson.begin("parameters");
    std::printf("E = %ld, H = %ld, head_dim = E / H = %ld\n", static_cast<long>(e), static_cast<long>(heads),
                static_cast<long>(hd));
    std::printf("in_proj_weight %s, out_proj_weight %s\n", shape(p.in_proj_weight).c_str(),
                shape(p.out_proj_weight).c_str());
    std::printf("  head   rows of W_q   rows of W_k   rows of W_v   columns of Q, K, V, concat\n");
    for (Index h = 0; h < heads; ++h) {
      std::printf("  %4ld   %5ld..%-5ld   %5ld..%-5ld   %5ld..%-5ld   %ld..%ld\n", static_cast<long>(h),
                  static_cast<long>(h * hd), static_cast<long>(h * hd + hd - 1), static_cast<long>(e + h * hd),
                  static_cast<long>(e + h * hd + hd - 1), static_cast<long>(2 * e + h * hd),
                  static_cast<long>(2 * e + h * hd + hd - 1), static_cast<long>(h * hd), static_cast<long>(h * hd + hd - 1));
    }
    {
      // A head's rows of W_q against the whole E x E block, keeping the head's columns.
      const Matrix x5 = fixture("self_query");
      const Matrix whole = linear(x5, p.in_proj_weight.topRows(e), p.in_proj_bias.head(e));
      double largest = 0.0;
      for (Index h = 0; h < heads; ++h) {
        const Matrix own = linear(x5, p.in_proj_weight.middleRows(h * hd, hd), p.in_proj_bias.segment(h * hd, hd));
        largest = std::max(largest, largest_difference(own, whole.middleCols(h * hd, hd)));
      }
      std::printf("a head's rows of W_q against the whole block's columns: largest difference %s\n", tiny(largest).c_str());
      lesson.claim_in_book(largest <= 1e-15, "projecting with a head's rows of W_q gives the whole block's columns, to 1e-15");
      lesson.claim(largest <= 1e-12, "a head's rows of W_q give the whole block's columns within the checks' 1e-12");
    }
    lesson.end("parameters");

    // ---- the concatenation's column layout, from split_heads and concat_heads themselves -----------
    lesson.begin("concat-layout");
    //! [code-concat]
    Matrix column_ids(1, e);  // entry j = j: every value says which column it came from
    for (Index j = 0; j < e; ++j) column_ids(0, j) = static_cast<double>(j);
    const std::vector<Matrix> split = split_heads(column_ids, heads);
    const Matrix joined = concat_heads(split);
    //! [code-concat]
    std::printf("split_heads of a row holding its own column numbers 0..%ld:\n", static_cast<long>(e - 1));
    for (Index h = 0; h < heads; ++h) {
      std::printf("  head %ld:", static_cast<long>(h));
      for (Index c = 0; c < split[h].cols(); ++c) std::printf(" %2.0f", split[h](0, c));
      std::printf("\n");
    }
    std::printf("concat_heads(split): ");
    for (Index j = 0; j < e; ++j) std::printf(" %2.0f", joined(0, j));
    std::printf("\nconcat_heads(split_heads(x)) == x: %s\n", yes_no((joined.array() == column_ids.array()).all()));
    lesson.claim((joined.array() == column_ids.array()).all(), "concatenating the split heads gives the row back");
    // The figure's rows: which head owns each column, correct and as two classic mistakes do it.
    Matrix layout(3, e);
    for (Index h = 0; h < heads; ++h)
      for (Index c = 0; c < hd; ++c) {
        layout(0, static_cast<Index>(split[h](0, c))) = static_cast<double>(h);  // contiguous blocks
        layout(1, h + heads * c) = static_cast<double>(h);                        // interleaved split
        layout(2, (heads - 1 - h) * hd + c) = static_cast<double>(h);             // reversed concat
      }
    lesson.matrix("ch05_concat_layout.dat", layout);
    lesson.end("concat-layout");

    // ---- equal to PyTorch -------------------------------------------------------------------------
    lesson.begin("vs-pytorch");
    std::printf("largest |difference| from PyTorch's nn.MultiheadAttention (float64)\n");
    std::printf("  case                    mask           loop form   fused form\n");
    double worst_vs_torch = 0.0, worst_loop_fused = 0.0;
    bool bias_where_nan = true;
    for (const char* name : {"self", "cross", "cross_long"}) {
      const std::string c = name;
      const Matrix q = fixture(c + "_query"), k = fixture(c + "_key"), v = fixture(c + "_value");
      for (auto [mode, causal] : {std::pair<const char*, Causal>{"none", std::nullopt},
                                  {"top_left", Alignment::TopLeft}, {"bottom_right", Alignment::BottomRight}}) {
        const Matrix torch = fixture(c + "_" + mode + "_output");
        const Matrix loop = multi_head_loop(q, k, v, p, causal);
        const Matrix fused = multi_head_fused(q, k, v, p, causal);
        Index nan_rows = 0;
        double loop_diff = 0.0, fused_diff = 0.0;
        for (Index i = 0; i < torch.rows(); ++i) {
          if (torch.row(i).array().isNaN().any()) {
            ++nan_rows;
            continue;
          }
          loop_diff = std::max(loop_diff, (loop.row(i) - torch.row(i)).cwiseAbs().maxCoeff());
          fused_diff = std::max(fused_diff, (fused.row(i) - torch.row(i)).cwiseAbs().maxCoeff());
        }
        worst_vs_torch = std::max({worst_vs_torch, loop_diff, fused_diff});
        worst_loop_fused = std::max(worst_loop_fused, largest_difference(loop, fused));
        const std::string label = c + " (" + std::to_string(q.rows()) + " q, " + std::to_string(k.rows()) + " k)";
        std::printf("  %-22s  %-12s  %10s  %11s", label.c_str(), mode, tiny(loop_diff).c_str(), tiny(fused_diff).c_str());
        if (nan_rows > 0) {
          const bool bias_rows = (loop.topRows(nan_rows).rowwise() - p.out_proj_bias.transpose()).cwiseAbs().maxCoeff() == 0.0;
          std::printf("\n  %-10s queries 0..%ld see no key: PyTorch NaN, ours out_proj_bias: %s", "",
                      static_cast<long>(nan_rows - 1), yes_no(bias_rows));
          bias_where_nan = bias_where_nan && bias_rows;
        }
        std::printf("\n");
      }
    }
    std::printf("largest |loop form - fused form| over these cases: %s\n", tiny(worst_loop_fused).c_str());
    lesson.claim_in_book(worst_vs_torch <= 1e-15, "both forms equal PyTorch's outputs to 1e-15");
    lesson.claim_in_book(worst_loop_fused <= 1e-15, "the loop and fused forms agree to 1e-15");
    lesson.claim(worst_vs_torch <= 1e-12 && worst_loop_fused <= 1e-12,
                 "both forms equal PyTorch's outputs, and each other, within the checks' 1e-12");
    lesson.claim(bias_where_nan, "where PyTorch gives NaN, our layer outputs out_proj_bias");
    lesson.end("vs-pytorch");

    // ---- each head compares differently ---------------------------------------------------------
    const Matrix x = fixture("self_query");  // 5 tokens, E = 12
    lesson.begin("head-weights");
    std::printf("self-attention, 5 tokens: each head's weights (row = query, column = key)\n");
    std::vector<std::vector<Index>> tops(static_cast<std::size_t>(heads));
    for (Index h = 0; h < heads; ++h) {
      const Matrix w = head_weights(x, x, p, h, std::sqrt(static_cast<double>(hd)));
      lesson.matrix("ch05_head_weights_h" + std::to_string(h) + ".dat", w);
      std::printf("  head %ld: the key each query weighs most:", static_cast<long>(h));
      for (Index i = 0; i < w.rows(); ++i) {
        Index best = 0;
        w.row(i).maxCoeff(&best);
        std::printf(" %ld", static_cast<long>(best));
        tops[static_cast<std::size_t>(h)].push_back(best);
      }
      std::printf("\n");
      print_matrix(w);
    }
    // On how many queries do the heads pick the same key, all of them or just two?
    int all_agree = 0, two_agree = 0;
    for (std::size_t i = 0; i < tops[0].size(); ++i) {
      std::vector<Index> picks;
      for (const auto& t : tops) picks.push_back(t[i]);
      std::sort(picks.begin(), picks.end());
      const auto distinct = std::unique(picks.begin(), picks.end()) - picks.begin();
      if (distinct == 1) ++all_agree;
      if (distinct == static_cast<long>(heads) - 1) ++two_agree;
    }
    std::printf("queries on which all %ld heads pick the same key: %d; on which exactly two do: %d of %ld\n",
                static_cast<long>(heads), all_agree, two_agree, static_cast<long>(tops[0].size()));
    lesson.claim(all_agree == 0 && two_agree == static_cast<int>(tops[0].size()),
                 "on every query two of the three heads pick the same key and the third picks another");
    lesson.end("head-weights");

    // ---- sqrt(head_dim), not sqrt(E) ------------------------------------------------------------
    lesson.begin("scale-divisor");
    std::printf("divisor sqrt(head_dim) = sqrt(%ld) = %.4f;  sqrt(E) = sqrt(%ld) = %.4f\n", static_cast<long>(hd),
                std::sqrt(static_cast<double>(hd)), static_cast<long>(e), std::sqrt(static_cast<double>(e)));
    std::printf("  head   largest weight, mean over queries   entropy (nats), mean over queries\n");
    std::printf("         sqrt(head_dim)    sqrt(E)           sqrt(head_dim)    sqrt(E)\n");
    bool flatter = true;
    for (Index h = 0; h < heads; ++h) {
      double stats[2][2] = {};
      int which = 0;
      for (double divisor : {std::sqrt(static_cast<double>(hd)), std::sqrt(static_cast<double>(e))}) {
        const Matrix w = head_weights(x, x, p, h, divisor);
        double top = 0.0, entropy = 0.0;
        for (Index i = 0; i < w.rows(); ++i) {
          top += w.row(i).maxCoeff();
          for (Index j = 0; j < w.cols(); ++j) entropy -= w(i, j) * std::log(w(i, j));
        }
        stats[which][0] = top / static_cast<double>(w.rows());
        stats[which][1] = entropy / static_cast<double>(w.rows());
        ++which;
      }
      std::printf("  %4ld   %14.4f   %8.4f           %14.4f   %8.4f\n", static_cast<long>(h), stats[0][0], stats[1][0],
                  stats[0][1], stats[1][1]);
      flatter = flatter && stats[1][0] < stats[0][0] && stats[1][1] > stats[0][1];
    }
    lesson.claim(flatter, "with sqrt(E) every head's weights are closer to uniform: higher entropy, smaller largest weight");
    std::printf("ln 5 = %.4f is the entropy of uniform weights over 5 keys\n", std::log(5.0));
    lesson.end("scale-divisor");

    // ---- the listing, as printed ------------------------------------------------------------------
    const Matrix target = fixture("cross_query"), source = fixture("cross_key");  // 4 and 7 tokens
    lesson.begin("listing-keras");
    Rng qkv_a(1), out_a(3), qkv_b(2), out_b(3);  // b: other W_q, W_k, W_v; the same output layer
    Listing a = keras_listing(heads, hd, qkv_a, out_a, target, source);
    Listing b = keras_listing(heads, hd, qkv_b, out_b, target, source);
    //! [code-call]
    const Matrix listing_out = a.multi_head_attention(target, source, source);  // as the book calls it
    //! [code-call]
    const Matrix listing_out_b = b.multi_head_attention(target, source, source);
    std::printf("the listing with Keras-style Dense layers (sized on first call): output %s\n",
                shape(listing_out).c_str());
    std::printf("kernels the Dense layers built (in, units):\n");
    for (Index i = 0; i < heads; ++i) {
      std::printf("  head %ld: query_dense %s, key_dense %s, value_dense %s\n", static_cast<long>(i),
                  shape(a.query_dense[i].kernel).c_str(), shape(a.key_dense[i].kernel).c_str(),
                  shape(a.value_dense[i].kernel).c_str());
    }
    std::printf("  output_dense %s: the concatenation is H * E = %ld wide, not E = %ld\n",
                shape(a.output_dense.kernel).c_str(), static_cast<long>(heads * e), static_cast<long>(e));
    Rng again_rng(1), again_out(3);
    Listing again = keras_listing(heads, hd, again_rng, again_out, target, source);
    const std::vector<Matrix> listing_heads = again.heads(target, source, source);
    double spread = 0.0;
    for (Index h = 1; h < heads; ++h) spread = std::max(spread, largest_difference(listing_heads[h], listing_heads[0]));
    std::printf("symptom 1, every head gives the same output: largest difference %s\n", tiny(spread).c_str());
    std::printf("symptom 2, other W_q, W_k, W_v: output changes by %s (bit-identical: %s)\n",
                tiny(largest_difference(listing_out_b, listing_out)).c_str(),
                yes_no((listing_out_b.array() == listing_out.array()).all()));
    std::printf("symptom 3, head 1 projects head 0's projection: query_dense[1] kernel (%ld, %ld)\n",
                static_cast<long>(a.query_dense[1].kernel.rows()), static_cast<long>(a.query_dense[1].kernel.cols()));
    lesson.claim(spread == 0.0, "every head of the listing returns exactly the same output");
    lesson.claim((listing_out_b.array() == listing_out.array()).all(),
                 "other query, key and value weights leave the listing's output bit-for-bit unchanged");
    lesson.claim(a.query_dense[1].kernel.rows() == hd && a.output_dense.kernel.rows() == heads * e,
                 "from the second head on query_dense gets a (4, 4) kernel, and the output layer a (36, 12) one");
    lesson.end("listing-keras");

    lesson.begin("listing-shape-error");
    Listing fixed = fixed_listing(p, target, source);
    try {
      fixed.multi_head_attention(target, source, source);
      std::printf("the listing with fixed per-head weights ran (unexpected)\n");
      lesson.claim(false, "with fixed per-head weights the listing stops at the second head with a shape error");
    } catch (const ShapeError& error) {
      std::printf("the listing with this chapter's fixed per-head weights, W_q slices (%ld, %ld):\n",
                  static_cast<long>(hd), static_cast<long>(e));
      std::printf("  ShapeError: %s\n", error.what());
    }
    lesson.end("listing-shape-error");

    lesson.begin("fixed-loop");
    const Matrix key = source, value = fixture("cross_value");
    std::vector<Matrix> fixed_heads;
    for (Index h = 0; h < heads; ++h) fixed_heads.push_back(head_attention(target, key, value, p, h));
    double fixed_spread = 1e300;
    for (Index h = 1; h < heads; ++h) fixed_spread = std::min(fixed_spread, largest_difference(fixed_heads[h], fixed_heads[0]));
    const Matrix before = multi_head_loop(target, key, value, p);
    std::printf("the fixed loop form (exercise 5.5) on the same target and source:\n");
    std::printf("  heads differ: head 0 vs the closest other head, largest difference %.4f\n", fixed_spread);
    const char* names[] = {"W_q", "W_k", "W_v"};
    bool every_projection_counts = fixed_spread > 0.01;
    for (Index block = 0; block < 3; ++block) {
      MultiHeadParams changed = p;
      changed.in_proj_weight.middleRows(block * e, e) *= 0.5;
      const double change = largest_difference(multi_head_loop(target, key, value, changed), before);
      std::printf("  %s halved: largest change of the output %.4f\n", names[block], change);
      every_projection_counts = every_projection_counts && change > 0.01;
    }
    lesson.claim(every_projection_counts,
                 "in the fixed form the heads differ and every one of W_q, W_k and W_v changes the output");
    std::printf("  every head projects the layer's query %s to (%ld, %ld)\n", shape(target).c_str(),
                static_cast<long>(target.rows()), static_cast<long>(hd));
    lesson.end("fixed-loop");

    // ---- loop form and fused form ---------------------------------------------------------------
    Rng big_rng(55);
    const Index n = 256, big_e = 256, big_h = 8;
    MultiHeadParams big;
    big.num_heads = big_h;
    big.in_proj_weight = normal_matrix(3 * big_e, big_e, big_rng) / std::sqrt(static_cast<double>(big_e));
    big.in_proj_bias = normal_matrix(3 * big_e, 1, big_rng).col(0);
    big.out_proj_weight = normal_matrix(big_e, big_e, big_rng) / std::sqrt(static_cast<double>(big_e));
    big.out_proj_bias = normal_matrix(big_e, 1, big_rng).col(0);
    const Matrix big_x = normal_matrix(n, big_e, big_rng);
    lesson.begin("loop-vs-fused");
    //! [code-forms]
    const Matrix by_loop = multi_head_loop(big_x, big_x, big_x, big, Alignment::TopLeft);
    const Matrix fused = multi_head_fused(big_x, big_x, big_x, big, Alignment::TopLeft);
    //! [code-forms]
    std::printf("n = %ld tokens, E = %ld, H = %ld (head_dim %ld), causal\n", static_cast<long>(n),
                static_cast<long>(big_e), static_cast<long>(big_h), static_cast<long>(big_e / big_h));
    std::printf("largest |loop - fused|: %s\n", tiny(largest_difference(by_loop, fused)).c_str());
    lesson.claim_in_book(largest_difference(by_loop, fused) <= 1e-15, "the loop and fused forms agree to 1e-15");
    lesson.claim(largest_difference(by_loop, fused) <= 1e-12, "the loop and fused forms agree within the checks' 1e-12");
    std::printf("in-projection products: loop form %ld of (%ld x %ld) (%ld x %ld)^T\n", static_cast<long>(3 * big_h),
                static_cast<long>(n), static_cast<long>(big_e), static_cast<long>(big_e / big_h), static_cast<long>(big_e));
    std::printf("                        fused form  3 of (%ld x %ld) (%ld x %ld)^T\n", static_cast<long>(n),
                static_cast<long>(big_e), static_cast<long>(big_e), static_cast<long>(big_e));
    std::printf("the same multiply-adds either way: 3 n E^2 = %.3g\n", 3.0 * n * big_e * big_e);
    lesson.end("loop-vs-fused");
    // Timings vary from run to run: on standard error, outside the book's deterministic output.
    const int repeats = 5;
    const double t_loop = fastest(repeats, [&] { multi_head_loop(big_x, big_x, big_x, big, Alignment::TopLeft); });
    const double t_fused = fastest(repeats, [&] { multi_head_fused(big_x, big_x, big_x, big, Alignment::TopLeft); });
    std::fprintf(stderr, "[loop-vs-fused timing] n = %ld, E = %ld, H = %ld, fastest of %d: loop form %.2f ms, fused form %.2f ms (loop / fused = %.2f)\n",
                 static_cast<long>(n), static_cast<long>(big_e), static_cast<long>(big_h), repeats, 1e3 * t_loop, 1e3 * t_fused,
                 t_loop / t_fused);
  });
}
