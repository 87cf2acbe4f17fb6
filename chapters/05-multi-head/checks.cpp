// Chapter 5 checks — multi-head attention and concatenation.
//
// Every case is named after its exercise ("5.4 ...") so that progress and grading count per
// exercise. Expected values come from PyTorch's nn.MultiheadAttention (fixtures/*.csv, written by
// tools/maintainer/fixtures/ch05_torch_fixtures.py and compiled in), from examples worked by hand, or from an
// independent implementation in this file written with plain loops — never from the code under
// test, and no check of one exercise calls another exercise. The plain-loop implementation can
// also make each known mistake on purpose: a failure names a mistake only when the output is the
// one that mistake gives on the same input. A layer's output that differs says which heads differ:
// the out-projection is undone (W_out is square and invertible) to see each head's columns.
#include <doctest/doctest.h>

#include <Eigen/LU>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
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
using scalebook::testing::Named;
using scalebook::testing::near;
using scalebook::testing::Parts;
using scalebook::testing::said;
using scalebook::testing::show;
using scalebook::testing::suspect;
using scalebook::testing::Why;

// The layer's parameters as a value: each one's shape and range (inputs print as what they are).
namespace doctest {
template <>
struct StringMaker<MultiHeadParams> {
  static String convert(const MultiHeadParams& p) {
    return ("MultiHeadParams{num_heads " + std::to_string(p.num_heads) + ", in_proj_weight " + show(p.in_proj_weight) +
            ", in_proj_bias " + show(p.in_proj_bias) + ", out_proj_weight " + show(p.out_proj_weight) + ", out_proj_bias " +
            show(p.out_proj_bias) + "}").c_str();
  }
};
}  // namespace doctest

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The known mistakes, each named only when the output is what it gives (ids: bugzoo/).
constexpr Named kScaleE{"scale_by_sqrt_embed_dim", "the scores divided by sqrt(E) instead of sqrt(head_dim): a head compares head_dim-wide vectors"};
constexpr Named kNoScale{"head_no_scaling", "the scores not divided by sqrt(head_dim)"};
constexpr Named kShared{"one_projection_shared", "one projection shared by all heads: every head uses head 0's rows of W_q, W_k, W_v"};
constexpr Named kBiasMissing{"bias_missing", "the bias missing: x W^T without + b"};
constexpr Named kTransposed{"weight_transposed", "the weight layout transposed: x W instead of x W^T (PyTorch stores one output feature per row of weight)"};
constexpr Named kConcatReversed{"concat_reversed", "the heads concatenated in reverse head order: head h must land in columns h * head_dim onwards"};
constexpr Named kConcatInterleaved{"concat_interleaved", "the heads interleaved column by column: head h must land in a contiguous block"};
constexpr Named kInterleaved{"split_interleaved", "the heads split interleaved (head h takes every H-th column, as a reshape to (n, head_dim, H) does): head h owns a contiguous block of columns"};
constexpr Named kSplitReversed{"split_reversed", "the heads split in reverse head order"};
constexpr Named kScoresUnprojected{"listing_scores_unprojected", "the scores from the unprojected query and key (the listing's einsum on target and source): they must compare the head's projections"};
constexpr Named kValueUnprojected{"listing_value_unprojected", "the weights applied to the unprojected value (the listing's second einsum on source)"};
constexpr Named kReassigned{"listing_inputs_reassigned", "the heads after the first project an already-projected input (the listing reassigns query, key and value inside the loop)"};
constexpr Named kKVSwapped{"key_value_blocks_swapped", "the W_k and W_v blocks swapped: in_proj_weight stacks W_q, W_k, W_v in that order"};
constexpr Named kNoMask{"causal_ignored", "the causal mask ignored: every query sees every key"};
constexpr Named kAlignmentSwapped{"alignment_swapped", "top-left and bottom-right alignment swapped"};
constexpr Named kMaskTransposed{"mask_transposed", "the causal mask transposed (query i sees keys j >= i, the future): causal_mask takes (n_q, n_k), rows are queries"};
constexpr Named kOutBiasMissing{"output_bias_missing", "the output projection's bias left out: concat W_out^T without + b_out"};
constexpr Named kParamsUnchecked{"params_unchecked", "the parameters not checked first: the error comes from a function inside, without the layer's name"};
constexpr Named kNoDivisibility{"split_without_divisibility_check", "split_heads does not check that H divides E: integer division silently drops the last columns"};

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

// The layer's known mistakes, for suspect(): each computed by the loops above; a mistake whose
// output is the right one on this input proves nothing and is left out.
std::vector<Mistake> layer_mistakes(const Matrix& query, const Matrix& key, const Matrix& value, const MultiHeadParams& p,
                                    Causal causal) {
  std::vector<Mistake> m;
  const Matrix right = layer_by_loops(query, key, value, p, causal);
  const auto add = [&](const Named& what, Slip slip) {
    Matrix out = layer_by_loops(query, key, value, p, causal, slip);
    if (!near(out, right, 1e-12)) m.push_back({what, out});
  };
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
  if (p.num_heads == 1) {  // the listing's second einsum fits only when head_dim = E
    Matrix concat = mix_by_loops(head_weights_by_loops(query, key, p, 0, causal), value);
    Matrix out(query.rows(), p.embed_dim());
    for (Index i = 0; i < out.rows(); ++i)
      for (Index r = 0; r < out.cols(); ++r) out(i, r) = p.out_proj_bias(r) + concat.row(i).dot(p.out_proj_weight.row(r));
    if (!near(out, right, 1e-12)) m.push_back({kValueUnprojected, out});
  }
  return m;
}

