// Chapter 5 checks — multi-head attention and concatenation.
//
// Every case is named after its exercise ("5.4 ...") so that progress and grading count per
// exercise. Expected values come from PyTorch's nn.MultiheadAttention (fixtures/*.csv, written by
// tools/maintainer/fixtures/ch05_torch_fixtures.py and compiled in), from examples worked by hand, or from an
// independent implementation in this file written with plain loops — never from the code under
// test, and no check of one exercise calls another exercise. The plain-loop implementation can
// also make each known mistake on purpose, so that a failing check names the mistake its output
// looks like ("looks like a known mistake: scores divided by sqrt(E) instead of sqrt(head_dim)?").
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "multi_head.hpp"
#include "scalebook/random.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::ch05;
using scalebook::testing::identical;
using scalebook::testing::Mistake;
using scalebook::testing::near;
using scalebook::testing::said;
using scalebook::testing::suspect;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The known mistakes, as the failure messages name them.
constexpr const char* kScaleE = "scores divided by sqrt(E) instead of sqrt(head_dim)? A head compares head_dim-wide vectors";
constexpr const char* kNoScale = "scores not divided by sqrt(head_dim)?";
constexpr const char* kShared = "one projection shared by all heads (every head uses head 0's rows of W_q, W_k, W_v)?";
constexpr const char* kBiasMissing = "bias missing (x W^T without + b)?";
constexpr const char* kTransposed = "weight layout transposed (x W instead of x W^T)? PyTorch stores one output feature per ROW of weight";
constexpr const char* kConcatReversed = "heads concatenated in reverse head order? Head h must land in columns h*head_dim..";
constexpr const char* kInterleaved = "heads split interleaved (head h takes every H-th column, as a reshape to (n, head_dim, H) does)? Head h owns a contiguous block of columns";
constexpr const char* kSplitReversed = "heads split in reverse head order?";
constexpr const char* kScoresUnprojected = "scores from the unprojected query and key (the listing's einsum on target and source)? The scores must compare the head's projections";
constexpr const char* kValueUnprojected = "weights applied to the unprojected value (the listing's second einsum on source)? Head outputs then come out E wide instead of head_dim";
constexpr const char* kReassigned = "heads after the first project an already-projected input (the listing reassigns query, key and value inside the loop)? Each head projects the layer's own inputs";
constexpr const char* kKVSwapped = "W_k and W_v blocks swapped? in_proj_weight stacks W_q, W_k, W_v in that order";
constexpr const char* kNoMask = "causal mask ignored (every query sees every key)?";
constexpr const char* kAlignmentSwapped = "top-left and bottom-right alignment swapped?";
constexpr const char* kMaskTransposed = "causal mask transposed (query i sees keys j >= i, the future, instead of j <= i)? causal_mask takes (n_q, n_k): rows are queries";
constexpr const char* kOutBiasMissing = "output projection's bias left out (concat W_out^T without + b_out)?";

// ---- an independent implementation, by loops, able to make each mistake -------------------------

enum class Slip { None, ScaleE, NoScale, Shared, NoBias, ConcatReversed, Interleaved, SplitReversed,
                  ScoresUnprojected, KVSwapped, NoMask, AlignmentSwapped, MaskTransposed, NoOutBias };

// The row of in_proj_weight (and entry of in_proj_bias) that gives feature c of head h of
// projection block p (0 = q, 1 = k, 2 = v), with the given slip.
Index proj_row(const MultiHeadParams& p, int block, Index h, Index c, Slip slip) {
  const Index e = p.embed_dim(), hd = p.head_dim(), heads = p.num_heads;
  if (slip == Slip::KVSwapped && block > 0) block = 3 - block;
  if (slip == Slip::Shared) h = 0;
  if (slip == Slip::SplitReversed) h = heads - 1 - h;
  const Index feature = slip == Slip::Interleaved ? h + heads * c : h * hd + c;
  return block * e + feature;
}

// Head h's projection of x by block p: (n, head_dim).
Matrix project_by_loops(const Matrix& x, const MultiHeadParams& p, int block, Index h, Slip slip) {
  Matrix y(x.rows(), p.head_dim());
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index c = 0; c < p.head_dim(); ++c) {
      const Index r = proj_row(p, block, h, c, slip);
      double sum = slip == Slip::NoBias ? 0.0 : p.in_proj_bias(r);
      for (Index j = 0; j < x.cols(); ++j) sum += x(i, j) * p.in_proj_weight(r, j);
      y(i, c) = sum;
    }
  }
  return y;
}

// allowed(i, j) for no mask or a causal mask, the rule written out: j <= i + offset.
BoolMatrix allowed_by_rule(Index n_q, Index n_k, Causal causal, Slip slip) {
  BoolMatrix allowed = BoolMatrix::Constant(n_q, n_k, true);
  if (!causal || slip == Slip::NoMask) return allowed;
  bool bottom_right = *causal == Alignment::BottomRight;
  if (slip == Slip::AlignmentSwapped) bottom_right = !bottom_right;
  const Index offset = bottom_right ? n_k - n_q : 0;
  for (Index i = 0; i < n_q; ++i)
    for (Index j = 0; j < n_k; ++j) allowed(i, j) = j <= i + offset;
  if (slip == Slip::MaskTransposed) {  // causal_mask(n_k, n_q) transposed: key j sees query i <= j + offset'
    const Index swapped_offset = bottom_right ? n_q - n_k : 0;
    for (Index i = 0; i < n_q; ++i)
      for (Index j = 0; j < n_k; ++j) allowed(i, j) = i <= j + swapped_offset;
  }
  return allowed;
}

