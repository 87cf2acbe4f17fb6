// Tests of scalebook/core.hpp: the typed errors and the messages a user sees.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "scalebook/core.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;

TEST_SUITE("lib") {
TEST_CASE("shape_of prints rows and columns") {
  CHECK(shape_of(Matrix(2, 3)) == "(2, 3)");
  CHECK(shape_of(BoolMatrix(0, 4)) == "(0, 4)");
}

TEST_CASE("require_same_cols names the function and both shapes") {
  Matrix a(2, 3), b(4, 5);
  CHECK_THROWS_WITH_AS(require_same_cols("attention", "q", a, "k", b),
                       "attention: q (2, 3) and k (4, 5) must have the same number of columns",
                       ShapeError);
  CHECK_NOTHROW(require_same_cols("attention", "q", a, "k", Matrix(7, 3)));
}

TEST_CASE("require_nonempty rejects an empty matrix") {
  CHECK_THROWS_WITH_AS(require_nonempty("f", "scores", Matrix(0, 3)), "f: scores is empty (0, 3)",
                       ShapeError);
  CHECK_NOTHROW(require_nonempty("f", "scores", Matrix::Zero(1, 1)));
}

TEST_CASE("require_finite names the first NaN and its position") {
  Matrix m = Matrix::Zero(2, 2);
  m(1, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(require_finite("f", "q", m), "f: q (2, 2) has a non-finite value nan at (1, 0)",
                       ValueError);
  m(1, 0) = -std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(require_finite("f", "q", m), ValueError);
}

TEST_CASE("require_queries_keys: empty, different d_k, NaN") {
  const Matrix q = Matrix::Ones(2, 3);
  CHECK_NOTHROW(require_queries_keys("attention", q, Matrix::Ones(4, 3)));
  CHECK_THROWS_WITH_AS(require_queries_keys("attention", Matrix(0, 3), q), "attention: q is empty (0, 3)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(require_queries_keys("attention", q, Matrix::Ones(4, 2)),
                       "attention: q (2, 3) and k (4, 2) must have the same number of columns", ShapeError);
  Matrix k = Matrix::Ones(4, 3);
  k(3, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(require_queries_keys("attention", q, k), ValueError);
}

TEST_CASE("require_shape and require_positive") {
  CHECK_THROWS_WITH_AS(require_shape("f", "v", Matrix(2, 2), 3, 2), "f: v must be (3, 2), got (2, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(require_positive("f", "d_k", 0), "f: d_k must be positive, got 0", ShapeError);
  CHECK_THROWS_AS(require_positive("f", "n", -3), ShapeError);
  CHECK_NOTHROW(require_positive("f", "n", 1));
}

TEST_CASE("a stub's error names the exercise and the hint command") {
  try {
    not_implemented("3.2", "scaled_scores");
    FAIL("not_implemented returned");
  } catch (const NotImplemented& error) {
    CHECK(error.exercise_id() == "3.2");
    CHECK(std::string(error.what()) ==
          "exercise 3.2 (scaled_scores) is not implemented yet; stuck? run ./workbook hint 3.2");
  }
}

TEST_CASE("Eigen's shape assertions become ShapeError instead of an abort") {
  Matrix a = Matrix::Ones(2, 3), b = Matrix::Ones(2, 3);
  CHECK_THROWS_AS((void)Matrix(a * b), ShapeError);
  CHECK_THROWS_AS((void)a(5, 5), ShapeError);
}
}

#include "scalebook/linalg.hpp"

TEST_SUITE("lib") {
TEST_CASE("matmul and matmul_transposed against sums written out") {
  Matrix a(2, 3), b(3, 2);
  a << 1, 2, 3, 4, 5, 6;
  b << 7, 8, 9, 10, 11, 12;
  Matrix ab(2, 2);
  ab << 1 * 7 + 2 * 9 + 3 * 11, 1 * 8 + 2 * 10 + 3 * 12, 4 * 7 + 5 * 9 + 6 * 11, 4 * 8 + 5 * 10 + 6 * 12;
  CHECK(matmul(a, b) == ab);
  Matrix aat(2, 2);
  aat << 1 + 4 + 9, 4 + 10 + 18, 4 + 10 + 18, 16 + 25 + 36;
  CHECK(matmul_transposed(a, a) == aat);
  CHECK_THROWS_WITH_AS(matmul(a, a), "matmul: a (2, 3) times b (2, 3): a's columns must equal b's rows",
                       ShapeError);
  CHECK_THROWS_AS(matmul_transposed(a, b), ShapeError);
}
}
