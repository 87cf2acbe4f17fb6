// Tests of scalebook/testing.hpp: the comparison must fail where it should and explain itself.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebook/testing.hpp"

using namespace scalebook;
using namespace scalebook::testing;

// Every check binary is compiled this way (lib/CMakeLists.txt): a CHECK on a value doctest cannot
// print stops the compile instead of printing "{?}".
#ifndef DOCTEST_CONFIG_REQUIRE_STRINGIFICATION_FOR_ALL_USED_TYPES
#error "scalebook::testing must define DOCTEST_CONFIG_REQUIRE_STRINGIFICATION_FOR_ALL_USED_TYPES"
#endif

namespace {
template <class T>
std::string printed(const T& value) {
  return doctest::toString(value).c_str();
}
}  // namespace

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

namespace {
constexpr Named kHalved{"halved", "the output halved"};
constexpr Named kDoubled{"doubled", "the output doubled"};
}  // namespace

TEST_CASE("suspect names the mistake whose output matches, in the one parseable form") {
  const Matrix right = Matrix::Constant(1, 2, 1.0), wrong = Matrix::Constant(1, 2, 0.5);
  CHECK(suspect(wrong, {{kHalved, wrong}}) == "the output matches known mistake [halved]: the output halved");
  CHECK(suspect(right, {{kHalved, wrong}}).empty());
  CHECK(suspect(wrong, {{kHalved, wrong}, {kDoubled, wrong}}) ==
        "the output matches known mistake [halved]: the output halved | the output matches known mistake "
        "[doubled]: the output doubled");  // two mistakes with one output: both named, never one of them
  Matrix nan = Matrix::Constant(1, 1, std::numeric_limits<double>::quiet_NaN());
  CHECK_FALSE(suspect(nan, {{kHalved, nan}}).empty());  // a mistake whose output is NaN is matched by NaN
  CHECK(suspect(Matrix(Matrix::Zero(2, 1)), {{kHalved, Matrix(Matrix::Zero(1, 2))}}).empty());  // another shape
  CHECK(suspect_values(std::vector<double>{1, 2}, {{kHalved, {1, 2}}}).find("[halved]") != std::string::npos);
  CHECK(suspect_values(std::vector<int>{1, 2}, {{kHalved, {1, 3}}}).empty());
  CHECK(suspect_exact(3, {{kHalved, 3}}).find("[halved]") != std::string::npos);
}

TEST_CASE("a submission's text cannot forge a named mistake") {
  CHECK(submitted("f: known mistake [halved]: x") == "f: known mistake (halved]: x");
  CHECK(thrown_by([] { throw ShapeError("known mistake [halved]"); }) == "known mistake (halved]");
}

TEST_CASE("a scalar compares and prints as a number, not a 1 x 1 matrix") {
  CHECK(near(1.0, 1.0 + 1e-13));
  const MatrixMatch match = near(0.25, 0.5, 1e-12);
  CHECK_FALSE(match);
  CHECK(match.report.find("actual 0.25 vs expected 0.5") == 0);
  CHECK(match.report.find("(1, 1)") == std::string::npos);
  CHECK_FALSE(near(std::numeric_limits<double>::quiet_NaN(), 0.0));
  CHECK(suspect(0.5, {{kDoubled, 1.0}, {kHalved, 0.5}}) == "the output matches known mistake [halved]: the output halved");
  CHECK(suspect(0.7, {{kHalved, 0.5}}).empty());
}

TEST_CASE("a difference says where: the largest, how many, which rows and columns, which parts") {
  Matrix expected = Matrix::Zero(4, 6), actual = expected;
  actual(1, 2) = 1.0;
  actual(1, 3) = 0.5;
  actual(2, 3) = 0.25;
  const MatrixMatch match = near(actual, expected, 1e-12, Parts{nullptr, 0, "head", 2});
  CHECK(match.report.find("matrices differ: largest difference at (1, 2): actual 1 vs expected 0") == 0);
  CHECK(match.report.find("3 of 24 entries differ, in rows 1, 2 (of 0..3) and columns 2, 3 (of 0..5): head 1 "
                          "of 3 (2 columns each), heads 0, 2 agree") != std::string::npos);
  const MatrixMatch transposed = near(Matrix(Matrix::Zero(2, 3)), Matrix(Matrix::Zero(3, 2)));
  CHECK(transposed.report.find("(actual has expected's shape transposed)") != std::string::npos);
}

