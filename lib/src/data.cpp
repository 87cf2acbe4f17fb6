// The CSV reader and the data sets (see scalebook/data.hpp).
#include "scalebook/data.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>

#include "scalebook/random.hpp"

namespace scalebook {

namespace {

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();  // a trailing empty field
  return fields;
}

// A whole field as a finite or infinite decimal number; false for "", "abc", "1.5x".
bool parse_number(const std::string& text, double& value) {
  std::size_t begin = text.find_first_not_of(" \t");
  std::size_t end = text.find_last_not_of(" \t");
  if (begin == std::string::npos) return false;
  const std::string trimmed = text.substr(begin, end - begin + 1);
  char* stop = nullptr;
  errno = 0;
  value = std::strtod(trimmed.c_str(), &stop);
  return stop == trimmed.c_str() + trimmed.size() && errno != ERANGE;
}

}  // namespace

CsvTable read_csv(const std::filesystem::path& path, Index columns, int skip_lines) {
  if (columns < 1) throw ShapeError("read_csv: columns must be positive, got " + std::to_string(columns));
  if (skip_lines < 0) throw ShapeError("read_csv: skip_lines must be >= 0, got " + std::to_string(skip_lines));
  std::ifstream in(path);
  if (!in) throw DataError("read_csv: cannot open " + path.string() + " (missing or unreadable)");
  CsvTable table;
  std::vector<double> values;
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
    if (number <= skip_lines) {
      table.preamble.push_back(line);
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines
    const std::vector<std::string> fields = split_commas(line);
    const std::string where = "read_csv: " + path.string() + ":" + std::to_string(number) + ": ";
    if (static_cast<Index>(fields.size()) != columns) {
      throw DataError(where + "expected " + std::to_string(columns) + " columns, got " +
                      std::to_string(fields.size()));
    }
    for (std::size_t c = 0; c < fields.size(); ++c) {
      double value = 0.0;
      if (!parse_number(fields[c], value)) {
        throw DataError(where + "column " + std::to_string(c + 1) + " is not a number: '" +
                        fields[c] + "'");
      }
      values.push_back(value);
    }
  }
  if (number < skip_lines) {
    throw DataError("read_csv: " + path.string() + " has " + std::to_string(number) +
                    " lines, fewer than the " + std::to_string(skip_lines) + " to skip");
  }
  if (values.empty()) throw DataError("read_csv: " + path.string() + " has no data rows");
  const Index rows = static_cast<Index>(values.size()) / columns;
  table.values = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      values.data(), rows, columns);
  return table;
}

Dataset load_boston() {
  const std::filesystem::path path = data_dir() / "boston_house_prices.csv";
  // Line 1: "506,13,,,..."; line 2: the 14 column names; then 506 rows of 13 features and MEDV.
  const CsvTable table = read_csv(path, 14, 2);
  if (table.values.rows() != 506) {
    throw DataError("load_boston: " + path.string() + " has " + std::to_string(table.values.rows()) +
                    " rows, expected 506");
  }
  const std::vector<std::string> names = {"CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE",
                                          "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT"};
  const Index b_column = 11;  // dropped: see data/README.md
  Dataset data;
  data.x.resize(table.values.rows(), 12);
  for (Index c = 0, out = 0; c < 13; ++c) {
    if (c == b_column) continue;
    data.x.col(out++) = table.values.col(c);
    data.feature_names.push_back(names[static_cast<std::size_t>(c)]);
  }
  data.y = table.values.col(13);
  return data;
}

BostonSplit load_boston_split() {
  const Dataset all = load_boston();
  const std::vector<Index> order = shuffled_indices(all.x.rows(), 113);
  const std::vector<Index> train(order.begin(), order.begin() + 404), test(order.begin() + 404, order.end());
  return {take_rows(all, train), take_rows(all, test)};
}

Dataset load_wine() {
  const std::filesystem::path path = data_dir() / "wine_data.csv";
  // Line 1: "178,13,class_0,class_1,class_2"; then 178 rows of 13 measurements and the class.
  const CsvTable table = read_csv(path, 14, 1);
  if (table.values.rows() != 178) {
    throw DataError("load_wine: " + path.string() + " has " + std::to_string(table.values.rows()) +
                    " rows, expected 178");
  }
  Dataset data;
  data.x = table.values.leftCols(13);
  data.y = table.values.col(13);
  data.feature_names = {"alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
                        "total_phenols", "flavanoids", "nonflavanoid_phenols", "proanthocyanins",
                        "color_intensity", "hue", "od280/od315", "proline"};
  return data;
}

Dataset load_digits() {
  const std::filesystem::path path = data_dir() / "digits.csv";
  // No header: 1797 rows of 64 pixel counts and the digit.
  const CsvTable table = read_csv(path, 65, 0);
  if (table.values.rows() != 1797) {
    throw DataError("load_digits: " + path.string() + " has " + std::to_string(table.values.rows()) +
                    " rows, expected 1797");
  }
  Dataset data;
  data.x = table.values.leftCols(64);
  data.y = table.values.col(64);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) data.feature_names.push_back("pixel_" + std::to_string(r) + "_" + std::to_string(c));
  return data;
}

Dataset take_rows(const Dataset& data, const std::vector<Index>& rows) {
  Dataset out;
  out.x.resize(static_cast<Index>(rows.size()), data.x.cols());
  out.y.resize(static_cast<Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Index r = rows[i];
    if (r < 0 || r >= data.x.rows()) {
      throw ShapeError("take_rows: row " + std::to_string(r) + " is out of range for " +
                       std::to_string(data.x.rows()) + " rows");
    }
    out.x.row(static_cast<Index>(i)) = data.x.row(r);
    out.y(static_cast<Index>(i)) = data.y(r);
  }
  out.feature_names = data.feature_names;
  return out;
}

std::vector<Index> shuffled_indices(Index n, std::uint64_t seed) {
  if (n < 0) throw ShapeError("shuffled_indices: n must be >= 0, got " + std::to_string(n));
  std::vector<Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Index{0});
  Rng rng(seed);
  for (Index i = n - 1; i > 0; --i) {
    const Index j = static_cast<Index>(rng.next_u64() % static_cast<std::uint64_t>(i + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

}  // namespace scalebook
