// Tests of scalebook/testing.hpp: the comparison must fail where it should and explain itself.
#include <doctest/doctest.h>

#include <limits>
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
}
