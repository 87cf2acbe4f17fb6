// Chapter 5's PyTorch fixtures, compiled in (see CMakeLists.txt and fixtures/): the checks and the
// lesson read them from here, never from the file system.
//
//   const Matrix w = fixture("in_proj_weight");    // fixtures/in_proj_weight.csv
//   const MultiHeadParams p = fixture_params();    // E = 12, H = 3, as PyTorch's layer
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "multi_head.hpp"

namespace scalebook::ch05 {

namespace detail {
struct EmbeddedFixture {
  const char* name;
  const char* csv;
};
inline const EmbeddedFixture kFixtures[] = {
#include "ch05_fixtures.inc"
};
}  // namespace detail

/// The fixture NAME (fixtures/NAME.csv) as a matrix; "nan" entries are NaN. Throws Error when
/// there is no such fixture or its rows differ in length.
inline Matrix fixture(std::string_view name) {
  for (const auto& f : detail::kFixtures) {
    if (name != f.name) continue;
    std::vector<std::vector<double>> rows;
    std::istringstream lines(f.csv);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<double> row;
      std::istringstream cells(line);
      std::string cell;
      while (std::getline(cells, cell, ',')) row.push_back(std::strtod(cell.c_str(), nullptr));
      if (!rows.empty() && row.size() != rows.front().size())
        throw Error("fixture " + std::string(name) + ": rows of different lengths");
      rows.push_back(std::move(row));
    }
    Matrix m(static_cast<Index>(rows.size()), rows.empty() ? 0 : static_cast<Index>(rows[0].size()));
    for (Index i = 0; i < m.rows(); ++i)
      for (Index j = 0; j < m.cols(); ++j) m(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    return m;
  }
  throw Error("no fixture named " + std::string(name) + " (chapters/05-multi-head/fixtures/)");
}

/// The layer the fixtures were made with: E = 12, H = 3, PyTorch's parameters.
inline MultiHeadParams fixture_params() {
  MultiHeadParams p;
  p.num_heads = 3;
  p.in_proj_weight = fixture("in_proj_weight");
  p.in_proj_bias = fixture("in_proj_bias").col(0);
  p.out_proj_weight = fixture("out_proj_weight");
  p.out_proj_bias = fixture("out_proj_bias").col(0);
  return p;
}

}  // namespace scalebook::ch05
