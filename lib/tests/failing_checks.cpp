// Checks that fail on purpose, so that lib/tests/check_failure_messages.cmake can hold the doctest
// main to its results format: each failure's first part is the diagnosis, contexts come after it.
// Not part of lib_tests (every case here fails).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::testing;

namespace {
Matrix thrower(bool shape) {
  if (shape) throw ShapeError("thrower: shapes");
  throw std::invalid_argument("thrower: an argument");
}
}  // namespace

constexpr Named kZeros{"zeros", "zeros everywhere"};

TEST_CASE("1.1 a diagnosis comes before the context") {
  INFO("alignment: TopLeft");
  const Matrix zeros = Matrix::Zero(1, 2);
  CHECK_MESSAGE(near(zeros, Matrix::Ones(1, 2)), suspect(zeros, {{kZeros, zeros}}));
}

TEST_CASE("1.2 without a diagnosis the comparison's report leads") {
  const int d_k = 4;
  CAPTURE(d_k);
  CHECK_MESSAGE(near(0.5, 0.25), "");
}

TEST_CASE("1.3 an exception check names the type thrown instead") {
  INFO("a context");
  CHECK_THROWS_CALL(ShapeError, "a shape check", thrower, false);
}

TEST_CASE("1.4 an Eigen assertion names itself and the check") {
  const Matrix m = Matrix::Ones(2, 2);
  CHECK(m(5, 5) == 1.0);
}

TEST_CASE("1.5 an Eigen assertion outside any check names itself and the check") {
  const Matrix m = Matrix::Ones(2, 2);
  volatile double x = m(7, 7);
  static_cast<void>(x);
}
