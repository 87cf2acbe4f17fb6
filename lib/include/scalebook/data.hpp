// scalebook/data.hpp — the real data sets the chapters use, read from the repository's data/
// folder (copied from Debian's python3-sklearn; see data/README.md), and the CSV reader behind
// them. Nothing is downloaded.
//
//   const scalebook::Dataset boston = scalebook::load_boston();  // 506 rows, 12 features
//   const scalebook::Dataset wine = scalebook::load_wine();      // 178 rows, 13 features, 3 classes
//   const scalebook::Dataset digits = scalebook::load_digits();  // 1797 images of 8 x 8, 10 classes
/// \file
/// \brief The real data sets the chapters use, read from the repository's data/ folder, and the
/// CSV reader behind them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "scalebook/core.hpp"

namespace scalebook {

/// A data file that is missing, unreadable or malformed. The message starts with the function's
/// name and names the file (and the line, for a malformed row).
class DataError : public Error {
 public:
  using Error::Error;
};

/// The numeric rows of a CSV file and the lines before them.
struct CsvTable {
  std::vector<std::string> preamble;  ///< the first `skip_lines` lines, as read
  Matrix values;                      ///< one row per data line
};

/// Reads a comma-separated file of numbers: skips `skip_lines` lines (kept in the preamble), then
/// every non-empty line must hold exactly `columns` decimal numbers.
/// \throws DataError "read_csv: cannot open PATH" when the file is missing or unreadable;
///   "read_csv: PATH:LINE: expected 14 columns, got 13" for a row of the wrong width;
///   "read_csv: PATH:LINE: column 3 is not a number: 'abc'" for a malformed field; and when the
///   file has fewer than `skip_lines` lines or no data row.
/// \throws ShapeError if columns < 1 or skip_lines < 0.
CsvTable read_csv(const std::filesystem::path& path, Index columns, int skip_lines = 0);

/// Features (one row per example) and targets of a data set.
struct Dataset {
  Matrix x;                                 ///< (n, d) features
  Vector y;                                 ///< (n) targets: a value, or a class 0, 1, 2, ...
  std::vector<std::string> feature_names;   ///< d names
};

/// The folder holding the data files: $SCALEBOOK_DATA_DIR when set, else the repository's data/.
std::filesystem::path data_dir();

/// Boston housing (Harrison and Rubinfeld, 1978) without the "B" column: 506 rows, 12 features
/// (CRIM ZN INDUS CHAS NOX RM AGE DIS RAD TAX PTRATIO LSTAT), target MEDV in $1000s. Rows in the
/// file's order. \throws DataError if data/boston_house_prices.csv is missing or malformed.
Dataset load_boston();

/// The book's split of Boston housing, as DLwP uses it (Keras's 404 training and 102 test rows):
/// the first 404 rows of shuffled_indices(506, 113) train, the other 102 are the test set.
struct BostonSplit {
  Dataset train;  ///< 404 rows
  Dataset test;   ///< 102 rows
};
/// Boston housing, split as the book splits it (BostonSplit).
/// \throws DataError if data/boston_house_prices.csv is missing or malformed.
BostonSplit load_boston_split();

/// Wine recognition (Forina et al., UCI): 178 rows, 13 chemical measurements, classes 0, 1, 2.
/// \throws DataError if data/wine_data.csv is missing or malformed.
Dataset load_wine();

/// Handwritten digits (Alpaydin and Kaynak, UCI): 1797 images of 8 x 8 pixel counts 0..16, one
/// row each (the image row by row), classes 0..9, in the file's order; features pixel_0_0 ..
/// pixel_7_7. \throws DataError if data/digits.csv is missing or malformed.
Dataset load_digits();

/// The rows of `data` in the order given by `rows` (e.g. a shuffle or a fold).
/// \throws ShapeError if an index is out of range.
Dataset take_rows(const Dataset& data, const std::vector<Index>& rows);

/// A seeded permutation of 0 .. n-1 (Fisher–Yates from the back: for i = n-1 down to 1, swap i
/// with j = next_u64() % (i + 1) of Rng(seed)). The same seed gives the same order everywhere.
std::vector<Index> shuffled_indices(Index n, std::uint64_t seed);

}  // namespace scalebook