// The head outputs side by side that a layer's OUTPUT implies: (out - b_out) (W_out^T)^-1. W_out
// is square; when it is invertible, the heads' columns of a wrong output show which heads differ.
std::optional<Matrix> implied_heads(const Matrix& out, const MultiHeadParams& p) {
  const Matrix w = p.out_proj_weight.transpose();
  const Eigen::FullPivLU<Matrix> lu(w);
  if (!lu.isInvertible() || out.cols() != w.rows()) return std::nullopt;
  Matrix centred = out;
  centred.rowwise() -= p.out_proj_bias.transpose();
  return Matrix(centred * lu.inverse());
}

// Where a layer's output differs, head by head: the implied head outputs against the loops'.
std::string heads_report(const Matrix& out, const Matrix& query, const Matrix& key, const Matrix& value,
                         const MultiHeadParams& p, Causal causal) {
  const std::optional<Matrix> implied = implied_heads(out, p);
  if (!implied || out.rows() != query.rows()) return "";
  const Matrix expected = heads_by_loops(query, key, value, p, causal);
  const testing::MatrixMatch heads = near(*implied, expected, 1e-9, Parts{"query", 1, "head", p.head_dim()});
  if (heads) return "every head's columns agree once the out-projection is undone: the out-projection itself (x W_out^T + b_out)";
  const std::string report = heads.report.substr(0, heads.report.find('\n'));
  return "with the out-projection undone, the heads' outputs " + report.substr(report.find("largest")) +
         ": a single head that differs points at its own rows of in_proj_weight or its place in the concatenation; "
         "every head differing, at what they share (the scaling, the mask, a whole projection block)";
}

// The named mistakes whose output, on the same input, is ACTUAL.
std::string diagnose(const Matrix& actual, const std::vector<Mistake>& mistakes) { return suspect(actual, mistakes, 1e-9); }

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

// "" when F throws exactly an E whose message starts with "FUNCTION: "; otherwise the report of
// testing::throws_typed (the call and its input in WHAT, what happened, the rule, a mistake named
// on evidence).
template <class E>
std::string throws(const std::string& function, const std::string& what, const std::function<void()>& f, const Why& why) {
  const testing::ThrowMatch thrown = testing::throws_typed(
      f, [](const std::exception& e) { return typeid(e) == typeid(E); }, testing::type_name(typeid(E)), function,
      [&] { return function + " on " + what; }, why);
  return thrown ? "" : thrown.report;
}

// A ShapeError on valid input: named when its message shows the shapes that mistake hands to
// linear (the listing's reassigned inputs: a head's projection, (n, head_dim), projected again by
// rows of width E; its unprojected value: the concatenation (n_q, H E) into the out-projection).
std::string explain_shape_error(const std::string& what, Index n_q, Index n_k, Index e, Index heads) {
  const Index hd = e / heads;
  const auto has = [&](Index r, Index c) { return what.find("(" + std::to_string(r) + ", " + std::to_string(c) + ")") != std::string::npos; };
  const std::vector<Mistake> none;
  std::string named;
  if (heads > 1 && has(n_q, heads * e) && has(e, e))
    named = testing::suspect_exact(true, {{kValueUnprojected, true}});
  else if (heads > 1 && hd != e && (has(n_q, hd) || has(n_k, hd)) && has(hd, e))
    named = testing::suspect_exact(true, {{kReassigned, true}});
  return said("threw ShapeError on valid input: \"" + testing::submitted(what) + "\"", named);
}

using Layer = std::function<Matrix(const Matrix&, const Matrix&, const Matrix&, const MultiHeadParams&, Causal)>;

