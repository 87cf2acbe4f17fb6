// scalebook/testing.hpp — helpers for the doctest checks: matrix comparison whose failure message
// shows both matrices with the largest difference marked, and a "which known mistake does this
// output look like?" diagnosis, so a failing check can name the student's likely slip.
//
//   CHECK(near(actual, expected));                 // prints both matrices on failure
//   CHECK_MESSAGE(near(actual, expected), suspect(actual, {{"divided by d_k", wrong}}));
//   CHECK(near(variance, 1.0, 1e-3));              // a scalar prints as a number
//   CHECK_MESSAGE(same_mask(mask, expected_mask), suspect_mask(mask, {{"transposed?", wrong_mask}}));
//   CHECK_THROWS_TYPED(dot_scores(q, k), ShapeError, "dot_scores", "a missing require_same_cols?");
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
#include <string>
#include <string_view>
#include <typeinfo>

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
}  // namespace doctest
