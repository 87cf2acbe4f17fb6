// scalebook/testing.hpp — helpers for the doctest checks: comparisons whose failure message says
// where the output differs, a named mistake only on evidence, and every input shown.
//
//   INPUTS(q, k);                                                    // the call's inputs, shown on any failure or crash
//   CHECK_MESSAGE(near(actual, expected), "f(x) on ... is wrong");   // largest difference, which rows and columns differ
//   CHECK_MESSAGE(near(actual, expected), said("f(x) on ... is wrong", suspect(actual, {{kByDk, wrong}})));
//   CHECK_MESSAGE(near(variance, 1.0, 1e-3), "the variance of ...");     // a scalar prints as a number
//   CHECK_MESSAGE(same_mask(mask, expected_mask), said("causal_mask(3, 3) is wrong", suspect_mask(mask, {{kTransposed, wrong_mask}})));
//   CHECK_THROWS_CALL(ShapeError, "q and k must have the same d_k", ch03::dot_scores, q, k);
//
// Named mistakes. A known mistake is a Named: a stable id (snake_case; the bug zoo mutant's name
// where one exists) and what it is, in words. A message names it only on evidence: suspect() and
// its kin compare the observed output with the mistake's own output, which the check computes
// (by applying the mistake to its reference computation) for the same input, and name the
// mistakes whose output it equals; a throw check names the mistake given for "nothing thrown"
// only when nothing was thrown. Nothing else prints a Named. Every named mistake reads, in every
// message, "known mistake [ID]: TEXT" (kMistakeForm); tools/scalebook/loop/run_checks.py's mistake_ids()
// reads the ids back, ./workbook hint keys its advice on them, and the grading report carries them.
//
// Every check leads with a sentence: no plain CHECK or REQUIRE in a chapter's checks, and a message
// that is only suspect(...) (empty when nothing matches) is said(sentence, suspect(...)) instead;
// lib/tests/check_messages_lead.py holds chapters/*/checks.cpp to it.
//
// Every value a check compares prints readably: lists (std::vector of numbers, of matrices, of
// strings) as {4, 5, 3.75}, long ones as their head, their tail and their length; matrices with
// their shape, at most 8 x 8 entries; masks as 0/1 grids; a char* as its text (doctest would
// print its address). Every check binary is compiled with
// DOCTEST_CONFIG_REQUIRE_STRINGIFICATION_FOR_ALL_USED_TYPES (lib/CMakeLists.txt), so a value that
// would print as doctest's "{?}" does not compile; a chapter's struct gets a StringMaker in its
// checks.cpp.
//
// The first part of a failure message is its diagnosis (what ./workbook quotes on one line): the
// innermost CHECK_MESSAGE text, then the comparison's report, then the INFO/CAPTURE/INPUTS
// contexts. So put a CHECK inside an INFO or CAPTURE scope as CHECK_MESSAGE(condition, diagnosis):
// a plain CHECK there would lead with the context.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "scalebook/alignment.hpp"
#include "scalebook/core.hpp"