// The layer on valid input: its output, or (on a ShapeError) nothing and a failed check that says why.
std::optional<Matrix> run_layer(const std::string& function, const Layer& layer, const Matrix& query, const Matrix& key,
                                const Matrix& value, const MultiHeadParams& p, Causal causal) {
  try {
    return layer(query, key, value, p, causal);
  } catch (const ShapeError& e) {
    CHECK_MESSAGE(false, function << " "
                                  << explain_shape_error(e.what(), query.rows(), key.rows(), p.embed_dim(), p.num_heads));
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

// Whether F threw E with the function's own message ("function: ..."), the contract's error.
template <class E, class F>
bool own_error(const std::string& function, F&& f) {
  return testing::starts_with(testing::thrown_message<E>(std::forward<F>(f)), function + ": ");
}

// Bad input for any of the three layer functions (head_attention for head 0): every way the
// contract lists, each dimension empty on its own, mismatches larger and smaller. An error from a
// function inside (or Eigen) while the layer's own name is expected is what skipping
// require_params gives, when the layer checks its inputs itself.
struct BadInputs {
  std::vector<std::string> problems;  // the reports of the inputs that did not get the contract's exception
  std::size_t tried = 0;
};

BadInputs layer_bad_input(const std::string& function, const Layer& layer) {
  Rng rng(550);
  const MultiHeadParams good = random_params(3, 4, rng);  // E = 12
  const Matrix q = normal_matrix(4, 12, rng), k = normal_matrix(6, 12, rng), v = normal_matrix(6, 12, rng);
  const std::string inputs = "query (4, 12), key (6, 12), value (6, 12) of N(0, 1), Rng(550)";
  const bool checks_inputs = own_error<ShapeError>(function, [&] { layer(Matrix(0, 12), k, v, good, std::nullopt); });
  const Why params_rule("the parameters must describe a layer (H >= 1 dividing E, (3E, E), (3E), (E, E), (E), finite)",
                        std::nullopt, checks_inputs ? std::optional<Named>(kParamsUnchecked) : std::nullopt);
  BadInputs result;
  const auto shape = [&](const std::string& what, const std::function<void()>& f, const Why& why) {
    ++result.tried;
    const std::string r = throws<ShapeError>(function, "input: " + what + "; " + inputs, f, why);
    if (!r.empty()) result.problems.push_back(r);
  };
  const auto value_error = [&](const std::string& what, const std::function<void()>& f, const Why& why) {
    ++result.tried;
    const std::string r = throws<ValueError>(function, "input: " + what + "; " + inputs, f, why);
    if (!r.empty()) result.problems.push_back(r);
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
          [&] { layer(q, k, v, p, std::nullopt); }, params_rule);
  }
  // Parameter shapes, larger and smaller.
  for (Index rows : {35, 37}) shape("in_proj_weight with " + std::to_string(rows) + " rows", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix::Ones(rows, 12); }), std::nullopt); }, params_rule);
  for (Index cols : {11, 13}) shape("in_proj_weight with " + std::to_string(cols) + " columns", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix::Ones(36, cols); }), std::nullopt); }, params_rule);
  shape("in_proj_weight (12, 36), the (36, 12) transposed", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix::Ones(12, 36); }), std::nullopt); }, params_rule);
  shape("in_proj_weight empty (0 x 12)", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight = Matrix(0, 12); }), std::nullopt); }, params_rule);
  for (Index size : {35, 37}) shape("in_proj_bias of length " + std::to_string(size), [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_bias = Vector::Ones(size); }), std::nullopt); }, params_rule);
  for (Index cols : {11, 13}) shape("out_proj_weight with " + std::to_string(cols) + " columns", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight = Matrix::Ones(12, cols); }), std::nullopt); }, params_rule);
  for (Index size : {11, 13}) shape("out_proj_bias of length " + std::to_string(size), [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_bias = Vector::Ones(size); }), std::nullopt); }, params_rule);
  shape("out_proj_weight empty (0 x 0): E = 0", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight = Matrix(0, 0); }), std::nullopt); }, params_rule);
  // Inputs: each dimension empty on its own, widths larger and smaller, key and value lengths.
  const Why input_rule("query, key and value must be non-empty, E wide, key and value of one length");
  shape("query empty (0 x 12)", [&] { layer(Matrix(0, 12), k, v, good, std::nullopt); }, input_rule);
  shape("query empty (4 x 0)", [&] { layer(Matrix(4, 0), k, v, good, std::nullopt); }, input_rule);
  shape("key and value empty (0 x 12)", [&] { layer(q, Matrix(0, 12), Matrix(0, 12), good, std::nullopt); }, input_rule);
  shape("key empty (6 x 0)", [&] { layer(q, Matrix(6, 0), v, good, std::nullopt); }, input_rule);
  shape("value empty (6 x 0)", [&] { layer(q, k, Matrix(6, 0), good, std::nullopt); }, input_rule);
  for (Index cols : {11, 13}) {
    shape("query of width " + std::to_string(cols), [&] { layer(normal_matrix(4, cols, rng), k, v, good, std::nullopt); }, input_rule);
    shape("key of width " + std::to_string(cols), [&] { layer(q, normal_matrix(6, cols, rng), v, good, std::nullopt); }, input_rule);
    shape("value of width " + std::to_string(cols), [&] { layer(q, k, normal_matrix(6, cols, rng), good, std::nullopt); }, input_rule);
  }
  for (Index rows : {5, 7}) shape("value with " + std::to_string(rows) + " rows for 6 keys", [&] { layer(q, k, normal_matrix(rows, 12, rng), good, std::nullopt); }, input_rule);
  // NaN and infinities in inputs and parameters.
  const Why finite_rule("NaN or infinity in an input or a parameter must throw ValueError");
  const Why finite_param("NaN or infinity in an input or a parameter must throw ValueError", std::nullopt,
                         checks_inputs ? std::optional<Named>(kParamsUnchecked) : std::nullopt);
  for (double bad : {kNaN, kInf, -kInf}) {
    const std::string b = testing::format_number(bad);
    Matrix bq = q, bk = k, bv = v;
    bq(3, 11) = bad;
    bk(0, 0) = bad;
    bv(5, 2) = bad;
    value_error(b + " in query at (3, 11)", [&] { layer(bq, k, v, good, std::nullopt); }, finite_rule);
    value_error(b + " in key at (0, 0), causal top-left", [&] { layer(q, bk, v, good, Alignment::TopLeft); }, finite_rule);
    value_error(b + " in value at (5, 2)", [&] { layer(q, k, bv, good, std::nullopt); }, finite_rule);
    value_error(b + " in in_proj_weight at (35, 0)", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_weight(35, 0) = bad; }), std::nullopt); }, finite_param);
    value_error(b + " in in_proj_bias at 20", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.in_proj_bias(20) = bad; }), std::nullopt); }, finite_param);
    value_error(b + " in out_proj_weight at (0, 11)", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_weight(0, 11) = bad; }), std::nullopt); }, finite_param);
    value_error(b + " in out_proj_bias at 11", [&] { layer(q, k, v, with([&](MultiHeadParams& x) { x.out_proj_bias(11) = bad; }), std::nullopt); }, finite_param);
  }
  return result;
}

