// Tests of scalebook/testing.hpp: the comparison must fail where it should and explain itself.
#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::testing;

TEST_SUITE("lib") {
TEST_CASE("near accepts small differences and reports the largest one") {
  Matrix a(2, 2), b(2, 2);
  a << 1, 2, 3, 4;
  b << 1, 2, 3, 4 + 1e-14;
  CHECK(near(a, b, 1e-12));
  b(0, 1) = 2.5;
  const MatrixMatch match = near(a, b, 1e-12);
  CHECK_FALSE(match);
  CHECK(match.report.find("largest difference at (0, 1): actual 2 vs expected 2.5") != std::string::npos);
  CHECK(match.report.find("[2.5]") != std::string::npos);  // the entry is marked in the print-out
}

TEST_CASE("near rejects other shapes and NaN") {
  CHECK_FALSE(near(Matrix::Zero(2, 3), Matrix::Zero(3, 2)));
  Matrix a = Matrix::Zero(1, 1);
  a(0, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(near(a, a));
}

TEST_CASE("identical wants the same bits") {
  Matrix a = Matrix::Constant(1, 1, 0.1 + 0.2), b = Matrix::Constant(1, 1, 0.3);
  CHECK_FALSE(identical(a, b));
  CHECK(identical(a, a));
  CHECK_FALSE(identical(Matrix::Constant(1, 1, 0.0), Matrix::Constant(1, 1, -0.0)));
}

TEST_CASE("suspect names the mistake whose output matches") {
  const Matrix right = Matrix::Constant(1, 2, 1.0), wrong = Matrix::Constant(1, 2, 0.5);
  CHECK(suspect(wrong, {{"halved?", wrong}}) == "looks like a known mistake: halved?");
  CHECK(suspect(right, {{"halved?", wrong}}).empty());
}

TEST_CASE("a scalar compares and prints as a number, not a 1 x 1 matrix") {
  CHECK(near(1.0, 1.0 + 1e-13));
  const MatrixMatch match = near(0.25, 0.5, 1e-12);
  CHECK_FALSE(match);
  CHECK(match.report.find("actual 0.25 vs expected 0.5") == 0);
  CHECK(match.report.find("(1, 1)") == std::string::npos);
  CHECK_FALSE(near(std::numeric_limits<double>::quiet_NaN(), 0.0));
  CHECK(suspect(0.5, {{"doubled?", 1.0}, {"halved?", 0.5}}) == "looks like a known mistake: halved?");
  CHECK(suspect(0.7, {{"halved?", 0.5}}).empty());
}

TEST_CASE("masks compare exactly and print as 0/1 grids") {
  BoolMatrix a(2, 2), b(2, 2);
  a << true, false, true, true;
  b << true, true, true, true;
  CHECK(same_mask(a, a));
  const MatrixMatch match = same_mask(a, b);
  CHECK_FALSE(match);
  CHECK(match.report.find("masks differ in 1 of 4 entries, first at (0, 1): actual 0 vs expected 1") == 0);
  CHECK(match.report.find("tolerance") == std::string::npos);
  CHECK(match.report.find(" 1 [0]") != std::string::npos);
  CHECK_FALSE(same_mask(a, BoolMatrix::Constant(2, 3, true)));
  CHECK(suspect_mask(a, {{"all true?", b}, {"a?", a}}) == "looks like a known mistake: a?");
}

namespace {
ThrowMatch expect_shape_error(const std::function<void()>& call) {
  return throws_typed(call, [](const std::exception& e) { return typeid(e) == typeid(ShapeError); },
                      type_name(typeid(ShapeError)), "f", "f(x)", "a missing check?");
}
}  // namespace

TEST_CASE("an exception check names the type that was thrown instead") {
  CHECK(expect_shape_error([] { throw ShapeError("f: x is empty (0, 3)"); }));
  const ThrowMatch wrong_type = expect_shape_error([] { throw ValueError("f: x has a NaN"); });
  CHECK_FALSE(wrong_type);
  CHECK(wrong_type.report ==
        "f(x) threw scalebook::ValueError where scalebook::ShapeError was expected: \"f: x has a NaN\"");
  const ThrowMatch std_type = expect_shape_error([] { throw std::invalid_argument("f: bad"); });
  CHECK(std_type.report.find("threw std::invalid_argument where") != std::string::npos);
  const ThrowMatch nothing = expect_shape_error([] {});
  CHECK(nothing.report == "f(x) threw nothing where scalebook::ShapeError was expected: a missing check?");
  const ThrowMatch unnamed = expect_shape_error([] { throw ShapeError("x is empty"); });
  CHECK(unnamed.report.find("must start with \"f: \"") != std::string::npos);
  const ThrowMatch from_eigen = expect_shape_error([] { (void)Matrix::Ones(2, 2)(3, 3); });
  CHECK(from_eigen.report.find("from Eigen's own assertion") != std::string::npos);
  const ThrowMatch from_inside = expect_shape_error([] { throw ShapeError("g: n must be positive"); });
  CHECK(from_inside.report.find("threw scalebook::ShapeError from g, not from f's own input checks") !=
        std::string::npos);
}

TEST_CASE("an Eigen assertion names its condition and the function that misused Eigen") {
  try {
    (void)Matrix::Ones(2, 2)(3, 3);
    FAIL("no exception");
  } catch (const ShapeError& e) {
    const std::string message = e.what();
    CHECK(message.find("Eigen assertion failed: ") == 0);
    CHECK(message.find("index out of range") != std::string::npos);
  }
  try {  // Eigen's own explanation instead of a condition of several hundred characters
    (void)Matrix(-1, 2);
    FAIL("no exception");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("Eigen assertion failed: Invalid sizes when resizing") == 0);
  }
}
}