TEST_CASE("inputs are shown in full when small, by shape, range and odd entries when large") {
  CHECK(show(from_rows(2, 2, {1, 2, 3, 0.5})) == "(2, 2) [[1, 2], [3, 0.5]]");
  CHECK(show(Matrix(Matrix::Ones(3, 2))) == "(3, 2), all 1");
  CHECK(show(Matrix(0, 3)) == "(0, 3), empty");
  Matrix big = Matrix::Zero(10, 10);
  big(3, 7) = std::numeric_limits<double>::quiet_NaN();
  big(0, 0) = -2;
  CHECK(show(big) == "(10, 10), entries from -2 to 0, nan at (3, 7), first row [-2, 0, 0, 0, ...]");
  CHECK(show(Vector(Vector::LinSpaced(3, 1, 3))) == "(3, 1) [1, 2, 3]");
  CHECK(show(1e9 + 2.5) == "1000000002.5");
  CHECK(show(std::vector<int>{3, 1}) == "{3, 1}");
  const Matrix x = Matrix::Ones(3, 2);
  CHECK(call_text("f", "x, 0.1, -1", shown_args(x, 0.1, -1)) == "f(x, 0.1, -1) [input: x = (3, 2), all 1]");
  CHECK(call_text("f", "std::pair<int, int>{1, 2}, x", {"a", "b"}) == "f(std::pair<int, int>{1, 2}, x) [input: "
                                                                      "std::pair<int, int>{1, 2} = a; x = b]");
  CHECK(inputs("x, 3", x, 3) == "input: x = (3, 2), all 1; 3");
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
  CHECK(suspect_mask(a, {{kDoubled, b}, {kHalved, a}}) == "the output matches known mistake [halved]: the output halved");
  // An entry the code under test never set may hold any byte: it prints as #, never as a raw byte.
  BoolMatrix unset = b;
  const unsigned char garbage = 190;
  std::memcpy(&unset(1, 0), &garbage, 1);
  const MatrixMatch never_set = same_mask(unset, b);
  CHECK_FALSE(never_set);
  CHECK(never_set.report.find("first at (1, 0): actual neither 0 nor 1 (the byte 190: an entry never set?) vs expected 1") !=
        std::string::npos);
  CHECK(never_set.report.find("[#]") != std::string::npos);
  CHECK(never_set.report.find(static_cast<char>(garbage)) == std::string::npos);
  CHECK(show(unset) == "mask (2, 2) [11 #1], 1 neither 0 nor 1 (#)");
}

namespace {
ThrowMatch expect_shape_error(const std::function<void()>& call, const Why& why = "x must not be empty") {
  return throws_typed(call, [](const std::exception& e) { return typeid(e) == typeid(ShapeError); },
                      type_name(typeid(ShapeError)), "f", [] { return std::string("f(x)"); }, why);
}
}  // namespace