// "2 of 40 bad inputs were let through: ..." for a list of throw checks' reports.
std::string join(const std::string& function, const std::vector<std::string>& lines, std::size_t tried) {
  std::string out = std::to_string(lines.size()) + " of the " + std::to_string(tried) + " bad inputs tried on " + function +
                    " did not get the contract's exception:";
  for (const auto& line : lines) out += "\n  " + line;
  return out;
}

// What a head's output differing by rows usually means: the queries whose mask hides some key.
std::string rows_note(const Matrix& out, const Matrix& expected, Index n_k, Causal causal) {
  if (!causal || out.rows() != expected.rows() || out.cols() != expected.cols()) return "";
  const Index offset = *causal == Alignment::BottomRight ? n_k - out.rows() : 0;
  bool masked_rows_only = true, any = false;
  for (Index i = 0; i < out.rows(); ++i) {
    const bool differs = !near(Matrix(out.row(i)), Matrix(expected.row(i)), 1e-12);
    const bool sees_all = i + offset >= n_k - 1;
    any = any || differs;
    if (differs && sees_all) masked_rows_only = false;
  }
  return any && masked_rows_only ? ": only queries whose mask hides some key differ, so the mask (or its alignment) is where to look" : "";
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
  INPUTS(x, w, b);
  const Matrix expected = grid({{11, 24}, {13, 25}});
  const Matrix y = linear(x, w, b);
  CHECK_MESSAGE(near(y, expected, 0.0),
                said("linear(x = [[1, 2], [3, -1]], W = [[1, 0], [2, 1]], b = (10, 20)) must give [[11, 24], [13, 25]]: output "
                     "feature r is a row of x dotted with row r of W, plus b(r)",
                     suspect(y, {{kTransposed, grid({{15, 22}, {11, 19}})},   // x W + b
                                 {kBiasMissing, grid({{1, 4}, {3, 5}})}})));  // x W^T
}

TEST_CASE("5.1 a non-square projection equals its formula") {
  // in = 7 features to out = 3, as a head's slice (head_dim, E) of in_proj_weight is.
  Rng rng(511);
  const Matrix x = normal_matrix(5, 7, rng), w = normal_matrix(3, 7, rng);
  const Vector b = normal_matrix(3, 1, rng).col(0);
  INFO("x (5, 7), weight (3, 7) and bias (3) drawn from N(0, 1) with Rng(511), in that order");
  INPUTS(x, w, b);
  Matrix expected(5, 3);
  for (Index i = 0; i < 5; ++i)
    for (Index r = 0; r < 3; ++r) {
      double sum = b(r);
      for (Index j = 0; j < 7; ++j) sum += x(i, j) * w(r, j);
      expected(i, r) = sum;
    }
  const Matrix y = linear(x, w, b);
  CHECK_MESSAGE(near(y, expected, 1e-12, Parts{"row of x", 1, "output feature", 1}),
                said("linear of 5 rows of 7 features to 3 outputs differs from y(i, r) = b(r) + sum over j of x(i, j) W(r, j), "
                     "with W of shape (out, in) = (3, 7)",
                     suspect(y, {{kBiasMissing, Matrix(expected.rowwise() - b.transpose())}})));
  // Large magnitudes: nothing special, but nothing may overflow either.
  const Matrix big_x = 1e150 * x;
  INPUTS(big_x);
  const Matrix big = linear(big_x, w, b);
  CHECK_MESSAGE(near(big, Matrix(1e150 * (expected.rowwise() - b.transpose())), 1e-12),
                "linear of inputs near 1e150 must give 1e150 x W^T (+ b, which is lost in rounding)");
}