// Scores (n_q, n_k) to weights: w_ij = 1 / sum_{l allowed} exp(s_il - s_ij) on allowed entries,
// 0 elsewhere, and a row of zeros where nothing is allowed (chapter 4's policy).
Matrix weights_by_loops(const Matrix& s, const BoolMatrix& allowed) {
  Matrix w = Matrix::Zero(s.rows(), s.cols());
  for (Index i = 0; i < s.rows(); ++i)
    for (Index j = 0; j < s.cols(); ++j) {
      if (!allowed(i, j)) continue;
      double denominator = 0.0;
      for (Index l = 0; l < s.cols(); ++l)
        if (allowed(i, l)) denominator += std::exp(s(i, l) - s(i, j));
      w(i, j) = 1.0 / denominator;
    }
  return w;
}

Matrix dot_rows(const Matrix& a, const Matrix& b, double divisor) {
  Matrix s(a.rows(), b.rows());
  for (Index i = 0; i < a.rows(); ++i)
    for (Index j = 0; j < b.rows(); ++j) {
      double dot = 0.0;
      for (Index c = 0; c < a.cols(); ++c) dot += a(i, c) * b(j, c);
      s(i, j) = dot / divisor;
    }
  return s;
}

Matrix mix_by_loops(const Matrix& w, const Matrix& v) {
  Matrix out = Matrix::Zero(w.rows(), v.cols());
  for (Index i = 0; i < w.rows(); ++i)
    for (Index j = 0; j < w.cols(); ++j)
      for (Index c = 0; c < v.cols(); ++c) out(i, c) += w(i, j) * v(j, c);
  return out;
}

// One head's attention weights and output, by loops.
Matrix head_weights_by_loops(const Matrix& query, const Matrix& key, const MultiHeadParams& p, Index h,
                             Causal causal, Slip slip = Slip::None) {
  const double hd = static_cast<double>(p.head_dim());
  const double divisor = slip == Slip::ScaleE ? std::sqrt(static_cast<double>(p.embed_dim()))
                         : slip == Slip::NoScale ? 1.0 : std::sqrt(hd);
  const Matrix s = slip == Slip::ScoresUnprojected
                       ? dot_rows(query, key, divisor)
                       : dot_rows(project_by_loops(query, p, 0, h, slip), project_by_loops(key, p, 1, h, slip), divisor);
  return weights_by_loops(s, allowed_by_rule(query.rows(), key.rows(), causal, slip));
}

Matrix head_by_loops(const Matrix& query, const Matrix& key, const Matrix& value, const MultiHeadParams& p,
                     Index h, Causal causal, Slip slip = Slip::None) {
  return mix_by_loops(head_weights_by_loops(query, key, p, h, causal, slip),
                      project_by_loops(value, p, 2, h, slip));
}

// The head outputs side by side, (n_q, E), and the layer's output.
Matrix heads_by_loops(const Matrix& query, const Matrix& key, const Matrix& value, const MultiHeadParams& p,
                      Causal causal, Slip slip = Slip::None) {
  const Index hd = p.head_dim();
  Matrix concat(query.rows(), p.embed_dim());
  for (Index h = 0; h < p.num_heads; ++h) {
    const Index place = slip == Slip::ConcatReversed ? p.num_heads - 1 - h : h;
    concat.middleCols(place * hd, hd) = head_by_loops(query, key, value, p, h, causal, slip);
  }
  return concat;
}

Matrix layer_by_loops(const Matrix& query, const Matrix& key, const Matrix& value, const MultiHeadParams& p,
                      Causal causal, Slip slip = Slip::None) {
  const Matrix concat = heads_by_loops(query, key, value, p, causal, slip);
  Matrix out(query.rows(), p.embed_dim());
  for (Index i = 0; i < out.rows(); ++i)
    for (Index r = 0; r < out.cols(); ++r) {
      double sum = slip == Slip::NoBias || slip == Slip::NoOutBias ? 0.0 : p.out_proj_bias(r);
      for (Index j = 0; j < concat.cols(); ++j) sum += concat(i, j) * p.out_proj_weight(r, j);
      out(i, r) = sum;
    }
  return out;
}

// The layer's known mistakes, for suspect(): each computed by the loops above.
std::vector<std::pair<const char*, Matrix>> layer_mistakes(const Matrix& query, const Matrix& key,
                                                           const Matrix& value, const MultiHeadParams& p,
                                                           Causal causal) {
  std::vector<std::pair<const char*, Matrix>> m;
  const auto add = [&](const char* what, Slip slip) { m.emplace_back(what, layer_by_loops(query, key, value, p, causal, slip)); };
  add(kScaleE, Slip::ScaleE);
  add(kNoScale, Slip::NoScale);
  add(kShared, Slip::Shared);
  add(kBiasMissing, Slip::NoBias);
  add(kConcatReversed, Slip::ConcatReversed);
  add(kInterleaved, Slip::Interleaved);
  add(kSplitReversed, Slip::SplitReversed);
  add(kScoresUnprojected, Slip::ScoresUnprojected);
  add(kKVSwapped, Slip::KVSwapped);
  add(kOutBiasMissing, Slip::NoOutBias);
  if (causal) {
    add(kNoMask, Slip::NoMask);
    add(kAlignmentSwapped, Slip::AlignmentSwapped);
    add(kMaskTransposed, Slip::MaskTransposed);
  }
  return m;
}

// "" or "looks like a known mistake: ..." for a matrix against a list built at run time.
std::string diagnose(const Matrix& actual, const std::vector<std::pair<const char*, Matrix>>& mistakes) {
  for (const auto& [what, output] : mistakes)
    if (output.rows() == actual.rows() && output.cols() == actual.cols() && near(actual, output, 1e-9))
      return std::string("looks like a known mistake: ") + what;
  return "";
}

// ---- fixtures --------------------------------------------------------------------------------------

struct Case {
  const char* name;
  Matrix query, key, value;
};