namespace scalebook::testing {

// --- named mistakes -----------------------------------------------------------------------------

/// A known mistake: its stable id and what it is. Declared once per chapter, constexpr:
///   constexpr Named kDdof1{"ddof_one", "the sample standard deviation (divided by n - 1) instead of ..."};
struct Named {
  const char* id;    ///< snake_case, stable: hints, the grading report and the class page key on it
  const char* text;  ///< what the mistake is, as a statement (the output proved it)
};

/// How every message names a mistake: "known mistake [ID]: TEXT". tools/scalebook/loop/run_checks.py's
/// mistake_ids() finds the ids by this form, and nothing a submission sends can forge it (see
/// submitted()).
inline constexpr const char* kMistakeForm = "known mistake [";

/// The outcome of a comparison; converts to bool, and doctest prints its report on failure.
struct MatrixMatch {
  bool ok = false;
  std::string report;
  explicit operator bool() const { return ok; }
};

/// How a matrix's rows and columns group into parts (heads, row blocks, key blocks), so that a
/// failed comparison says which parts differ: Parts{"query block", 3, "head", 4} groups rows by
/// 3 and columns by 4. A name of nullptr leaves that axis ungrouped.
struct Parts {
  const char* row_part = nullptr;
  Index rows_per_part = 0;
  const char* col_part = nullptr;
  Index cols_per_part = 0;
};

/// Entry-wise |actual - expected| <= tol * max(1, |expected|), same shapes, NaN never matches.
/// The report gives the largest difference and its index, how many entries differ and in which
/// rows and columns (and parts, when given), and both matrices.
MatrixMatch near(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                 double tol = 1e-12, const Parts& parts = {});

/// Exact equality, bit for bit (used where the lesson promises identical bits).
MatrixMatch identical(const Eigen::Ref<const Matrix>& actual,
                      const Eigen::Ref<const Matrix>& expected, const Parts& parts = {});

/// Two numbers: |actual - expected| <= tol * max(1, |expected|), NaN never matches. The report
/// prints them as numbers with 17 significant digits, never as 1 x 1 matrices.
MatrixMatch near(double actual, double expected, double tol = 1e-12);

/// Two boolean masks, entry by entry, exactly (no tolerance); the report prints both as 0/1 grids
/// with the first differing entry marked and counts the entries that differ.
MatrixMatch same_mask(const BoolMatrix& actual, const BoolMatrix& expected);

/// A known mistake with its output for the check's input (computed by the check).
struct Mistake {
  Named mistake;
  Matrix output;
};

/// "" when actual equals none of the mistakes' outputs (within tol * max(1, |output|), NaN
/// matching NaN); otherwise "known mistake [ID]: TEXT" for each whose output it equals.
std::string suspect(const Eigen::Ref<const Matrix>& actual, std::initializer_list<Mistake> mistakes,
                    double tol = 1e-9);
/// The same for a list of mistakes built at run time.
std::string suspect(const Eigen::Ref<const Matrix>& actual, const std::vector<Mistake>& mistakes,
                    double tol = 1e-9);

/// A known mistake's value of a scalar (e.g. the population variance where the sample one is asked).
struct ScalarMistake {
  Named mistake;
  double output;
};

/// As suspect() for a number.
std::string suspect(double actual, std::initializer_list<ScalarMistake> mistakes, double tol = 1e-9);

/// A known mistake's mask.
struct MaskMistake {
  Named mistake;
  BoolMatrix output;
};

/// As suspect() for a boolean mask, exactly (a name of its own: Eigen would convert masks and
/// matrices into each other).
std::string suspect_mask(const BoolMatrix& actual, std::initializer_list<MaskMistake> mistakes);

/// A known mistake's list of numbers.
struct ListMistake {
  Named mistake;
  std::vector<double> output;
};

/// As suspect() for a list of numbers (same length, each within tol * max(1, |output|)).
std::string suspect_values(const std::vector<double>& actual, std::initializer_list<ListMistake> mistakes,
                           double tol = 0.0);
/// Lists of integers (indices, labels, counts), exactly.
template <class T, std::enable_if_t<std::is_integral_v<T>, bool> = true>
std::string suspect_values(const std::vector<T>& actual,
                           std::initializer_list<std::pair<Named, std::vector<T>>> mistakes);

namespace detail {
/// "known mistake [ID]: TEXT" for each of the mistakes, joined with " | " ("" for none). Only
/// the suspect functions and the throw checks call it: a chapter's checks never do (the message
/// tests hold them to it), so that no message names a mistake its output does not show.
std::string name_mistakes(const std::vector<Named>& mistakes);
}  // namespace detail

template <class T, std::enable_if_t<std::is_integral_v<T>, bool>>
std::string suspect_values(const std::vector<T>& actual,
                           std::initializer_list<std::pair<Named, std::vector<T>>> mistakes) {
  std::vector<Named> found;
  for (const auto& [mistake, output] : mistakes)
    if (output == actual) found.push_back(mistake);
  return detail::name_mistakes(found);
}

/// As suspect() for any outcome the check can compare with EQUAL (a struct, a count, a flag): the
/// mistakes whose output (computed by the check) EQUAL says the actual one is.
template <class T, class Equal>
std::string suspect_by(const T& actual, const std::vector<std::pair<Named, T>>& mistakes, Equal equal) {
  std::vector<Named> found;
  for (const auto& [mistake, output] : mistakes)
    if (equal(actual, output)) found.push_back(mistake);
  return detail::name_mistakes(found);
}
template <class T, class Equal>
std::string suspect_by(const T& actual, std::initializer_list<std::pair<Named, T>> mistakes, Equal equal) {
  return suspect_by(actual, std::vector<std::pair<Named, T>>(mistakes), equal);
}

/// As suspect_by with ==: integers, flags, enums.
template <class T>
std::string suspect_exact(const T& actual, std::initializer_list<std::pair<Named, T>> mistakes) {
  return suspect_by(actual, mistakes, [](const T& a, const T& b) { return a == b; });
}

// --- exceptions ---------------------------------------------------------------------------------

/// The outcome of an exception check (CHECK_THROWS_CALL): report is the diagnosis.
struct ThrowMatch {
  bool ok = false;
  std::string report;
  explicit operator bool() const { return ok; }
};

/// What a throw check says when the expected exception did not come from the function itself: the
/// contract's rule the input breaks (always), and, on evidence, the mistake whose outcome it was:
/// `nothing` when nothing was thrown, `inner` when the error came from Eigen's own assertion or
/// from an inner function (the function's own check of this input is missing either way).
struct Why {
  std::string rule;
  std::optional<Named> nothing, inner;
  Why(const char* rule_text) : rule(rule_text) {}               // NOLINT: a rule reads as one
  Why(std::string rule_text) : rule(std::move(rule_text)) {}    // NOLINT
  Why(std::string rule_text, std::optional<Named> if_nothing, std::optional<Named> if_inner = std::nullopt)
      : rule(std::move(rule_text)), nothing(if_nothing), inner(if_inner) {}
};

/// The name of an exception's dynamic type, demangled ("scalebook::ValueError").
std::string type_name(const std::type_info& type);

/// Text a submission wrote (an exception's message), made safe to quote in a message: it cannot
/// forge the form a named mistake takes ("known mistake [" becomes "known mistake (").
std::string submitted(std::string text);

/// Runs call and says whether it threw exactly the expected type (expected_name, e.g.
/// "scalebook::ShapeError") with a message that starts with "<function>: ", the contract's rule.
/// The report leads with the call and its inputs (described by `call`, made only on failure), then
/// what happened: the type thrown instead and its message; nothing thrown (the rule, and
/// why.nothing when given); an error from Eigen's assertion or an inner function (why.inner).
ThrowMatch throws_typed(const std::function<void()>& call,
                        const std::function<bool(const std::exception&)>& is_expected,
                        std::string_view expected_name, std::string_view function,
                        const std::function<std::string()>& describe_call, const Why& why);

// --- showing inputs -----------------------------------------------------------------------------

/// A number as text: the shortest form that reads back as the same double ("0.1", "1e+300",
/// "-inf", "nan"), so that two numbers that print alike are equal.
std::string format_number(double x);

/// A matrix on one line, for inputs: "(2, 3) [[1, 2, 3], [4, 5, 6]]" when it has at most 24
/// entries, else its shape, its range, its non-finite entries and where they are ("(100, 64),
/// entries from -3.1 to 3.4, nan at (3, 11)"); "(0, 3), empty"; "(3, 2), all 1".
std::string show_matrix(const Eigen::Ref<const Matrix>& m);

inline std::string show(double x) { return format_number(x); }
inline std::string show(float x) { return format_number(x); }
inline std::string show(bool x) { return x ? "true" : "false"; }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, bool> = true>
std::string show(T x) { return std::to_string(x); }
inline std::string show(const std::string& s) { return "\"" + s + "\""; }
inline std::string show(const char* s) { return show(std::string(s)); }
inline std::string show(Alignment a) { return a == Alignment::TopLeft ? "Alignment::TopLeft" : "Alignment::BottomRight"; }
std::string show(const Matrix& m);
std::string show(const Vector& m);
std::string show(const RowVector& m);
std::string show(const BoolMatrix& m);
template <class Derived>
std::string show(const Eigen::MatrixBase<Derived>& m) {
  if constexpr (std::is_same_v<typename Derived::Scalar, bool>) {
    return show(BoolMatrix(m));
  } else {
    return show(Matrix(m));
  }
}
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, bool> = true>
std::string show(const std::vector<T>& values);
std::string show(const std::vector<Matrix>& matrices);
/// Anything else as doctest prints it (a chapter's struct, through its StringMaker), on one line.
template <class T>
auto show(const T& value) -> std::enable_if_t<!std::is_arithmetic_v<T> && !std::is_base_of_v<Eigen::EigenBase<T>, T>, std::string>;

/// "f(a, b, 3) with a = ...; b = ...": a call with its arguments shown (literal numbers once).
/// function and arguments are the call's text, shown its arguments' values.
std::string call_text(std::string_view function, std::string_view arguments, const std::vector<std::string>& shown);

template <class... A>
std::vector<std::string> shown_args(const A&... args) {
  return {show(args)...};
}

/// "input: q = (1, 2) [[1, 1]]; k = ...": the INPUTS context.
template <class... A>
std::string inputs(std::string_view names, const A&... args) {
  return "input: " + call_text("", names, shown_args(args...));
}

// --- lists and matrices as text -----------------------------------------------------------------

/// A matrix printed with aligned columns (at most 8 × 8 shown), optionally marking one entry.
std::string format_matrix(const Eigen::Ref<const Matrix>& m, Index mark_row = -1,
                          Index mark_col = -1);

/// A list as text: "{4, 5, 3.75}"; one longer than 12 as its first 6 and last 3 values and its
/// length: "{0, 1, 2, 3, 4, 5, ..., 97, 98, 99} (100 values)". An empty list is "{} (empty)".
std::string format_values(const std::vector<double>& values);
std::string format_values(const std::vector<long long>& values);
std::string format_values(const std::vector<std::string>& values);

/// Any list of numbers (int, Index, std::size_t, bool, float...) as format_values prints it.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, bool> = true>
std::string format_values(const std::vector<T>& values) {
  if constexpr (std::is_floating_point_v<T>) {
    return format_values(std::vector<double>(values.begin(), values.end()));
  } else {
    return format_values(std::vector<long long>(values.begin(), values.end()));
  }
}
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, bool>>
std::string show(const std::vector<T>& values) { return format_values(values); }

/// A list of matrices (e.g. heads): how many, each one's shape and its entries (at most 4 shown).
std::string format_matrices(const std::vector<Matrix>& matrices);

/// A boolean mask as a 0/1 grid (at most 16 x 16 shown), optionally marking one entry.
std::string format_mask(const BoolMatrix& m, Index mark_row = -1, Index mark_col = -1);

/// Two lists of numbers, entry by entry: |actual - expected| <= tol * max(1, |expected|) (tol 0:
/// exactly equal), the same length, NaN never matches. The report says where they first differ,
/// with both values, and prints both lists (long ones as head, tail and the stretch around the
/// first difference).
MatrixMatch same_values(const std::vector<double>& actual, const std::vector<double>& expected,
                        double tol = 0.0);
MatrixMatch same_values(const std::vector<long long>& actual, const std::vector<long long>& expected);

/// Lists of integers (labels, indices, counts) compared exactly.
template <class T, std::enable_if_t<std::is_integral_v<T>, bool> = true>
MatrixMatch same_values(const std::vector<T>& actual, const std::vector<T>& expected) {
  return same_values(std::vector<long long>(actual.begin(), actual.end()),
                     std::vector<long long>(expected.begin(), expected.end()));
}

/// The message a CHECK_MESSAGE leads with: a sentence saying what was called on which input and
/// what went wrong, then the named mistake when suspect() found one ("" adds nothing).
inline std::string said(const std::string& sentence, const std::string& mistake) {
  return mistake.empty() ? sentence : sentence + " | " + mistake;
}

/// A matrix written row by row: from_rows(2, 2, {1, 2, 3, 4}).
inline Matrix from_rows(Index rows, Index cols, std::initializer_list<double> values) {
  REQUIRE_MESSAGE(static_cast<Index>(values.size()) == rows * cols, "from_rows: the check's own matrix has the wrong size");
  Matrix m(rows, cols);
  auto value = values.begin();
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = *value++;
  return m;
}

/// A row vector from its entries.
inline RowVector row(std::initializer_list<double> values) {
  RowVector r(static_cast<Index>(values.size()));
  Index j = 0;
  for (double v : values) r(j++) = v;
  return r;
}

/// The message of the exception of type E that f throws; "(a different exception: ...)" or
/// "(nothing thrown)" otherwise (a submission's text made safe by submitted()).
template <class E, class F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return submitted(e.what());
  } catch (const std::exception& e) {
    return submitted(std::string("(a different exception: ") + e.what() + ")");
  }
  return "(nothing thrown)";
}