TEST_CASE("5.1 bad input throws ShapeError or ValueError") {
  const Matrix x = Matrix::Ones(4, 3), w = Matrix::Ones(2, 3);
  const Vector b = Vector::Ones(2);
  constexpr char kFit[] = "x's columns must equal weight's columns (in) and bias must have one entry per row of weight (out)";
  CHECK_THROWS_CALL(ShapeError, kFit, linear, Matrix(0, 3), w, b);
  CHECK_THROWS_CALL(ShapeError, kFit, linear, Matrix(4, 0), Matrix(2, 0), b);
  CHECK_THROWS_CALL(ShapeError, kFit, linear, x, Matrix(0, 3), Vector(0));
  CHECK_THROWS_CALL(ShapeError, kFit, linear, Matrix(Matrix::Ones(4, 2)), w, b);
  CHECK_THROWS_CALL(ShapeError, kFit, linear, Matrix(Matrix::Ones(4, 4)), w, b);
  // weight (3, 2) is the (2, 3) transposed, same size: only x W (Keras's layout) would fit it.
  CHECK_THROWS_CALL(ShapeError, kFit, linear, x, Matrix(Matrix::Ones(3, 2)), Vector(Vector::Ones(3)));
  CHECK_THROWS_CALL(ShapeError, kFit, linear, x, w, Vector(Vector::Ones(1)));
  CHECK_THROWS_CALL(ShapeError, kFit, linear, x, w, Vector(Vector::Ones(3)));
  CHECK_THROWS_CALL(ShapeError, kFit, linear, x, w, Vector(0));
  for (double bad : {kNaN, kInf, -kInf}) {
    Matrix bx = x, bw = w;
    Vector bb = b;
    bx(3, 2) = bad;
    bw(0, 1) = bad;
    bb(1) = bad;
    CHECK_THROWS_CALL(ValueError, "NaN or infinity in x, weight or bias must throw ValueError", linear, bx, w, b);
    CHECK_THROWS_CALL(ValueError, "NaN or infinity in x, weight or bias must throw ValueError", linear, x, bw, b);
    CHECK_THROWS_CALL(ValueError, "NaN or infinity in x, weight or bias must throw ValueError", linear, x, w, bb);
  }
}

// ---- 5.2 split_heads ---------------------------------------------------------------------------------

TEST_CASE("5.2 head h gets the contiguous block of columns h times head_dim onwards") {
  // x(i, j) = 10 i + j: every entry says where it came from. E = 6, H = 3, head_dim = 2.
  Matrix x(2, 6);
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 6; ++j) x(i, j) = 10.0 * i + j;
  INPUTS(x, 3);
  const std::vector<Matrix> heads = split_heads(x, 3);
  REQUIRE_MESSAGE(heads.size() == 3, "split_heads(x, 3) must return 3 heads, got " << heads.size());
  bool shapes_ok = true;
  for (const Matrix& h : heads) shapes_ok = shapes_ok && h.rows() == 2 && h.cols() == 2;
  REQUIRE_MESSAGE(shapes_ok, "split_heads(x, 3) of a (2, 6) x: each head must be (n, E / H) = (2, 2), got " << show(heads));
  // The heads side by side, compared with x: the layout names the mistake.
  Matrix side_by_side(2, 6);
  for (Index h = 0; h < 3; ++h) side_by_side.middleCols(2 * h, 2) = heads[static_cast<std::size_t>(h)];
  const Matrix interleaved = grid({{0, 3, 1, 4, 2, 5}, {10, 13, 11, 14, 12, 15}});
  const Matrix reversed = grid({{4, 5, 2, 3, 0, 1}, {14, 15, 12, 13, 10, 11}});
  CHECK_MESSAGE(identical(side_by_side, x, Parts{nullptr, 0, "head", 2}),
                said("split_heads(x, 3) of a 2 x 6 x holding 10 i + j, its heads put side by side, must give x back: head h is "
                     "columns 2 h and 2 h + 1 of x (the block from h * head_dim on), heads in order",
                     suspect(side_by_side, {{kInterleaved, interleaved}, {kSplitReversed, reversed}})));
}

TEST_CASE("5.2 one head is x itself and E heads are single columns") {
  Rng rng(521);
  const Matrix x = normal_matrix(4, 6, rng);
  INFO("x (4, 6) drawn from N(0, 1) with Rng(521)");
  INPUTS(x);
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
  INPUTS(odd);
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
  // A head count that does not divide E let through while 0 and negative ones are caught is what
  // leaving out the divisibility check gives.
  const bool checks_count = own_error<ShapeError>("split_heads", [&] { split_heads(x, 0); });
  const Why divides("H must divide E (every head gets E / H columns)", checks_count ? std::optional<Named>(kNoDivisibility) : std::nullopt);
  CHECK_THROWS_CALL(ShapeError, "x must not be empty", split_heads, Matrix(0, 6), 3);
  CHECK_THROWS_CALL(ShapeError, "x must not be empty", split_heads, Matrix(2, 0), 3);
  for (Index bad : {0, -1, -1000000}) CHECK_THROWS_CALL(ShapeError, "num_heads must be at least 1", split_heads, x, bad);
  for (Index h : {4, 5, 7, 12}) CHECK_THROWS_CALL(ShapeError, divides, split_heads, x, h);
}

// ---- 5.3 concat_heads --------------------------------------------------------------------------------

