// Tests of scalebook/softmax.hpp: the stable row softmax later chapters rely on.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "scalebook/softmax.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::near;

TEST_SUITE("lib") {
TEST_CASE("softmax of each row, computed by hand") {
  Matrix logits(2, 3);
  logits << 0, 0, std::log(2.0), 1, 1, 1;
  Matrix expected(2, 3);
  expected << 0.25, 0.25, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3;
  CHECK(near(softmax_rows(logits), expected, 1e-15));
}

TEST_CASE("large logits do not overflow (the max is subtracted)") {
  Matrix logits(1, 2);
  logits << 1000, 1000 + std::log(3.0);
  Matrix expected(1, 2);
  expected << 0.25, 0.75;
  CHECK(near(softmax_rows(logits), expected, 1e-12));
}

TEST_CASE("bad input: empty, NaN, +inf") {
  CHECK_THROWS_AS(softmax_rows(Matrix(0, 2)), ShapeError);
  Matrix m = Matrix::Zero(1, 2);
  m(0, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(softmax_rows(m), ValueError);
  m(0, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(softmax_rows(m), ValueError);
  m(0, 1) = -std::numeric_limits<double>::infinity();  // masking is chapter 4's: masked_softmax
  CHECK_THROWS_AS(softmax_rows(m), ValueError);
}
}