std::vector<Case> fixture_cases() {
  std::vector<Case> cases;
  for (const char* name : {"self", "cross", "cross_long"})
    cases.push_back({name, fixture(std::string(name) + "_query"), fixture(std::string(name) + "_key"),
                     fixture(std::string(name) + "_value")});
  return cases;
}

struct Mode {
  const char* name;
  Causal causal;
};
const Mode kModes[] = {{"none", std::nullopt}, {"top_left", Alignment::TopLeft}, {"bottom_right", Alignment::BottomRight}};

std::string describe(const Case& c, const Mode& m) {
  return std::string("fixture ") + c.name + " (n_q = " + std::to_string(c.query.rows()) + ", n_k = " +
         std::to_string(c.key.rows()) + "), mask " + m.name + " (PyTorch nn.MultiheadAttention, E = 12, H = 3)";
}

// PyTorch gives NaN for a query that may see no key; the workbook's policy (chapter 4) gives zero
// weights, so zero head outputs (replacement 0) and an output equal to out_proj_bias.
Matrix with_policy_rows(Matrix m, const RowVector& replacement) {
  for (Index i = 0; i < m.rows(); ++i)
    if (m.row(i).array().isNaN().any()) m.row(i) = replacement;
  return m;
}

// ---- exceptions ------------------------------------------------------------------------------------

// "" when f throws exactly an E whose message starts with "function: "; otherwise what went wrong.
template <class E>
std::string throws(const std::string& function, const std::function<void()>& f) {
  const std::string wanted = std::is_same_v<E, ShapeError> ? "ShapeError" : "ValueError";
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    if (what.rfind(function + ": ", 0) == 0) return "";
    return "the " + wanted + "'s message must start with \"" + function + ": \", got: " + what;
  } catch (const NotImplemented& e) {
    return std::string("not implemented yet: ") + e.what();
  } catch (const std::exception& e) {
    return "expected a " + wanted + ", got another exception: " + e.what();
  }
  return "expected a " + wanted + ", nothing was thrown";
}

// Runs f on valid input; a ShapeError there is explained when its message shows the shape a known
// mistake produces.
std::string explain_shape_error(const std::string& what, Index n_q, Index n_k, Index e, Index heads) {
  const Index hd = e / heads;
  const auto has = [&](Index r, Index c) { return what.find("(" + std::to_string(r) + ", " + std::to_string(c) + ")") != std::string::npos; };
  std::string why = "ShapeError on valid input: " + what;
  if (has(n_q, heads * e) || has(n_q, e * heads)) why += " | looks like a known mistake: " + std::string(kValueUnprojected);
  else if (has(n_q, hd) || has(n_k, hd)) why += " | looks like a known mistake: " + std::string(kReassigned);
  return why;
}

using Layer = std::function<Matrix(const Matrix&, const Matrix&, const Matrix&, const MultiHeadParams&, Causal)>;

// The layer on valid input: its output, or (on a ShapeError) nothing and a failed check that says why.
std::optional<Matrix> run_layer(const Layer& layer, const Matrix& query, const Matrix& key, const Matrix& value,
                                const MultiHeadParams& p, Causal causal) {
  try {
    return layer(query, key, value, p, causal);
  } catch (const ShapeError& e) {
    const std::string why = explain_shape_error(e.what(), query.rows(), key.rows(), p.embed_dim(), p.num_heads);
    CHECK_MESSAGE(false, why);
  }
  return std::nullopt;
}

Matrix grid(std::initializer_list<std::initializer_list<double>> rows) {
  Matrix m(static_cast<Index>(rows.size()), static_cast<Index>(rows.begin()->size()));
  Index i = 0;
  for (const auto& row : rows) {
    Index j = 0;
    for (double x : row) m(i, j++) = x;
    ++i;
  }
  return m;
}

// A random layer: E = heads * head_dim, weights scaled so that the softmaxes are neither flat nor one-hot.
MultiHeadParams random_params(Index heads, Index head_dim, Rng& rng) {
  const Index e = heads * head_dim;
  MultiHeadParams p;
  p.num_heads = heads;
  p.in_proj_weight = normal_matrix(3 * e, e, rng) / std::sqrt(static_cast<double>(e));
  p.in_proj_bias = 0.5 * normal_matrix(3 * e, 1, rng).col(0);
  p.out_proj_weight = normal_matrix(e, e, rng) / std::sqrt(static_cast<double>(e));
  p.out_proj_bias = 0.5 * normal_matrix(e, 1, rng).col(0);
  return p;
}