TEST_CASE("5.3 heads are concatenated in head order") {
  // Three heads (2, 2); head h's entries are 100 h + 10 i + j.
  std::vector<Matrix> heads;
  for (int h = 0; h < 3; ++h) heads.push_back(grid({{100.0 * h, 100.0 * h + 1}, {100.0 * h + 10, 100.0 * h + 11}}));
  INPUTS(heads);
  const Matrix expected = grid({{0, 1, 100, 101, 200, 201}, {10, 11, 110, 111, 210, 211}});
  const Matrix reversed = grid({{200, 201, 100, 101, 0, 1}, {210, 211, 110, 111, 10, 11}});
  const Matrix interleaved = grid({{0, 100, 200, 1, 101, 201}, {10, 110, 210, 11, 111, 211}});
  const Matrix out = concat_heads(heads);
  CHECK_MESSAGE(identical(out, expected, Parts{nullptr, 0, "head", 2}),
                said("concat_heads of three 2 x 2 heads (head h holds 100 h + 10 i + j) must give [[0, 1, 100, 101, 200, 201], "
                     "[10, 11, 110, 111, 210, 211]]: head h fills the columns from h * head_dim on",
                     suspect(out, {{kConcatReversed, reversed}, {kConcatInterleaved, interleaved}})));
}

TEST_CASE("5.3 concatenation undoes a split and keeps every value") {
  Rng rng(531);
  const Matrix x = normal_matrix(5, 12, rng);
  INFO("x (5, 12) drawn from N(0, 1) with Rng(531), split by the check itself");
  for (Index heads_count : {1, 2, 3, 4, 6, 12}) {
    std::vector<Matrix> heads;  // split by the check itself, so that 5.3 is checked on its own
    const Index hd = 12 / heads_count;
    for (Index h = 0; h < heads_count; ++h) heads.push_back(x.middleCols(h * hd, hd));
    INPUTS(heads_count, heads);
    CHECK_MESSAGE(identical(concat_heads(heads), x, Parts{nullptr, 0, "head", hd}),
                  "concat_heads of x's " << heads_count << " heads, split by the check, must give x back");
  }
  Matrix odd = x;
  odd(0, 0) = kNaN;
  odd(4, 11) = kInf;
  const std::vector<Matrix> halves = {odd.leftCols(6), odd.rightCols(6)};
  INPUTS(halves);
  CHECK_MESSAGE(identical(concat_heads(halves), odd), "concat_heads must pass NaN and inf through unchanged");
  const std::vector<Matrix> single = {x.topRows(1)};
  INPUTS(single);
  CHECK_MESSAGE(identical(concat_heads(single), x.topRows(1)), "concat_heads of a single head must return it unchanged");
}

TEST_CASE("5.3 bad input throws ShapeError") {
  const Matrix a = Matrix::Ones(3, 2);
  constexpr char kSame[] = "there must be at least one head, none empty, all of one shape";
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{Matrix(0, 2)});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{Matrix(3, 0)});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{Matrix(0, 2), Matrix(0, 2)});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{Matrix(3, 0), Matrix(3, 0)});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(0, 0)});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(Matrix::Ones(4, 2))});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(Matrix::Ones(2, 2))});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(Matrix::Ones(3, 3))});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(Matrix::Ones(3, 1))});
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, a, Matrix(Matrix::Ones(3, 1))});
  // The second head (2, 3) has the first's number of entries (6) in another shape.
  CHECK_THROWS_CALL(ShapeError, kSame, concat_heads, std::vector<Matrix>{a, Matrix(Matrix::Ones(2, 3))});
}

// ---- 5.4 head_attention ------------------------------------------------------------------------------

TEST_CASE("5.4 each head equals PyTorch's head with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      const Matrix heads = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_heads"), RowVector::Zero(12));
      for (Index h = 0; h < 3; ++h) {
        INFO(describe(c, m), ", head ", h);
        INPUTS(c.query, c.key, c.value, h);
        const Matrix out = head_attention(c.query, c.key, c.value, p, h, m.causal);
        std::vector<Mistake> mistakes;
        const Matrix right = head_by_loops(c.query, c.key, c.value, p, h, m.causal);
        for (auto [what, slip] : {std::pair{kScaleE, Slip::ScaleE}, {kNoScale, Slip::NoScale}, {kShared, Slip::Shared},
                                  {kBiasMissing, Slip::NoBias}, {kInterleaved, Slip::Interleaved},
                                  {kScoresUnprojected, Slip::ScoresUnprojected}, {kKVSwapped, Slip::KVSwapped},
                                  {kNoMask, Slip::NoMask}, {kAlignmentSwapped, Slip::AlignmentSwapped},
                                  {kMaskTransposed, Slip::MaskTransposed}}) {
          const Matrix wrong = head_by_loops(c.query, c.key, c.value, p, h, m.causal, slip);
          if (!near(wrong, right, 1e-12)) mistakes.push_back({what, wrong});
        }
        // The listing's second einsum: weights times the unprojected value, E wide.
        mistakes.push_back({kValueUnprojected, mix_by_loops(head_weights_by_loops(c.query, c.key, p, h, m.causal), c.value)});
        const Matrix expected = heads.middleCols(4 * h, 4);
        CHECK_MESSAGE(near(out, expected, 1e-12, Parts{"query", 1, "feature", 1}),
                      said("head_attention's output for head " + std::to_string(h) + " differs from PyTorch's head " +
                               std::to_string(h) + rows_note(out, expected, c.key.rows(), m.causal),
                           diagnose(out, mistakes)));
      }
    }
  }
}

