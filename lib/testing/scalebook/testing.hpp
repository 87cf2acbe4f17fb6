// scalebook/testing.hpp — helpers for the doctest checks: matrix comparison whose failure message
// shows both matrices with the largest difference marked, and a "which known mistake does this
// output look like?" diagnosis, so a failing check can name the student's likely slip.
//
//   CHECK(near(actual, expected));                 // prints both matrices on failure
//   CHECK_MESSAGE(near(actual, expected), suspect(actual, {{"divided by d_k", wrong}}));
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

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

/// A known wrong implementation's output for the same input, with the mistake it stands for.
struct Mistake {
  const char* description;  ///< e.g. "scores divided by d_k instead of sqrt(d_k)?"
  Matrix output;
};

/// "" when actual matches none of the mistakes; otherwise "looks like a known mistake: <description>".
std::string suspect(const Eigen::Ref<const Matrix>& actual, std::initializer_list<Mistake> mistakes,
                    double tol = 1e-9);

/// A matrix printed with aligned columns (at most 8 × 8 shown), optionally marking one entry.
std::string format_matrix(const Eigen::Ref<const Matrix>& m, Index mark_row = -1,
                          Index mark_col = -1);

}  // namespace scalebook::testing

namespace doctest {
template <>
struct StringMaker<scalebook::testing::MatrixMatch> {
  static String convert(const scalebook::testing::MatrixMatch& match) {
    return match.report.c_str();
  }
};
}  // namespace doctest