// Bad input for any of the three layer functions (head_attention for head 0): every way the
// contract lists, each dimension empty on its own, mismatches larger and smaller.
std::vector<std::string> layer_bad_input(const std::string& function, const Layer& layer) {
  Rng rng(550);
  const MultiHeadParams good = random_params(3, 4, rng);  // E = 12
  const Matrix q = normal_matrix(4, 12, rng), k = normal_matrix(6, 12, rng), v = normal_matrix(6, 12, rng);
  std::vector<std::string> problems;
  const auto shape = [&](const std::string& what, const std::function<void()>& f) {
    const std::string r = throws<ShapeError>(function, f);
    if (!r.empty()) problems.push_back(what + ": " + r);
  };
  const auto value_error = [&](const std::string& what, const std::function<void()>& f) {
    const std::string r = throws<ValueError>(function, f);
    if (!r.empty()) problems.push_back(what + ": " + r);
  };
  const auto with = [&](const std::function<void(MultiHeadParams&)>& change) {
    MultiHeadParams p = good;
    change(p);
    return p;
  };
  // Heads: E not divisible by H, H zero, negative (tiny and large).
  for (Index heads : {5, 7, 24, 0, -1, -1000000}) {
    const MultiHeadParams p = with([&](MultiHeadParams& x) { x.num_heads = heads; });
    shape("E = 12 with num_heads = " + std::to_string(heads) + (heads > 0 ? " (12 is not divisible by it)" : ""),
          [&] { layer(q, k, v, p, std::nullopt); });
  }
  // Parameter shapes, larger and smaller.
  for (Index rows : {35, 37}) shape("in_proj_weight with " + std::to_string(rows) + " rows", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix::Ones(rows, 12); }), std::nullopt); });
  for (Index cols : {11, 13}) shape("in_proj_weight with " + std::to_string(cols) + " columns", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix::Ones(36, cols); }), std::nullopt); });
  shape("in_proj_weight empty (0 x 12)", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix(0, 12); }), std::nullopt); });
  for (Index size : {35, 37}) shape("in_proj_bias of length " + std::to_string(size), [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_bias = Vector::Ones(size); }), std::nullopt); });
  for (Index cols : {11, 13}) shape("out_proj_weight with " + std::to_string(cols) + " columns", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight = Matrix::Ones(12, cols); }), std::nullopt); });
  for (Index size : {11, 13}) shape("out_proj_bias of length " + std::to_string(size), [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_bias = Vector::Ones(size); }), std::nullopt); });
  shape("out_proj_weight empty (0 x 0): E = 0", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight = Matrix(0, 0); }), std::nullopt); });
  // Inputs: each dimension empty on its own, widths larger and smaller, key and value lengths.
  shape("query empty (0 x 12)", [&] { layer(Matrix(0, 12), k, v, good, std::nullopt); });
  shape("query empty (4 x 0)", [&] { layer(Matrix(4, 0), k, v, good, std::nullopt); });
  shape("key and value empty (0 x 12)", [&] { layer(q, Matrix(0, 12), Matrix(0, 12), good, std::nullopt); });
  shape("key empty (6 x 0)", [&] { layer(q, Matrix(6, 0), v, good, std::nullopt); });
  shape("value empty (6 x 0)", [&] { layer(q, k, Matrix(6, 0), good, std::nullopt); });
  for (Index cols : {11, 13}) {
    shape("query of width " + std::to_string(cols), [&] { layer(normal_matrix(4, cols, rng), k, v, good, std::nullopt); });
    shape("key of width " + std::to_string(cols), [&] { layer(q, normal_matrix(6, cols, rng), v, good, std::nullopt); });
    shape("value of width " + std::to_string(cols), [&] { layer(q, k, normal_matrix(6, cols, rng), good, std::nullopt); });
  }
  for (Index rows : {5, 7}) shape("value with " + std::to_string(rows) + " rows for 6 keys", [&] { layer(q, k, normal_matrix(rows, 12, rng), good, std::nullopt); });
  // NaN and infinities in inputs and parameters.
  for (double bad : {kNaN, kInf, -kInf}) {
    const std::string b = std::isnan(bad) ? "NaN" : bad > 0 ? "inf" : "-inf";
    Matrix bq = q, bk = k, bv = v;
    bq(3, 11) = bad;
    bk(0, 0) = bad;
    bv(5, 2) = bad;
    value_error(b + " in query", [&] { layer(bq, k, v, good, std::nullopt); });
    value_error(b + " in key", [&] { layer(q, bk, v, good, Alignment::TopLeft); });
    value_error(b + " in value", [&] { layer(q, k, bv, good, std::nullopt); });
    value_error(b + " in in_proj_weight", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight(35, 0) = bad; }), std::nullopt); });
    value_error(b + " in in_proj_bias", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_bias(20) = bad; }), std::nullopt); });
    value_error(b + " in out_proj_weight", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight(0, 11) = bad; }), std::nullopt); });
    value_error(b + " in out_proj_bias", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_bias(11) = bad; }), std::nullopt); });
  }
  return problems;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += "\n  " + line;
  return out;
}

}  // namespace