TEST_CASE("5.4 the heads compare differently and a head uses only its own rows") {
  Rng rng(541);
  const MultiHeadParams p = random_params(3, 4, rng);
  const Matrix x = normal_matrix(5, 12, rng);
  INFO("a layer with H = 3, head_dim = 4 and x (5, 12), all drawn from N(0, 1) with Rng(541); query = key = value = x");
  INPUTS(x, p);
  const Matrix h0 = head_attention(x, x, x, p, 0), h2 = head_attention(x, x, x, p, 2);
  CHECK_MESSAGE(!near(h0, h2, 1e-6),
                said("head_attention gave heads 0 and 2 the same output: each head projects with its own rows of in_proj_weight",
                     suspect(h2, {{kShared, head_by_loops(x, x, x, p, 2, std::nullopt, Slip::Shared)}})));
  // Changing head 1's rows of W_q, W_k and W_v changes head 1 and leaves heads 0 and 2 bit-identical.
  MultiHeadParams changed = p;
  for (int block = 0; block < 3; ++block) changed.in_proj_weight.middleRows(block * 12 + 4, 4) *= -2.0;
  const Matrix changed0 = head_attention(x, x, x, changed, 0);
  CHECK_MESSAGE(identical(changed0, h0), "head_attention's head 0 changed when only head 1's rows of W_q, W_k and W_v did");
  CHECK_MESSAGE(identical(head_attention(x, x, x, changed, 2), h2), "head_attention's head 2 changed when only head 1's rows did");
  CHECK_MESSAGE(!near(head_attention(x, x, x, changed, 1), head_attention(x, x, x, p, 1), 1e-6),
                said("head_attention's head 1 did not change when its rows of W_q, W_k and W_v did",
                     suspect(head_attention(x, x, x, changed, 1), {{kShared, head_by_loops(x, x, x, changed, 1, std::nullopt, Slip::Shared)}})));
  // Large inputs saturate the softmax but must not give NaN.
  const Matrix big_x = 1e3 * x;
  INPUTS(big_x);
  const Matrix big = head_attention(big_x, big_x, x, p, 1, Alignment::TopLeft);
  CHECK_MESSAGE(near(big, head_by_loops(big_x, big_x, x, p, 1, Alignment::TopLeft), 1e-9),
                "head_attention of head 1 on query = key = 1e3 x, value = x, causal top-left, differs from the head by plain "
                "loops: subtract each row's maximum (masked_softmax does), no NaN");
}

TEST_CASE("5.4 bad input throws ShapeError or ValueError") {
  const Layer head0 = [](const Matrix& q, const Matrix& k, const Matrix& v, const MultiHeadParams& p, Causal c) {
    return head_attention(q, k, v, p, 0, c);
  };
  BadInputs bad = layer_bad_input("head_attention", head0);
  Rng rng(542);
  const MultiHeadParams p = random_params(3, 4, rng);
  const Matrix x = normal_matrix(4, 12, rng);
  for (Index head : {3, 4, -1, -1000000}) {
    const std::string r = throws<ShapeError>("head_attention", "input: head " + std::to_string(head) + " of 3; x (4, 12)",
                                             [&] { head_attention(x, x, x, p, head); }, Why("head must be in 0 .. H - 1"));
    ++bad.tried;
    if (!r.empty()) bad.problems.push_back(r);
  }
  CHECK_MESSAGE(bad.problems.empty(), join("head_attention", bad.problems, bad.tried));
}

// ---- 5.5 multi_head_loop --------------------------------------------------------------------

