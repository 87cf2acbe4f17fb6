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

TEST_CASE("the checks hold for a Vector, a RowVector, a block and an expression") {
  // require_finite has an overload per kind of argument, the shape checks a template: every one
  // must apply the same rule.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(require_nonempty("f", "x", Vector(0)), "f: x is empty (0, 1)", ShapeError);
  CHECK_THROWS_WITH_AS(require_nonempty("f", "x", RowVector(0)), "f: x is empty (1, 0)", ShapeError);
  const Matrix m = Matrix::Ones(3, 4);
  CHECK_THROWS_WITH_AS(require_nonempty("f", "x", m.block(1, 1, 2, 0)), "f: x is empty (2, 0)", ShapeError);
  CHECK_NOTHROW(require_nonempty("f", "x", Vector::Ones(1)));
  CHECK_NOTHROW(require_nonempty("f", "x", RowVector::Ones(1)));

  Vector v = Vector::Ones(3);
  v(2) = nan;
  CHECK_THROWS_WITH_AS(require_finite("f", "v", v), "f: v (3, 1) has a non-finite value nan at (2, 0)", ValueError);
  RowVector r = RowVector::Ones(3);
  r(1) = -std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(require_finite("f", "r", r), "f: r (1, 3) has a non-finite value -inf at (0, 1)",
                       ValueError);
  Matrix with_nan = m;
  with_nan(2, 3) = nan;
  CHECK_THROWS_WITH_AS(require_finite("f", "b", with_nan.bottomRightCorner(2, 2)),
                       "f: b (2, 2) has a non-finite value nan at (1, 1)", ValueError);
  CHECK_NOTHROW(require_finite("f", "b", with_nan.topLeftCorner(2, 2)));
  CHECK_NOTHROW(require_finite("f", "v", Vector::Ones(3)));

  CHECK_THROWS_WITH_AS(require_shape("f", "v", Vector(3), 2, 1), "f: v must be (2, 1), got (3, 1)", ShapeError);
  CHECK_THROWS_WITH_AS(require_shape("f", "r", RowVector(3), 1, 2), "f: r must be (1, 2), got (1, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(require_shape("f", "b", m.leftCols(2), 3, 3), "f: b must be (3, 3), got (3, 2)", ShapeError);
  CHECK_NOTHROW(require_shape("f", "v", Vector(3), 3, 1));
  CHECK_NOTHROW(require_shape("f", "r", RowVector(3), 1, 3));
  CHECK_NOTHROW(require_shape("f", "b", m.leftCols(2), 3, 2));

  CHECK_THROWS_WITH_AS(require_same_cols("f", "a", m, "b", m.leftCols(3)),
                       "f: a (3, 4) and b (3, 3) must have the same number of columns", ShapeError);
  CHECK_NOTHROW(require_same_cols("f", "a", m.topRows(1), "b", m));
  CHECK_THROWS_WITH_AS(require_queries_keys("f", m, with_nan.bottomRows(2)),
                       "f: k (2, 4) has a non-finite value nan at (1, 3)", ValueError);
  CHECK_THROWS_WITH_AS(require_queries_keys("f", m.topRows(0), m), "f: q is empty (0, 4)", ShapeError);
  CHECK_NOTHROW(require_queries_keys("f", with_nan.topRows(2), m.middleRows(1, 2)));
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

TEST_CASE("the products into a block write only the block, and add with Into::Add") {
  Matrix a(2, 3), b(3, 2);
  a << 1, 2, 3, 4, 5, 6;
  b << 7, 8, 9, 10, 11, 12;
  // a * b written out, then placed in the middle of a larger matrix of 100s
  Matrix ab(2, 2);
  ab << 58, 64, 139, 154;
  Matrix out = Matrix::Constant(4, 4, 100.0);
  matmul_into(a, b, out.block(1, 1, 2, 2));
  Matrix expected = Matrix::Constant(4, 4, 100.0);
  expected.block(1, 1, 2, 2) = ab;
  CHECK(out == expected);
  matmul_into(a, b, out.block(1, 1, 2, 2), Into::Add);
  expected.block(1, 1, 2, 2) += ab;
  CHECK(out == expected);
  // Blocks as inputs: rows 1..2 of a 4-row matrix holding a, and b's transpose
  Matrix tall = Matrix::Zero(4, 3);
  tall.middleRows(1, 2) = a;
  Matrix bt = b.transpose();
  Matrix aat(2, 2);
  aat << 14, 32, 32, 77;
  Matrix square(2, 2);
  matmul_transposed_into(tall.middleRows(1, 2), tall.middleRows(1, 2), square);
  CHECK(square == aat);
  matmul_transposed_into(tall.middleRows(1, 2), bt, square);
  CHECK(square == ab);
  // aᵀ b: a (2, 3) and a (2, 3) give (3, 3), entry (i, j) = sum over rows r of a(r, i) a(r, j)
  Matrix ata(3, 3);
  ata << 17, 22, 27, 22, 29, 36, 27, 36, 45;
  Matrix wide = Matrix::Constant(3, 3, 1.0);
  transposed_matmul_into(tall.middleRows(1, 2), a, wide, Into::Add);
  CHECK(wide == (ata.array() + 1.0).matrix());
  transposed_matmul_into(a, a, wide);
  CHECK(wide == ata);
  // Single precision: the same numbers
  Eigen::MatrixXf af = a.cast<float>(), bf = b.cast<float>(), outf(2, 2);
  matmul_into(af, bf, outf);
  CHECK(outf == ab.cast<float>());
  matmul_transposed_into(af, af, outf);
  CHECK(outf == aat.cast<float>());
  Eigen::MatrixXf ataf(3, 3);
  transposed_matmul_into(af, af, ataf);
  CHECK(ataf == ata.cast<float>());
  // Shapes that do not fit name the function, both operands and the output
  CHECK_THROWS_WITH_AS(matmul_into(a, a, out.block(0, 0, 2, 3)),
                       "matmul_into: a (2, 3) times b (2, 3): a's columns must equal b's rows", ShapeError);
  CHECK_THROWS_WITH_AS(matmul_into(a, b, out.block(0, 0, 2, 3)),
                       "matmul_into: out (2, 3) must be (2, 2) for a (2, 3) and b (3, 2)", ShapeError);
  CHECK_THROWS_AS(matmul_transposed_into(a, b, square), ShapeError);
  CHECK_THROWS_AS(matmul_transposed_into(a, a, wide), ShapeError);
  CHECK_THROWS_AS(transposed_matmul_into(a, b, wide), ShapeError);
  CHECK_THROWS_AS(transposed_matmul_into(a, a, square), ShapeError);
  CHECK_THROWS_AS(matmul_into(af, af, outf), ShapeError);
}
}
