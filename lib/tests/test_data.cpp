// Tests of scalebook/data.hpp: the CSV reader on broken files, and the shipped data sets.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "scalebook/data.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
namespace fs = std::filesystem;

namespace {

// A file with the given text in a fresh temporary folder; removed with the folder at exit.
struct TempFile {
  fs::path dir, path;
  TempFile(const std::string& name, const std::string& text) {
    dir = fs::temp_directory_path() / ("scalebook_test_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(dir);
    path = dir / name;
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove_all(dir); }
};

std::string message_of(const fs::path& path, Index columns, int skip) {
  try {
    read_csv(path, columns, skip);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("lib") {

TEST_CASE("read_csv reads numbers after the preamble, skipping blank lines") {
  TempFile file("ok.csv", "2,3\na,b,c\n1,2,3\n\n4.5,-6e-1, 7 \r\n");
  const CsvTable t = read_csv(file.path, 3, 2);
  REQUIRE(t.preamble.size() == 2);
  CHECK(t.preamble[1] == "a,b,c");
  REQUIRE(t.values.rows() == 2);
  CHECK(t.values(1, 0) == 4.5);
  CHECK(t.values(1, 1) == -0.6);
  CHECK(t.values(1, 2) == 7.0);
}

TEST_CASE("read_csv: a missing file names the path") {
  const fs::path missing = fs::temp_directory_path() / "scalebook_no_such_file.csv";
  const std::string message = message_of(missing, 3, 0);
  CHECK(contains(message, "read_csv: cannot open"));
  CHECK(contains(message, missing.string()));
}

TEST_CASE("read_csv: a row of the wrong width names file, line, expected and got") {
  TempFile narrow("narrow.csv", "h\n1,2,3\n4,5\n");
  CHECK(message_of(narrow.path, 3, 1) == "read_csv: " + narrow.path.string() + ":3: expected 3 columns, got 2");
  TempFile wide("wide.csv", "1,2,3,4\n");
  CHECK(message_of(wide.path, 3, 0) == "read_csv: " + wide.path.string() + ":1: expected 3 columns, got 4");
  TempFile trailing("trailing.csv", "1,2,3,\n");
  CHECK(contains(message_of(trailing.path, 3, 0), "expected 3 columns, got 4"));
}

TEST_CASE("read_csv: a malformed field names file, line and column") {
  TempFile file("bad.csv", "1,2,3\n4,x5,6\n");
  CHECK(message_of(file.path, 3, 0) == "read_csv: " + file.path.string() + ":2: column 2 is not a number: 'x5'");
  TempFile empty_field("empty_field.csv", "1,,3\n");
  CHECK(contains(message_of(empty_field.path, 3, 0), ":1: column 2 is not a number: ''"));
  TempFile suffix("suffix.csv", "1,2.5kg,3\n");
  CHECK(contains(message_of(suffix.path, 3, 0), "column 2 is not a number"));
}

TEST_CASE("read_csv: no data rows, or fewer lines than the preamble, is a DataError") {
  TempFile only_header("only_header.csv", "a,b\n");
  CHECK(contains(message_of(only_header.path, 2, 1), "has no data rows"));
  TempFile short_file("short.csv", "a,b\n");
  CHECK(contains(message_of(short_file.path, 2, 3), "fewer than the 3 to skip"));
  CHECK_THROWS_AS(read_csv(short_file.path, 0, 0), ShapeError);
  CHECK_THROWS_AS(read_csv(short_file.path, 2, -1), ShapeError);
}

TEST_CASE("load_boston: 506 rows, 12 features without B, the file's first and last rows") {
  const Dataset boston = load_boston();
  REQUIRE(boston.x.rows() == 506);
  REQUIRE(boston.x.cols() == 12);
  REQUIRE(boston.y.rows() == 506);
  CHECK(boston.feature_names.size() == 12);
  CHECK(boston.feature_names[11] == "LSTAT");
  for (const std::string& name : boston.feature_names) CHECK(name != "B");
  // Row 1 of the file: 0.00632,18,2.31,0,0.538,6.575,65.2,4.09,1,296,15.3,396.9,4.98,24
  CHECK(boston.x(0, 0) == 0.00632);
  CHECK(boston.x(0, 10) == 15.3);   // PTRATIO
  CHECK(boston.x(0, 11) == 4.98);   // LSTAT, right after the dropped B = 396.9
  CHECK(boston.y(0) == 24.0);
  CHECK(boston.y(505) == 11.9);     // the last row's MEDV
}

TEST_CASE("load_wine: 178 rows, 13 features, classes 0 1 2 with 59 71 48 members") {
  const Dataset wine = load_wine();
  REQUIRE(wine.x.rows() == 178);
  REQUIRE(wine.x.cols() == 13);
  int counts[3] = {0, 0, 0};
  for (Index i = 0; i < wine.y.rows(); ++i) {
    REQUIRE((wine.y(i) == 0.0 || wine.y(i) == 1.0 || wine.y(i) == 2.0));
    ++counts[static_cast<int>(wine.y(i))];
  }
  CHECK(counts[0] == 59);
  CHECK(counts[1] == 71);
  CHECK(counts[2] == 48);
  CHECK(wine.x(0, 12) == 1065.0);  // proline of the first wine
}

TEST_CASE("load_digits: 1797 images of 64 pixels 0..16, classes 0..9 with the file's counts") {
  const Dataset digits = load_digits();
  REQUIRE(digits.x.rows() == 1797);
  REQUIRE(digits.x.cols() == 64);
  CHECK(digits.x.minCoeff() == 0.0);
  CHECK(digits.x.maxCoeff() == 16.0);
  int counts[10] = {};
  for (Index i = 0; i < digits.y.rows(); ++i) {
    REQUIRE(digits.y(i) >= 0.0);
    REQUIRE(digits.y(i) <= 9.0);
    ++counts[static_cast<int>(digits.y(i))];
  }
  const int expected[10] = {178, 182, 177, 183, 181, 182, 181, 179, 174, 180};  // awk over the file
  for (int c = 0; c < 10; ++c) CHECK(counts[c] == expected[c]);
  CHECK(digits.x(0, 2) == 5.0);  // the first image's third pixel
  CHECK(digits.y(0) == 0.0);
  CHECK(digits.feature_names.back() == "pixel_7_7");
}

TEST_CASE("the data folder can be moved: SCALEBOOK_DATA_DIR, and a missing file is a DataError") {
  TempFile file("boston_house_prices.csv", "506,13\nnames\n1,2\n");
  ::setenv("SCALEBOOK_DATA_DIR", file.dir.c_str(), 1);
  CHECK(data_dir() == file.dir);
  CHECK_THROWS_AS(load_boston(), DataError);  // the row is 2 columns wide
  CHECK_THROWS_AS(load_wine(), DataError);    // no wine_data.csv there
  ::unsetenv("SCALEBOOK_DATA_DIR");
  CHECK_NOTHROW(load_wine());
}

TEST_CASE("shuffled_indices is a seeded permutation and the Boston split is 404 plus 102 rows") {
  const std::vector<Index> a = shuffled_indices(506, 113), b = shuffled_indices(506, 113);
  CHECK(a == b);
  std::vector<Index> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (Index i = 0; i < 506; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
  CHECK(a != shuffled_indices(506, 114));
  const BostonSplit split = load_boston_split();
  CHECK(split.train.x.rows() == 404);
  CHECK(split.test.x.rows() == 102);
  const Dataset boston = load_boston();
  CHECK(split.train.x.row(0) == boston.x.row(a[0]));
  CHECK(split.test.y(101) == boston.y(a[505]));
  CHECK_THROWS_AS(take_rows(boston, {0, 506}), ShapeError);
}

}  // TEST_SUITE
