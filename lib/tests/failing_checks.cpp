// Checks that fail on purpose, so that lib/tests/check_failure_messages.cmake can hold the doctest
// main to its results format: each failure's first part is the diagnosis, contexts come after it.
// Not part of lib_tests (every case here fails).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "scalebook/properties.hpp"
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

TEST_CASE("1.6 every failure of a check is reported, the first in full, the others by their reason") {
  const Matrix zeros = Matrix::Zero(1, 2);
  CHECK_MESSAGE(near(zeros, Matrix::Ones(1, 2)), "first: zeros where ones belong");
  CHECK_MESSAGE(near(0.5, 0.25), "second: a half where a quarter belongs");
  CHECK_MESSAGE(near(zeros, Matrix::Ones(1, 2)), said("third: zeros again", suspect(zeros, {{kZeros, zeros}})));
  CHECK_MESSAGE(near(0.5, 0.25), "second: a half where a quarter belongs");  // said once
}

TEST_CASE("1.7 a plain comparison shows its sentence, never the C++ expression") {
  const double x = 0.118034;
  CHECK_MESSAGE(std::abs(x) < 1e-9, "x must be below 1e-9, got " << x);
}

TEST_CASE("1.8 an exception from a valid input says the input was valid") {
  const Matrix m = Matrix::Ones(1, 1);
  INPUTS(m);
  const Matrix y = thrower(true);
  CHECK_MESSAGE(near(y, m), "never reached");
}

TEST_CASE("1.9 a property that fails shows its sentence and its smallest counterexample") {
  check_property("every whole number from 0 to 30 is below 7", "x",
                 [](double x) { return x < 7 ? std::string() : "x = " + format_number(x) + " is not below 7"; },
                 gen_whole(0, 30));
}
