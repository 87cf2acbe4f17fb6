// scalebook/lesson.hpp — what every lesson program shares: a main that turns the workbook's errors
// into a readable message (a student's missing exercise is named, not a crash), sections that the
// docs cut out with \snippet, data tables for the figures, and the named numbers a page quotes.
//
//   int main(int argc, char** argv) {
//     return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
//       lesson.begin("worked-example");   // prints "== [worked-example] =="
//       std::printf("...");
//       lesson.end("worked-example");     // prints "-- [worked-example] --"
//       lesson.table("ch03_variance.dat", {"d_k", "var"}, {dks, vars});
//       lesson.claim(vars.back() > vars.front(), "the variance grows with d_k");
//       lesson.value("largest_variance", vars.back(), "%.1f");  // the page writes {{largest_variance}}
//     });
//   }
#pragma once

#include <filesystem>
#include <functional>
#include <concepts>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "scalebook/core.hpp"

namespace scalebook {

class Lesson {
 public:
  explicit Lesson(std::filesystem::path data_dir, bool book_run = false);

  /// Starts / ends a section the docs can show with \snippet NN-topic/lesson.out name.
  void begin(const std::string& name);
  void end(const std::string& name);

  /// Writes a whitespace-separated table (a '#' header line, then one row per line, %.17g numbers)
  /// into the data folder, for gnuplot. All columns must have the same length.
  void table(const std::string& file_name, std::initializer_list<std::string> header,
             std::initializer_list<std::vector<double>> columns) const;

  /// States that a sentence of the chapter's page holds for the numbers just printed: does nothing
  /// when \p holds is true; otherwise names \p claim on standard error at once and again when the
  /// lesson ends, and run_lesson returns non-zero, so that the docs build stops instead of showing a
  /// page its numbers contradict. The lesson goes on meanwhile: a student whose exercise breaks
  /// one claim still sees every number, and every claim that fails.
  void claim(bool holds, const std::string& claim);

  /// States a sentence of the page about the book's own numbers that a correct solution computing in
  /// another order need not repeat to the last bit ("here bit for bit", "to 1e-15"). On the book's
  /// run (the lesson started with --book, as the docs build does) it is a claim like any other; on
  /// a student's run (`./workbook run`) a sentence that does not hold is noted on standard error and
  /// fails nothing: the checks, not the page's last digits, judge the student's code. Pair it with a
  /// claim() every correct solution keeps (the checks' tolerance).
  void claim_in_book(bool holds, const std::string& claim);

  /// Names a number the chapter's page states about this run: the page writes {{name}} where the
  /// number goes, and the docs build puts this text there (tools/scalebook/prose.py); a page that
  /// names a value its lesson did not give fails the docs build. \p format is a printf format with
  /// one conversion of a double (f, e or g, with flags, width and precision; %% for a percent
  /// sign). Returns the text, so that the lesson can print the very same digits. The values are
  /// printed after the lesson's sections, one `name = text` a line in the section
  /// "page-numbers", so that `./workbook run N --diff` sets a student's beside the book's.
  /// \throws ValueError for a name that is not lower-case letters, digits and _ (starting with a
  ///   letter), a name given twice, or a format that is not one conversion of a double.
  std::string value(const std::string& name, double x, const std::string& format);
  /// A count (rows, epochs, a width) the page states, printed in full.
  template <std::integral Integer>
  std::string value(const std::string& name, Integer count) {
    return record_value(name, std::to_string(count));
  }

  /// The named values given so far, in order.
  const std::vector<std::pair<std::string, std::string>>& values() const { return values_; }

  /// Whether this is the book's run: the lesson was started with --book (see run_lesson).
  bool book_run() const { return book_run_; }

  /// The claims that did not hold, in order.
  const std::vector<std::string>& failed_claims() const { return failed_claims_; }

  /// Writes a matrix (one row per line, %.17g) into the data folder, for heatmaps.
  void matrix(const std::string& file_name, const Matrix& m) const;

  const std::filesystem::path& data_dir() const { return data_dir_; }

 private:
  std::string record_value(const std::string& name, const std::string& text);

  std::filesystem::path data_dir_;
  bool book_run_ = false;
  std::vector<std::string> failed_claims_;
  std::vector<std::pair<std::string, std::string>> values_;
};

/// Runs a lesson body: argv[1] (default ".") is the folder for data files; a second argument --book
/// marks the book's run (the docs build's, where claim_in_book binds). After the body, prints the
/// named values (Lesson::value) in the section "page-numbers". Returns 0 on success;
/// on a NotImplemented exercise or another scalebook::Error prints what happened to stderr and
/// returns 1; after a body in which a claim failed, lists the failed claims and returns 1.
int run_lesson(int argc, char** argv, const std::function<void(Lesson&)>& body);

}  // namespace scalebook
