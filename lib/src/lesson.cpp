// Lesson program support (see scalebook/lesson.hpp).
#include "scalebook/lesson.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>

namespace scalebook {

namespace {
std::string format_number(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}
}  // namespace

Lesson::Lesson(std::filesystem::path data_dir, bool book_run) : data_dir_(std::move(data_dir)), book_run_(book_run) {}

void Lesson::begin(const std::string& name) {
  std::fflush(stdout);
  std::cout << "== [" << name << "] ==" << std::endl;
}

void Lesson::end(const std::string& name) {
  std::fflush(stdout);
  std::cout << "-- [" << name << "] --\n" << std::endl;
}

void Lesson::claim(bool holds, const std::string& claim) {
  if (holds) return;
  failed_claims_.push_back(claim);
  std::fflush(stdout);
  std::cerr << "Lesson::claim: the page says \"" << claim << "\", and the numbers above contradict it\n";
}

void Lesson::claim_in_book(bool holds, const std::string& claim) {
  if (holds) return;
  if (book_run_) {
    this->claim(false, claim);
    return;
  }
  std::fflush(stdout);
  std::cerr << "Lesson: in the book's run \"" << claim << "\"; in yours it does not hold, which a correct solution that "
               "computes in another order may also see: the checks judge your code\n";
}

std::string Lesson::value(const std::string& name, double x, const std::string& format) {
  // One conversion of a double, with its flags, width and precision; %% anywhere; nothing else
  // that printf would read as an argument.
  static const std::regex one_double("([^%\\n]|%%)*%[-+ #0]*[0-9]*(\\.[0-9]+)?[fFeEgG]([^%\\n]|%%)*");
  if (!std::regex_match(format, one_double)) {
    throw ValueError("Lesson::value: " + name + ": the format \"" + format +
                     "\" is not one printf conversion of a double (f, e or g, e.g. \"%.3g\")");
  }
  char buffer[200];
  const int length = std::snprintf(buffer, sizeof buffer, format.c_str(), x);
  if (length < 0 || static_cast<std::size_t>(length) >= sizeof buffer) {
    throw ValueError("Lesson::value: " + name + ": the format \"" + format + "\" gives no text or too long a text");
  }
  return record_value(name, buffer);
}

std::string Lesson::record_value(const std::string& name, const std::string& text) {
  static const std::regex valid_name("[a-z][a-z0-9_]*");
  if (!std::regex_match(name, valid_name)) {
    throw ValueError("Lesson::value: \"" + name + "\" is not a value's name (lower-case letters, digits and _, "
                     "starting with a letter)");
  }
  if (std::any_of(values_.begin(), values_.end(), [&](const auto& v) { return v.first == name; })) {
    throw ValueError("Lesson::value: " + name + " is given twice");
  }
  values_.emplace_back(name, text);
  return text;
}

void Lesson::table(const std::string& file_name, std::initializer_list<std::string> header,
                   std::initializer_list<std::vector<double>> columns) const {
  if (header.size() != columns.size()) {
    throw ShapeError("Lesson::table: " + file_name + " has " + std::to_string(header.size()) +
                     " header names for " + std::to_string(columns.size()) + " columns");
  }
  const std::size_t rows = columns.size() == 0 ? 0 : columns.begin()->size();
  for (const auto& column : columns) {
    if (column.size() != rows) {
      throw ShapeError("Lesson::table: " + file_name + ": columns have different lengths");
    }
  }
  std::ofstream out(data_dir_ / file_name);
  out << '#';
  for (const auto& name : header) out << ' ' << name;
  out << '\n';
  for (std::size_t r = 0; r < rows; ++r) {
    bool first = true;
    for (const auto& column : columns) {
      out << (first ? "" : " ") << format_number(column[r]);
      first = false;
    }
    out << '\n';
  }
  if (!out) throw Error("Lesson::table: could not write " + (data_dir_ / file_name).string());
}

void Lesson::matrix(const std::string& file_name, const Matrix& m) const {
  std::ofstream out(data_dir_ / file_name);
  for (Index i = 0; i < m.rows(); ++i) {
    for (Index j = 0; j < m.cols(); ++j) out << (j ? " " : "") << format_number(m(i, j));
    out << '\n';
  }
  if (!out) throw Error("Lesson::matrix: could not write " + (data_dir_ / file_name).string());
}

int run_lesson(int argc, char** argv, const std::function<void(Lesson&)>& body) {
  const bool book_run = argc > 2 && std::string(argv[2]) == "--book";
  Lesson lesson(argc > 1 ? argv[1] : ".", book_run);
  try {
    body(lesson);
    std::fflush(stdout);
    if (!lesson.values().empty()) {
      std::cout << "== [page-numbers] ==\n";
      for (const auto& [name, text] : lesson.values()) std::cout << name << " = " << text << '\n';
      std::cout << "-- [page-numbers] --\n";
    }
    std::cout.flush();
    if (lesson.failed_claims().empty()) return 0;
    std::cerr << "\nThe lesson's numbers contradict " << lesson.failed_claims().size()
              << (lesson.failed_claims().size() == 1 ? " claim" : " claims") << " of its page:\n";
    for (const std::string& claim : lesson.failed_claims()) std::cerr << "  - " << claim << '\n';
    return 1;
  } catch (const NotImplemented& error) {
    std::cout.flush();
    std::cerr << "\nThe lesson stopped: " << error.what() << '\n';
  } catch (const Error& error) {
    std::cout.flush();
    std::cerr << "\nThe lesson stopped on an error: " << error.what() << '\n';
  }
  return 1;
}

}  // namespace scalebook