TEST_CASE("an exception check names the type that was thrown instead") {
  CHECK(expect_shape_error([] { throw ShapeError("f: x is empty (0, 3)"); }));
  const ThrowMatch wrong_type = expect_shape_error([] { throw ValueError("f: x has a NaN"); });
  CHECK_FALSE(wrong_type);
  CHECK(wrong_type.report == "f(x) threw scalebook::ValueError where scalebook::ShapeError was expected: x must not "
                             "be empty; its message: \"f: x has a NaN\"");
  const ThrowMatch std_type = expect_shape_error([] { throw std::invalid_argument("f: bad"); });
  CHECK(std_type.report.find("threw std::invalid_argument where") != std::string::npos);
  const ThrowMatch nothing = expect_shape_error([] {});
  CHECK(nothing.report == "f(x) threw nothing where scalebook::ShapeError was expected: x must not be empty");
  const ThrowMatch named = expect_shape_error([] {}, Why("x must not be empty", kHalved, kDoubled));
  CHECK(named.report == "f(x) threw nothing where scalebook::ShapeError was expected: x must not be empty | the "
                        "output matches known mistake [halved]: the output halved");
  const ThrowMatch unnamed = expect_shape_error([] { throw ShapeError("x is empty"); });
  CHECK(unnamed.report.find("must start with \"f: \"") != std::string::npos);
  const ThrowMatch from_eigen = expect_shape_error([] { (void)Matrix::Ones(2, 2)(3, 3); });
  CHECK(from_eigen.report.find("from Eigen's own assertion") != std::string::npos);
  const ThrowMatch from_inside =
      expect_shape_error([] { throw ShapeError("g: n must be positive"); }, Why("x must not be empty", kHalved, kDoubled));
  CHECK(from_inside.report.find("threw scalebook::ShapeError from g, not from f's own input checks") !=
        std::string::npos);
  CHECK(from_inside.report.find("[doubled]") != std::string::npos);
  CHECK(from_inside.report.find("[halved]") == std::string::npos);
  const ThrowMatch forged = expect_shape_error([] { throw ValueError("f: known mistake [halved]: no"); });
  CHECK(forged.report.find("[halved]") == std::string::npos);
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

TEST_CASE("every kind of value the checks compare prints readably, never as {?}") {
  BoolMatrix mask(2, 2);
  mask << true, false, true, true;
  const std::vector<std::pair<const char*, std::string>> values = {
      {"double", printed(0.1)},
      {"int", printed(3)},
      {"Index", printed(Index{3})},
      {"size_t", printed(std::size_t{3})},
      {"bool", printed(true)},
      {"string", printed(std::string("text"))},
      {"vector<double>", printed(std::vector<double>{4, 5, 3.75})},
      {"vector<int>", printed(std::vector<int>{3, 1, 4})},
      {"vector<Index>", printed(std::vector<Index>{0, 1, 2})},
      {"vector<size_t>", printed(std::vector<std::size_t>{7})},
      {"vector<bool>", printed(std::vector<bool>{true, false})},
      {"vector<string>", printed(std::vector<std::string>{"a", "b"})},
      {"vector<Matrix>", printed(std::vector<Matrix>{Matrix::Ones(1, 2), Matrix::Zero(2, 1)})},
      {"Matrix", printed(Matrix(Matrix::Ones(2, 3)))},
      {"Vector", printed(Vector(Vector::Ones(2)))},
      {"RowVector", printed(RowVector(RowVector::Ones(2)))},
      {"BoolMatrix", printed(mask)},
      {"MatrixMatch", printed(near(0.25, 0.5))},
      {"Approx", printed(doctest::Approx(0.5))},
      {"optional<Matrix>", printed(std::optional<Matrix>(Matrix::Ones(1, 1)))},
      {"optional<Matrix> empty", printed(std::optional<Matrix>())},
  };
  for (const auto& [type, text] : values) {
    CAPTURE(type);
    CHECK_MESSAGE(text.find("{?}") == std::string::npos, type << " prints as " << text);
    CHECK_MESSAGE(!text.empty(), type << " prints as nothing");
  }
  CHECK(printed(std::vector<double>{4, 5, 3.75}) == "{4, 5, 3.75}");
  CHECK(printed(std::vector<int>{3, 1, 4}) == "{3, 1, 4}");
  CHECK(printed(std::vector<bool>{true, false}) == "{1, 0}");
  CHECK(printed(std::vector<std::string>{"a", "b\n"}) == "{\"a\", \"b\\x0a\"}");
  CHECK(printed(std::vector<double>{}) == "{} (empty)");
  CHECK(printed(std::vector<Matrix>{Matrix::Ones(1, 2)}).find("1 matrix\n[0] (1, 2):\n") == 0);
  CHECK(printed(Matrix(Matrix::Ones(2, 3))).find("(2, 3):\n") == 0);
  CHECK(printed(mask) == "mask (2, 2):\n   1  0 \n   1  1 \n");
  CHECK(printed(std::optional<Matrix>()) == "no value (std::nullopt)");
}

TEST_CASE("numbers print in their shortest exact form") {
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(0.1 + 0.2) == "0.30000000000000004");  // two numbers that print alike are equal
  CHECK(format_number(-1e31) == "-1e+31");
  CHECK(format_number(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("a long list shows its head, its tail and its length") {
  std::vector<int> v(100);
  for (int i = 0; i < 100; ++i) v[static_cast<std::size_t>(i)] = i;
  CHECK(format_values(v) == "{0, 1, 2, 3, 4, 5, ..., 97, 98, 99} (100 values)");
  CHECK(format_values(std::vector<int>(12, 1)) == "{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}");  // 12: all of it
}

TEST_CASE("same_values says where two lists first differ and shows the values around it") {
  std::vector<double> expected(40), actual(40);
  for (std::size_t i = 0; i < 40; ++i) expected[i] = actual[i] = static_cast<double>(i);
  CHECK(same_values(actual, expected));
  actual[20] = 20.5;
  actual[30] = -1;
  const MatrixMatch match = same_values(actual, expected);
  CHECK_FALSE(match);
  CHECK(match.report ==
        "lists differ first at [20]: actual 20.5 vs expected 20; 2 of 40 entries differ\n"
        "actual:   {0, 1, 2, 3, 4, 5, ..., 18, 19, [20.5], 21, 22, ..., 37, 38, 39} (40 values)\n"
        "expected: {0, 1, 2, 3, 4, 5, ..., 18, 19, [20], 21, 22, ..., 37, 38, 39} (40 values)");
  CHECK(same_values(std::vector<double>{1.0}, std::vector<double>{1.0 + 1e-13}, 1e-12));
  CHECK_FALSE(same_values(std::vector<double>{1.0}, std::vector<double>{1.0 + 1e-13}));
  CHECK_FALSE(same_values(std::vector<double>{std::numeric_limits<double>::quiet_NaN()},
                          std::vector<double>{std::numeric_limits<double>::quiet_NaN()}));
  const MatrixMatch shorter = same_values(std::vector<int>{1, 2}, std::vector<int>{1, 2, 3});
  CHECK_FALSE(shorter);
  CHECK(shorter.report.find("lists differ in length: actual has 2 values, expected 3 (the first 2 agree)") == 0);
  const MatrixMatch labels = same_values(std::vector<int>{3, 1, 4}, std::vector<int>{3, 1, 5});
  CHECK(labels.report.find("lists differ first at [2]: actual 4 vs expected 5; 1 of 3 entries differ") == 0);
}

TEST_CASE("said puts the sentence first and the named mistake after it") {
  CHECK(said("f(x) is wrong", "") == "f(x) is wrong");
  CHECK(said("f(x) is wrong", suspect(0.5, {{kHalved, 0.5}})) ==
        "f(x) is wrong | the output matches known mistake [halved]: the output halved");
}
}

