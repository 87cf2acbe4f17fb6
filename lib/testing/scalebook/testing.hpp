// scalebook/testing.hpp — helpers for the doctest checks: matrix comparison whose failure message
// shows both matrices with the largest difference marked, and a "which known mistake does this
// output look like?" diagnosis, so a failing check can name the student's likely slip.
//
//   CHECK_MESSAGE(near(actual, expected), "f(x) on ... is wrong");   // prints both matrices on failure
//   CHECK_MESSAGE(near(actual, expected), said("f(x) on ... is wrong", suspect(actual, {{"divided by d_k", wrong}})));
//   CHECK_MESSAGE(near(variance, 1.0, 1e-3), "the variance of ...");     // a scalar prints as a number
//   CHECK_MESSAGE(same_mask(mask, expected_mask), said("causal_mask(3, 3) is wrong", suspect_mask(mask, {{"transposed?", wrong_mask}})));
//   CHECK_THROWS_TYPED(dot_scores(q, k), ShapeError, "dot_scores", "a missing require_same_cols?");
//   CHECK_MESSAGE(same_values(curve, expected), said("smooth_curve({4, 8, 0}, 0.75) is wrong", why));
//
// Every check leads with a sentence: no plain CHECK or REQUIRE in a chapter's checks, and a message
// that is only suspect(...) (empty when nothing matches) is said(sentence, suspect(...)) instead;
// lib/tests/check_messages_lead.py holds chapters/*/checks.cpp to it.
//
// Every value a check compares prints readably: lists (std::vector of numbers, of matrices, of
// strings) as {4, 5, 3.75}, long ones as their head, their tail and their length; matrices with
// their shape, at most 8 x 8 entries; masks as 0/1 grids. Every check binary is compiled with
// DOCTEST_CONFIG_REQUIRE_STRINGIFICATION_FOR_ALL_USED_TYPES (lib/CMakeLists.txt), so a CHECK on a
// type that would print as doctest's "{?}" does not compile.
//
// The first part of a failure message is its diagnosis (what ./workbook quotes on one line): the
// innermost CHECK_MESSAGE text, then the comparison's report, then the INFO/CAPTURE contexts. So
// put a CHECK inside an INFO or CAPTURE scope as CHECK_MESSAGE(condition, diagnosis): a plain
// CHECK there would lead with the context.
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
#include <vector>

#include "scalebook/core.hpp"

namespace scalebook::testing {

/// The outcome of a comparison; converts to bool, and doctest prints its report on failure.
struct MatrixMatch {
  bool ok = false;
  std::string report;
  explicit operator bool() const { return ok; }
};

/// Entry-wise |actual - expected| <= tol * max(1, |expected|), same shapes, NaN never matches.
MatrixMatch near(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                 double tol = 1e-12);

/// Exact equality, bit for bit (used where the lesson promises identical bits).
MatrixMatch identical(const Eigen::Ref<const Matrix>& actual,
                      const Eigen::Ref<const Matrix>& expected);

/// Two numbers: |actual - expected| <= tol * max(1, |expected|), NaN never matches. The report
/// prints them as numbers with 17 significant digits, never as 1 x 1 matrices.
MatrixMatch near(double actual, double expected, double tol = 1e-12);

/// Two boolean masks, entry by entry, exactly (no tolerance); the report prints both as 0/1 grids
/// with the first differing entry marked and counts the entries that differ.
MatrixMatch same_mask(const BoolMatrix& actual, const BoolMatrix& expected);

/// A known wrong implementation's output for the same input, with the mistake it stands for.
struct Mistake {
  const char* description;  ///< e.g. "scores divided by d_k instead of sqrt(d_k)?"
  Matrix output;
};

/// "" when actual matches none of the mistakes; otherwise "looks like a known mistake: <description>".
std::string suspect(const Eigen::Ref<const Matrix>& actual, std::initializer_list<Mistake> mistakes,
                    double tol = 1e-9);

/// A known wrong value of a scalar (e.g. the population variance where the sample one is asked).
struct ScalarMistake {
  const char* description;
  double output;
};

/// As suspect() for a number: the first mistake within tol * max(1, |output|) of actual.
std::string suspect(double actual, std::initializer_list<ScalarMistake> mistakes, double tol = 1e-9);

/// A known wrong mask.
struct MaskMistake {
  const char* description;
  BoolMatrix output;
};

/// As suspect() for a boolean mask, the first mistake whose mask equals actual exactly (a name
/// of its own: Eigen would convert masks and matrices into each other).
std::string suspect_mask(const BoolMatrix& actual, std::initializer_list<MaskMistake> mistakes);

/// The outcome of an exception check (CHECK_THROWS_TYPED): report is the diagnosis.
struct ThrowMatch {
  bool ok = false;
  std::string report;
  explicit operator bool() const { return ok; }
};

/// The name of an exception's dynamic type, demangled ("scalebook::ValueError").
std::string type_name(const std::type_info& type);

/// Runs call and says whether it threw exactly the expected type (expected_name, e.g.
/// "scalebook::ShapeError") with a message that starts with "<function>: ", the contract's rule.
/// When it threw another type, the report names that type and its message; when it threw nothing,
/// the report says so and adds missing_hint (e.g. "a missing require_same_cols?"); an error from
/// Eigen's own assertions is named as such (the function's own check did not run).
ThrowMatch throws_typed(const std::function<void()>& call,
                        const std::function<bool(const std::exception&)>& is_expected,
                        std::string_view expected_name, std::string_view function,
                        std::string_view expression, std::string_view missing_hint);

/// A matrix printed with aligned columns (at most 8 × 8 shown), optionally marking one entry.
std::string format_matrix(const Eigen::Ref<const Matrix>& m, Index mark_row = -1,
                          Index mark_col = -1);

/// A number as text: the shortest form that reads back as the same double ("0.1", "1e+300",
/// "-inf", "nan"), so that two numbers that print alike are equal.
std::string format_number(double x);

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
  REQUIRE(static_cast<Index>(values.size()) == rows * cols);
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
/// "(nothing thrown)" otherwise.
template <class E, class F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(a different exception: ") + e.what() + ")";
  }
  return "(nothing thrown)";
}

inline bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

/// What CALL threw (its what()), or "" when it returned: for a check that a valid input, such as a
/// tiny positive learning rate, is accepted and not thrown out.
inline std::string thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace scalebook::testing

/// CHECK_THROWS_TYPED(expression, Type, "function", "hint if nothing is thrown"): the expression
/// must throw exactly Type (a subclass does not count) with a message starting "function: ".
/// On failure (a FAIL_CHECK) the message says what happened instead: "dot_scores(q, k) threw
/// scalebook::ValueError where scalebook::ShapeError was expected: \"...\"".
#define CHECK_THROWS_TYPED(expression, Type, function, missing_hint)                             \
  do {                                                                                           \
    const ::scalebook::testing::ThrowMatch thrown = ::scalebook::testing::throws_typed(          \
        [&] { static_cast<void>(expression); },                                                  \
        [](const std::exception& e) { return typeid(e) == typeid(Type); },                       \
        ::scalebook::testing::type_name(typeid(Type)), function, #expression, missing_hint);     \
    if (!thrown) FAIL_CHECK(thrown.report);                                                      \
  } while (false)

namespace doctest {
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