TEST_SUITE("05-multi-head") {

// ---- 5.1 linear --------------------------------------------------------------------------------------

TEST_CASE("5.1 a projection worked by hand uses one output feature per row of weight") {
  // x = [[1, 2], [3, -1]], W = [[1, 0], [2, 1]] (row r gives output feature r), b = (10, 20):
  // row 0: (1*1 + 2*0, 1*2 + 2*1) + b = (11, 24); row 1: (3, 6 - 1) + b = (13, 25).
  const Matrix x = grid({{1, 2}, {3, -1}});
  const Matrix w = grid({{1, 0}, {2, 1}});
  Vector b(2);
  b << 10, 20;
  const Matrix expected = grid({{11, 24}, {13, 25}});
  const Matrix y = linear(x, w, b);
  CHECK_MESSAGE(near(y, expected, 0.0),
                said("linear(x = [[1, 2], [3, -1]], W = [[1, 0], [2, 1]], b = (10, 20)) must give [[11, 24], [13, 25]]: output feature r is a row of x dotted with row r of W, plus b(r)", suspect(y, {{kTransposed, grid({{15, 22}, {11, 19}})},   // x W + b
                            {kBiasMissing, grid({{1, 4}, {3, 5}})},        // x W^T
                            {kTransposed, grid({{5, 2}, {1, -1}})}})));     // x W, no bias either
}

TEST_CASE("5.1 a non-square projection equals its formula") {
  // in = 7 features to out = 3, as a head's slice (head_dim, E) of in_proj_weight is.
  Rng rng(511);
  const Matrix x = normal_matrix(5, 7, rng), w = normal_matrix(3, 7, rng);
  const Vector b = normal_matrix(3, 1, rng).col(0);
  Matrix expected(5, 3);
  for (Index i = 0; i < 5; ++i)
    for (Index r = 0; r < 3; ++r) {
      double sum = b(r);
      for (Index j = 0; j < 7; ++j) sum += x(i, j) * w(r, j);
      expected(i, r) = sum;
    }
  const Matrix y = linear(x, w, b);
  CHECK_MESSAGE(near(y, expected), said("linear of 5 random rows of 7 features to 3 outputs is wrong: y(i, r) must be b(r) + sum over j of x(i, j) W(r, j), with W of shape (out, in) = (3, 7)", suspect(y, {{kBiasMissing, Matrix(expected.rowwise() - b.transpose())}})));
  // Large magnitudes: nothing special, but nothing may overflow either.
  const Matrix big = linear(1e150 * x, w, b);
  CHECK_MESSAGE(near(big, Matrix(1e150 * (expected.rowwise() - b.transpose())), 1e-12), "inputs near 1e150");
}

TEST_CASE("5.1 bad input throws ShapeError or ValueError") {
  const Matrix x = Matrix::Ones(4, 3), w = Matrix::Ones(2, 3);
  const Vector b = Vector::Ones(2);
  std::vector<std::string> problems;
  const auto shape = [&](const std::string& what, const std::function<void()>& f) {
    const std::string r = throws<ShapeError>("linear", f);
    if (!r.empty()) problems.push_back(what + ": " + r);
  };
  shape("x empty (0 x 3)", [&] { linear(Matrix(0, 3), w, b); });
  shape("x empty (4 x 0) with weight (2 x 0)", [&] { linear(Matrix(4, 0), Matrix(2, 0), b); });
  shape("weight empty (0 x 3)", [&] { linear(x, Matrix(0, 3), Vector(0)); });
  shape("x with 2 features for weight (2 x 3)", [&] { linear(Matrix::Ones(4, 2), w, b); });
  shape("x with 4 features for weight (2 x 3)", [&] { linear(Matrix::Ones(4, 4), w, b); });
  shape("x (4 x 2) for weight (2 x 3): only its transpose would fit", [&] { linear(Matrix::Ones(4, 2), w, b); });
  shape("bias of length 1 for 2 outputs", [&] { linear(x, w, Vector::Ones(1)); });
  shape("bias of length 3 for 2 outputs", [&] { linear(x, w, Vector::Ones(3)); });
  shape("bias empty", [&] { linear(x, w, Vector(0)); });
  for (double bad : {kNaN, kInf, -kInf}) {
    Matrix bx = x, bw = w;
    Vector bb = b;
    bx(3, 2) = bad;
    bw(0, 1) = bad;
    bb(1) = bad;
    for (const auto& [what, f] : std::vector<std::pair<std::string, std::function<void()>>>{
             {"x", [&] { linear(bx, w, b); }}, {"weight", [&] { linear(x, bw, b); }}, {"bias", [&] { linear(x, w, bb); }}}) {
      const std::string r = throws<ValueError>("linear", f);
      if (!r.empty()) problems.push_back(std::to_string(bad) + " in " + what + ": " + r);
    }
  }
  CHECK_MESSAGE(problems.empty(), join(problems));
}

// ---- 5.2 split_heads ---------------------------------------------------------------------------------

TEST_CASE("5.2 head h gets the contiguous block of columns h times head_dim onwards") {
  // x(i, j) = 10 i + j: every entry says where it came from. E = 6, H = 3, head_dim = 2.
  Matrix x(2, 6);
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 6; ++j) x(i, j) = 10.0 * i + j;
  const std::vector<Matrix> heads = split_heads(x, 3);
  REQUIRE_MESSAGE(heads.size() == 3, "split_heads(x, 3) must return 3 heads, got ", heads.size());
  bool shapes_ok = true;
  for (const Matrix& h : heads) shapes_ok = shapes_ok && h.rows() == 2 && h.cols() == 2;
  REQUIRE_MESSAGE(shapes_ok, "each head must be (n, E / H) = (2, 2)");
  // The heads side by side, compared with x: the layout names the mistake.
  Matrix side_by_side(2, 6);
  for (Index h = 0; h < 3; ++h) side_by_side.middleCols(2 * h, 2) = heads[static_cast<std::size_t>(h)];
  const Matrix interleaved = grid({{0, 3, 1, 4, 2, 5}, {10, 13, 11, 14, 12, 15}});
  const Matrix reversed = grid({{4, 5, 2, 3, 0, 1}, {14, 15, 12, 13, 10, 11}});
  CHECK_MESSAGE(identical(side_by_side, x),
                said("split_heads(x, 3) of a 2 x 6 x holding 10 i + j is wrong: head h must be columns 2 h and 2 h + 1 of x (the block from h * head_dim on), heads in order", suspect(side_by_side, {{kInterleaved, interleaved}, {kSplitReversed, reversed}})));
  for (Index h = 0; h < 3; ++h) {
    INFO("head ", h, " must be columns ", 2 * h, " and ", 2 * h + 1, " of x");
    CHECK_MESSAGE(identical(heads[static_cast<std::size_t>(h)], x.middleCols(2 * h, 2)), "split_heads(x, 3) of a 6-column x: head " << h << " must be columns " << 2 * h << " and " << 2 * h + 1 << ", unchanged");
  }
}