TEST_CASE("5.5 the loop form equals PyTorch with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      INFO(describe(c, m));
      INPUTS(c.query, c.key, c.value);
      const Matrix expected = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_output"), p.out_proj_bias.transpose());
      const auto out = run_layer("multi_head_loop", multi_head_loop, c.query, c.key, c.value, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, expected), said("multi_head_loop's output differs from PyTorch's: " +
                                                          heads_report(*out, c.query, c.key, c.value, p, m.causal),
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
  const Matrix query = fixture("cross_long_query"), key = fixture("cross_long_key"), value = fixture("cross_long_value");
  INFO("fixture cross_long (n_q = 7, n_k = 3), mask bottom_right (PyTorch nn.MultiheadAttention, E = 12, H = 3)");
  INPUTS(query, key, value);
  const auto out = run_layer("multi_head_loop", multi_head_loop, query, key, value, p, Alignment::BottomRight);
  REQUIRE_MESSAGE(out, "multi_head_loop threw on valid input (see above)");
  const std::vector<Mistake> mistakes = layer_mistakes(query, key, value, p, Alignment::BottomRight);
  for (Index i = 0; i < 4; ++i) {
    INFO("query ", i, ": PyTorch gives ", testing::format_number(pytorch(i, 0)));
    CHECK_MESSAGE(identical(out->row(i), p.out_proj_bias.transpose()),
                  said("multi_head_loop's output for query " + std::to_string(i) + ", which sees no key, must be exactly "
                       "out_proj_bias (zero weights, so zero head outputs)",
                       diagnose(*out, mistakes)));
  }
  CHECK_MESSAGE(near(out->bottomRows(3), pytorch.bottomRows(3)),
                said("multi_head_loop's outputs for queries 4 to 6, which see keys, must equal PyTorch's", diagnose(*out, mistakes)));
}

TEST_CASE("5.5 the output follows W_q W_k and W_v") {
  // The listing's symptom: its output does not change when the query, key or value projections do.
  Rng rng(551);
  for (Index heads : {2, 1}) {
    const MultiHeadParams p = random_params(heads, 6 / heads, rng);  // E = 6
    const Matrix q = normal_matrix(4, 6, rng), kv = normal_matrix(5, 6, rng);
    INFO("a layer with E = 6, H = ", heads, ", query (4, 6), key = value (5, 6), all drawn from N(0, 1) with Rng(551)");
    INPUTS(q, kv, p);
    const auto before = run_layer("multi_head_loop", multi_head_loop, q, kv, kv, p, std::nullopt);
    REQUIRE_MESSAGE(before, "multi_head_loop threw on valid input (see above)");
    for (int block = 0; block < 3; ++block) {
      const char* names[] = {"W_q", "W_k", "W_v"};
      INFO("only ", names[block], " changed");
      MultiHeadParams changed = p;
      changed.in_proj_weight.middleRows(block * 6, 6) = normal_matrix(6, 6, rng);
      const auto after = run_layer("multi_head_loop", multi_head_loop, q, kv, kv, changed, std::nullopt);
      REQUIRE_MESSAGE(after, "multi_head_loop threw on valid input (see above)");
      const std::vector<Mistake> mistakes = layer_mistakes(q, kv, kv, changed, std::nullopt);
      CHECK_MESSAGE(!near(*after, *before, 1e-6),
                    said("multi_head_loop's output did not change when " + std::string(names[block]) + " did: the " +
                             (block < 2 ? "scores must compare the projected query and key" : "weights must mix the projected values"),
                         diagnose(*after, mistakes)));
      CHECK_MESSAGE(near(*after, layer_by_loops(q, kv, kv, changed, std::nullopt)),
                    said("multi_head_loop's output differs from the layer computed by plain loops: " +
                             heads_report(*after, q, kv, kv, changed, std::nullopt),
                         diagnose(*after, mistakes)));
    }
  }
}

TEST_CASE("5.5 bad input throws ShapeError or ValueError") {
  const BadInputs bad = layer_bad_input("multi_head_loop", multi_head_loop);
  CHECK_MESSAGE(bad.problems.empty(), join("multi_head_loop", bad.problems, bad.tried));
}

// ---- 5.6 multi_head_fused -------------------------------------------------------------------

TEST_CASE("5.6 the fused form equals PyTorch with and without causal masks") {
  const MultiHeadParams p = fixture_params();
  for (const Case& c : fixture_cases()) {
    for (const Mode& m : kModes) {
      INFO(describe(c, m));
      INPUTS(c.query, c.key, c.value);
      const Matrix expected = with_policy_rows(fixture(std::string(c.name) + "_" + m.name + "_output"), p.out_proj_bias.transpose());
      const auto out = run_layer("multi_head_fused", multi_head_fused, c.query, c.key, c.value, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, expected), said("multi_head_fused's output differs from PyTorch's: " +
                                                          heads_report(*out, c.query, c.key, c.value, p, m.causal),
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
      INFO("H = ", heads, ", head_dim = ", hd, ", 3 queries, 5 keys, mask ", m.name, ", all drawn from N(0, 1) with Rng(561)");
      INPUTS(q, k, v, p);
      const auto out = run_layer("multi_head_fused", multi_head_fused, q, k, v, p, m.causal);
      if (out) CHECK_MESSAGE(near(*out, layer_by_loops(q, k, v, p, m.causal)),
                             said("multi_head_fused's output differs from the layer computed by plain loops: " +
                                      heads_report(*out, q, k, v, p, m.causal),
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
  INFO("fixture cross: query and key multiplied by 1e3, mask bottom_right");
  INPUTS(q, k, v);
  const auto out = run_layer("multi_head_fused", multi_head_fused, q, k, v, p, Alignment::BottomRight);
  REQUIRE_MESSAGE(out, "multi_head_fused threw on valid input (see above)");
  CHECK_MESSAGE(near(*out, layer_by_loops(q, k, v, p, Alignment::BottomRight), 1e-9),
                said("multi_head_fused on inputs near 1e3 differs from the layer computed by plain loops (no NaN, each row's "
                     "maximum subtracted): " + heads_report(*out, q, k, v, p, Alignment::BottomRight),
                     diagnose(*out, layer_mistakes(q, k, v, p, Alignment::BottomRight))));
}

TEST_CASE("5.6 bad input throws ShapeError or ValueError") {
  const BadInputs bad = layer_bad_input("multi_head_fused", multi_head_fused);
  CHECK_MESSAGE(bad.problems.empty(), join("multi_head_fused", bad.problems, bad.tried));
}

}  // TEST_SUITE