inline bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

/// What CALL threw (its what(), made safe by submitted()), or "" when it returned: for a check
/// that a valid input, such as a tiny positive learning rate, is accepted and not thrown out.
inline std::string thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    const std::string text = submitted(e.what());
    return text.empty() ? "(an exception with an empty message)" : text;
  }
  return "";
}

}  // namespace scalebook::testing

/// INPUTS(q, k, 3): the call's inputs as a context ("input: q = (1, 2) [[1, 1]]; k = ...; 3"),
/// shown after the diagnosis of any failure in its scope, and named when the code under test
/// crashes there. Lazy: nothing is printed unless something fails, and then the variables are
/// shown as they are at that moment: name copies of an argument the call changes in place.
#define INPUTS(...) INFO(::scalebook::testing::inputs(#__VA_ARGS__, __VA_ARGS__))

/// CHECK_THROWS_CALL(Type, why, function, arguments...): function(arguments...) must throw exactly
/// Type (a subclass does not count) with a message starting "function: " (its name without the
/// namespace). On failure (a FAIL_CHECK) the message shows the call with its arguments' values
/// (as they were before the call) and what happened instead: "dot_scores(q, k) with q = (2, 3) all 1; k = (4, 2) all 1 threw
/// nothing where scalebook::ShapeError was expected: <why.rule>". A braced argument needs its type
/// written out (Numbers{1, 2}), so that it can be shown.
#define CHECK_THROWS_CALL(Type, why, function, ...)                                                \
  do {                                                                                             \
    /* the arguments as they are before the call (an in-place argument may change) */             \
    const std::string described_call = ::scalebook::testing::call_text(                            \
        ::scalebook::testing::detail::bare(#function), #__VA_ARGS__,                               \
        ::scalebook::testing::shown_args(__VA_ARGS__));                                           \
    const ::scalebook::testing::ThrowMatch thrown = ::scalebook::testing::throws_typed(            \
        [&] { static_cast<void>(function(__VA_ARGS__)); },                                         \
        [](const std::exception& e) { return typeid(e) == typeid(Type); },                         \
        ::scalebook::testing::type_name(typeid(Type)), ::scalebook::testing::detail::bare(#function), \
        [&] { return described_call; }, why);                                                      \
    if (!thrown) FAIL_CHECK(thrown.report);                                                        \
  } while (false)

namespace scalebook::testing::detail {
/// "dot_scores" for "ch03::dot_scores": the name a function's own messages start with.
constexpr std::string_view bare(std::string_view qualified) {
  const std::size_t colon = qualified.rfind("::");
  return colon == std::string_view::npos ? qualified : qualified.substr(colon + 2);
}
}  // namespace scalebook::testing::detail

namespace doctest {
// A C string as its text: doctest prints a char* as its address ("0x55c1fede77c0").
template <>
struct StringMaker<const char*> {
  static String convert(const char* text) { return text != nullptr ? String(text) : String("(null)"); }
};
template <>
struct StringMaker<char*> {
  static String convert(const char* text) { return text != nullptr ? String(text) : String("(null)"); }
};
template <>
struct StringMaker<scalebook::Alignment> {
  static String convert(scalebook::Alignment a) { return scalebook::testing::show(a).c_str(); }
};
template <>
struct StringMaker<scalebook::testing::MatrixMatch> {
  static String convert(const scalebook::testing::MatrixMatch& match) {
    return match.report.c_str();
  }
};
template <>
struct StringMaker<scalebook::testing::ThrowMatch> {
  static String convert(const scalebook::testing::ThrowMatch& match) { return match.report.c_str(); }
};
// Lists of numbers and strings, which doctest would print as "{?}".
template <class T>
struct StringMaker<std::vector<T>> {
  static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, std::string>,
                "scalebook/testing.hpp: add a StringMaker for this kind of list");
  static String convert(const std::vector<T>& values) {
    return scalebook::testing::format_values(values).c_str();
  }
};
template <>
struct StringMaker<std::vector<scalebook::Matrix>> {
  static String convert(const std::vector<scalebook::Matrix>& matrices) {
    return scalebook::testing::format_matrices(matrices).c_str();
  }
};
// An optional result (e.g. a layer's output, or none when it threw): the value, or "no value".
template <class T>
struct StringMaker<std::optional<T>> {
  static String convert(const std::optional<T>& value) {
    return value ? StringMaker<T>::convert(*value) : String("no value (std::nullopt)");
  }
};
// Matrices with their shape and aligned columns instead of Eigen's unbounded print-out.
template <class M>
struct ShapedStringMaker {
  static String convert(const M& m) {
    return (scalebook::shape_of(m) + ":\n" + scalebook::testing::format_matrix(m)).c_str();
  }
};
template <>
struct StringMaker<scalebook::Matrix> : ShapedStringMaker<scalebook::Matrix> {};
template <>
struct StringMaker<scalebook::Vector> : ShapedStringMaker<scalebook::Vector> {};
template <>
struct StringMaker<scalebook::RowVector> : ShapedStringMaker<scalebook::RowVector> {};
template <>
struct StringMaker<scalebook::BoolMatrix> {
  static String convert(const scalebook::BoolMatrix& m) {
    return ("mask " + scalebook::shape_of(m) + ":\n" + scalebook::testing::format_mask(m)).c_str();
  }
};
}  // namespace doctest

namespace scalebook::testing {
namespace detail {
std::string one_line(std::string text);  ///< newlines as "; ", for a value inside a sentence
}
template <class T>
auto show(const T& value) -> std::enable_if_t<!std::is_arithmetic_v<T> && !std::is_base_of_v<Eigen::EigenBase<T>, T>, std::string> {
  return detail::one_line(doctest::toString(value).c_str());
}
}  // namespace scalebook::testing