TEST_CASE("5.2 one head is x itself and E heads are single columns") {
  Rng rng(521);
  const Matrix x = normal_matrix(4, 6, rng);
  const std::vector<Matrix> one = split_heads(x, 1);
  REQUIRE_MESSAGE(one.size() == 1, "split_heads(x, 1) must give one head, got " << one.size());
  CHECK_MESSAGE(identical(one[0], x), "split_heads(x, 1) must give x itself as its one head");
  const std::vector<Matrix> columns = split_heads(x, 6);
  REQUIRE_MESSAGE(columns.size() == 6, "split_heads(x, 6) of a 6-column x must give 6 heads, got " << columns.size());
  for (Index j = 0; j < 6; ++j) CHECK_MESSAGE(identical(columns[static_cast<std::size_t>(j)], x.col(j)), "split_heads(x, 6): head " << j << " must be column " << j << " of x");
  // Values are moved, not inspected: NaN and infinity pass through unchanged.
  Matrix odd = x;
  odd(1, 4) = kNaN;
  odd(2, 0) = -kInf;
  const std::vector<Matrix> heads = split_heads(odd, 2);
  REQUIRE_MESSAGE(heads.size() == 2, "split_heads(x, 2) must give 2 heads, got " << heads.size());
  CHECK_MESSAGE(identical(heads[0], odd.leftCols(3)), "split_heads must move NaN and inf unchanged: head 0 is the left 3 columns");
  CHECK_MESSAGE(identical(heads[1], odd.rightCols(3)), "split_heads must move NaN and inf unchanged: head 1 is the right 3 columns");
  // One token.
  const std::vector<Matrix> token = split_heads(x.topRows(1), 3);
  REQUIRE_MESSAGE(token.size() == 3, "split_heads of a single row into 3 heads must give 3 heads, got " << token.size());
  CHECK_MESSAGE(identical(token[2], x.block(0, 4, 1, 2)), "split_heads of a single row: head 2 must be its columns 4 and 5");
}

TEST_CASE("5.2 bad input throws ShapeError") {
  const Matrix x = Matrix::Ones(2, 6);
  std::vector<std::string> problems;
  const auto shape = [&](const std::string& what, const std::function<void()>& f) {
    const std::string r = throws<ShapeError>("split_heads", f);
    if (!r.empty()) problems.push_back(what + ": " + r);
  };
  shape("x empty (0 x 6)", [&] { split_heads(Matrix(0, 6), 3); });
  shape("x empty (2 x 0)", [&] { split_heads(Matrix(2, 0), 3); });
  shape("num_heads = 0", [&] { split_heads(x, 0); });
  shape("num_heads = -1", [&] { split_heads(x, -1); });
  shape("num_heads = -1000000", [&] { split_heads(x, -1000000); });
  shape("E = 6 is not divisible by H = 4", [&] { split_heads(x, 4); });
  shape("E = 6 is not divisible by H = 5", [&] { split_heads(x, 5); });
  shape("E = 6 is not divisible by H = 7 (more heads than columns)", [&] { split_heads(x, 7); });
  shape("E = 6 is not divisible by H = 12", [&] { split_heads(x, 12); });
  CHECK_MESSAGE(problems.empty(), join(problems));
}

// ---- 5.3 concat_heads --------------------------------------------------------------------------------

TEST_CASE("5.3 heads are concatenated in head order") {
  // Three heads (2, 2); head h's entries are 100 h + 10 i + j.
  std::vector<Matrix> heads;
  for (int h = 0; h < 3; ++h) heads.push_back(grid({{100.0 * h, 100.0 * h + 1}, {100.0 * h + 10, 100.0 * h + 11}}));
  const Matrix expected = grid({{0, 1, 100, 101, 200, 201}, {10, 11, 110, 111, 210, 211}});
  const Matrix reversed = grid({{200, 201, 100, 101, 0, 1}, {210, 211, 110, 111, 10, 11}});
  const Matrix interleaved = grid({{0, 100, 200, 1, 101, 201}, {10, 110, 210, 11, 111, 211}});
  const Matrix out = concat_heads(heads);
  CHECK_MESSAGE(identical(out, expected),
                said("concat_heads of three 2 x 2 heads (head h holds 100 h + 10 i + j) must give [[0, 1, 100, 101, 200, 201], [10, 11, 110, 111, 210, 211]]: head h fills the columns from h * head_dim on", suspect(out, {{kConcatReversed, reversed},
                              {"heads interleaved column by column? Head h must land in a contiguous block", interleaved}})));
}

TEST_CASE("5.3 concatenation undoes a split and keeps every value") {
  Rng rng(531);
  const Matrix x = normal_matrix(5, 12, rng);
  for (Index heads_count : {1, 2, 3, 4, 6, 12}) {
    INFO("H = ", heads_count);
    std::vector<Matrix> heads;  // split by the check itself, so that 5.3 is checked on its own
    const Index hd = 12 / heads_count;
    for (Index h = 0; h < heads_count; ++h) heads.push_back(x.middleCols(h * hd, hd));
    CHECK_MESSAGE(identical(concat_heads(heads), x), "concat_heads of x's heads, split by the check, must give x back");
  }
  Matrix odd = x;
  odd(0, 0) = kNaN;
  odd(4, 11) = kInf;
  CHECK_MESSAGE(identical(concat_heads({odd.leftCols(6), odd.rightCols(6)}), odd), "NaN and inf pass through unchanged");
  CHECK_MESSAGE(identical(concat_heads({x.topRows(1)}), x.topRows(1)), "concat_heads of a single head must return it unchanged");
}

TEST_CASE("5.3 bad input throws ShapeError") {
  const Matrix a = Matrix::Ones(3, 2);
  std::vector<std::string> problems;
  const auto shape = [&](const std::string& what, const std::function<void()>& f) {
    const std::string r = throws<ShapeError>("concat_heads", f);
    if (!r.empty()) problems.push_back(what + ": " + r);
  };
  shape("no heads", [&] { concat_heads({}); });
  shape("one empty head (0 x 2)", [&] { concat_heads({Matrix(0, 2)}); });
  shape("one empty head (3 x 0)", [&] { concat_heads({Matrix(3, 0)}); });
  shape("all heads (0 x 2)", [&] { concat_heads({Matrix(0, 2), Matrix(0, 2)}); });
  shape("all heads (3 x 0)", [&] { concat_heads({Matrix(3, 0), Matrix(3, 0)}); });
  shape("second head empty", [&] { concat_heads({a, Matrix(0, 0)}); });
  shape("second head with more rows", [&] { concat_heads({a, Matrix::Ones(4, 2)}); });
  shape("second head with fewer rows", [&] { concat_heads({a, Matrix::Ones(2, 2)}); });
  shape("second head wider", [&] { concat_heads({a, Matrix::Ones(3, 3)}); });
  shape("second head narrower", [&] { concat_heads({a, Matrix::Ones(3, 1)}); });
  shape("last of three heads narrower", [&] { concat_heads({a, a, Matrix::Ones(3, 1)}); });
  CHECK_MESSAGE(problems.empty(), join(problems));
}

// ---- 5.4 head_attention ------------------------------------------------------------------------------

TEST_CASE("5.4 each head equals PyTorch's head with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      const Matrix heads = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_heads"), RowVector::Zero(12));
      for (Index h = 0; h < 3; ++h) {
        INFO(describe(c, m), ", head ", h);
        const Matrix out = head_attention(c.query, c.key, c.value, p, h, m.causal);
        std::vector<std::pair<const char*, Matrix>> mistakes;
        for (auto [what, slip] : {std::pair{kScaleE, Slip::ScaleE}, {kNoScale, Slip::NoScale}, {kShared, Slip::Shared},
                                  {kBiasMissing, Slip::NoBias}, {kInterleaved, Slip::Interleaved},
                                  {kScoresUnprojected, Slip::ScoresUnprojected}, {kKVSwapped, Slip::KVSwapped},
                                  {kNoMask, Slip::NoMask}, {kAlignmentSwapped, Slip::AlignmentSwapped},
                                  {kMaskTransposed, Slip::MaskTransposed}})
          mistakes.emplace_back(what, head_by_loops(c.query, c.key, c.value, p, h, m.causal, slip));
        // The listing's second einsum: weights times the unprojected value, E wide.
        mistakes.emplace_back(kValueUnprojected, mix_by_loops(head_weights_by_loops(c.query, c.key, p, h, m.causal), c.value));
        mistakes.emplace_back(kValueUnprojected, mix_by_loops(head_weights_by_loops(c.query, c.key, p, h, m.causal, Slip::ScoresUnprojected), c.value));
        CHECK_MESSAGE(near(out, heads.middleCols(4 * h, 4)),
                      said("head_attention's output differs from this head of PyTorch's layer", diagnose(out, mistakes)));
      }
    }
  }
}

TEST_CASE("5.4 the heads compare differently and a head uses only its own rows") {
  Rng rng(541);
  const MultiHeadParams p = random_params(3, 4, rng);
  const Matrix x = normal_matrix(5, 12, rng);
  const Matrix h0 = head_attention(x, x, x, p, 0), h2 = head_attention(x, x, x, p, 2);
  CHECK_MESSAGE(!near(h0, h2, 1e-6), "heads 0 and 2 give the same output: " << kShared);
  // Changing head 1's rows of W_q, W_k and W_v changes head 1 and leaves heads 0 and 2 bit-identical.
  MultiHeadParams changed = p;
  for (int block = 0; block < 3; ++block) changed.in_proj_weight.middleRows(block * 12 + 4, 4) *= -2.0;
  CHECK_MESSAGE(identical(head_attention(x, x, x, changed, 0), h0), "head 0 changed when only head 1's rows did: " << kShared);
  CHECK_MESSAGE(identical(head_attention(x, x, x, changed, 2), h2), "head 2 changed when only head 1's rows did");
  CHECK_MESSAGE(!near(head_attention(x, x, x, changed, 1), head_attention(x, x, x, p, 1), 1e-6),
                "head 1 did not change when its rows of W_q, W_k and W_v did");
  // Large inputs saturate the softmax but must not give NaN.
  const Matrix big = head_attention(1e3 * x, 1e3 * x, x, p, 1, Alignment::TopLeft);
  CHECK_MESSAGE(big.allFinite(), "NaN or inf for inputs near 1e3: subtract the row maximum (masked_softmax does)");
  CHECK_MESSAGE(near(big, head_by_loops(1e3 * x, 1e3 * x, x, p, 1, Alignment::TopLeft), 1e-9), "head_attention on inputs near 1e3 differs from the head computed by plain loops");
}

TEST_CASE("5.4 bad input throws ShapeError or ValueError") {
  const Layer head0 = [](const Matrix& q, const Matrix& k, const Matrix& v, const MultiHeadParams& p, Causal c) {
    return head_attention(q, k, v, p, 0, c);
  };
  std::vector<std::string> problems = layer_bad_input("head_attention", head0);
  Rng rng(542);
  const MultiHeadParams p = random_params(3, 4, rng);
  const Matrix x = normal_matrix(4, 12, rng);
  for (Index head : {3, 4, -1, -1000000}) {
    const std::string r = throws<ShapeError>("head_attention", [&] { head_attention(x, x, x, p, head); });
    if (!r.empty()) problems.push_back("head " + std::to_string(head) + " of 3: " + r);
  }
  CHECK_MESSAGE(problems.empty(), join(problems));
}

// ---- 5.5 multi_head_loop --------------------------------------------------------------------

TEST_CASE("5.5 the loop form equals PyTorch with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      INFO(describe(c, m));
      const Matrix expected = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_output"), p.out_proj_bias.transpose());
      const auto out = run_layer(multi_head_loop, c.query, c.key, c.value, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, expected), said("the layer's output differs from PyTorch's",
                                                         diagnose(*out, layer_mistakes(c.query, c.key, c.value, p, m.causal))));
    }
  }
}

TEST_CASE("5.5 a query that sees no key outputs the out-projection bias where PyTorch gives NaN") {
  // cross_long: 7 queries, 3 keys, bottom-right: queries 0..3 come before every key. PyTorch's
  // softmax of a row of -inf is NaN; chapter 4's policy gives zero weights, so zero head outputs,
  // and the layer's output is 0 W_out^T + b_out = b_out.
  const MultiHeadParams p = fixture_params();
  const Matrix pytorch = fixture("cross_long_bottom_right_output");
  const auto out = run_layer(multi_head_loop, fixture("cross_long_query"), fixture("cross_long_key"),
                             fixture("cross_long_value"), p, Alignment::BottomRight);
  REQUIRE_MESSAGE(out, "multi_head_loop threw on valid input (see above)");
  for (Index i = 0; i < 4; ++i) {
    INFO("query ", i, ": PyTorch gives ", pytorch(i, 0));
    CHECK_MESSAGE(identical(out->row(i), p.out_proj_bias.transpose()),
                  said("a query that sees no key must output exactly out_proj_bias (zero weights, so zero head outputs)",
                       out->row(i).isZero(0.0) ? std::string("looks like a known mistake: ") + kOutBiasMissing : ""));
  }
  CHECK_MESSAGE(near(out->bottomRows(3), pytorch.bottomRows(3)),
                "queries 4 to 6, which see keys, must equal PyTorch's output");
}

TEST_CASE("5.5 the output follows W_q W_k and W_v") {
  // The listing's symptom: its output does not change when the query, key or value projections do.
  Rng rng(551);
  const MultiHeadParams p = random_params(2, 3, rng);  // E = 6
  const Matrix q = normal_matrix(4, 6, rng), kv = normal_matrix(5, 6, rng);
  const auto before = run_layer(multi_head_loop, q, kv, kv, p, std::nullopt);
  REQUIRE_MESSAGE(before, "multi_head_loop threw on valid input (see above)");
  for (int block = 0; block < 3; ++block) {
    const char* names[] = {"W_q", "W_k", "W_v"};
    INFO("only ", names[block], " changed");
    MultiHeadParams changed = p;
    changed.in_proj_weight.middleRows(block * 6, 6) = normal_matrix(6, 6, rng);
    const auto after = run_layer(multi_head_loop, q, kv, kv, changed, std::nullopt);
    REQUIRE_MESSAGE(after, "multi_head_loop threw on valid input (see above)");
    CHECK_MESSAGE(!near(*after, *before, 1e-6),
                  "the output did not change: " << (block < 2 ? kScoresUnprojected : kValueUnprojected));
    CHECK_MESSAGE(near(*after, layer_by_loops(q, kv, kv, changed, std::nullopt)),
                  said("multi_head_loop's output differs from the layer computed by plain loops",
                       diagnose(*after, layer_mistakes(q, kv, kv, changed, std::nullopt))));
  }
}

TEST_CASE("5.5 bad input throws ShapeError or ValueError") {
  const std::vector<std::string> problems = layer_bad_input("multi_head_loop", multi_head_loop);
  CHECK_MESSAGE(problems.empty(), join(problems));
}

// ---- 5.6 multi_head_fused -------------------------------------------------------------------

TEST_CASE("5.6 the fused form equals PyTorch with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      INFO(describe(c, m));
      const Matrix expected = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_output"), p.out_proj_bias.transpose());
      const auto out = run_layer(multi_head_fused, c.query, c.key, c.value, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, expected), said("the layer's output differs from PyTorch's",
                                                         diagnose(*out, layer_mistakes(c.query, c.key, c.value, p, m.causal))));
    }
  }
}

TEST_CASE("5.6 the fused form equals the loop computation for one head and for head_dim one") {
  // H = 1 is ordinary attention with projections; H = E gives every head a single feature
  // (scores divided by sqrt(1)). Both against the plain loops of this file, to 1e-12.
  Rng rng(561);
  for (auto [heads, hd] : {std::pair<Index, Index>{1, 6}, {6, 1}, {4, 4}}) {
    const MultiHeadParams p = random_params(heads, hd, rng);
    const Index e = heads * hd;
    const Matrix q = normal_matrix(3, e, rng), k = normal_matrix(5, e, rng), v = normal_matrix(5, e, rng);
    for (const Mode& m : kModes) {
      INFO("H = ", heads, ", head_dim = ", hd, ", 3 queries, 5 keys, mask ", m.name);
      const auto out = run_layer(multi_head_fused, q, k, v, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, layer_by_loops(q, k, v, p, m.causal)),
                             said("multi_head_fused's output differs from the layer computed by plain loops",
                                  diagnose(*out, layer_mistakes(q, k, v, p, m.causal))));
    }
  }
}

TEST_CASE("5.6 large inputs saturate the softmax without NaN") {
  // Inputs near 1e3 give scores near 1e5: each softmax row is one-hot up to exp(-huge) = 0. The
  // loops compute 1 / sum exp(s_l - s_j), stable for any finite scores; the relative tolerance
  // 1e-9 covers rounding in dot products of 12 terms of size 1e3 (relative error ~1e-15) amplified
  // by the softmax's sensitivity to the score gaps it does not saturate.
  const MultiHeadParams p = fixture_params();
  const Matrix q = 1e3 * fixture("cross_query"), k = 1e3 * fixture("cross_key"), v = fixture("cross_value");
  const auto out = run_layer(multi_head_fused, q, k, v, p, Alignment::BottomRight);
  REQUIRE_MESSAGE(out, "multi_head_fused threw on valid input (see above)");
  CHECK_MESSAGE(out->allFinite(), "NaN or inf: subtract each row's maximum before exp");
  CHECK_MESSAGE(near(*out, layer_by_loops(q, k, v, p, Alignment::BottomRight), 1e-9), "multi_head_fused on inputs near 1e3 differs from the layer computed by plain loops");
}

TEST_CASE("5.6 bad input throws ShapeError or ValueError") {
  const std::vector<std::string> problems = layer_bad_input("multi_head_fused", multi_head_fused);
  CHECK_MESSAGE(problems.empty(), join(problems));
}

}  // TEST_SUITE
