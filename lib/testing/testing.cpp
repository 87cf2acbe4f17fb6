// Matrix comparison and mistake diagnosis for the checks (see scalebook/testing.hpp).
#include "scalebook/testing.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstring>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>

namespace scalebook::testing {

namespace {
constexpr Index kShown = 8;

std::string format_entry(double x) {
  std::ostringstream out;
  out << std::setprecision(6) << x;
  return out.str();
}

// "0, 2, 5..7": indices as short runs.
std::string runs(const std::vector<Index>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(indices[i]);
    if (j == i + 1) out += ", " + std::to_string(indices[j]);
    else if (j > i) out += ".." + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

// "query" -> "queries", "head" -> "heads".
std::string plural(const std::string& word) {
  if (word.size() > 1 && word.back() == 'y' && std::string("aeiou").find(word[word.size() - 2]) == std::string::npos)
    return word.substr(0, word.size() - 1) + "ies";
  return word + "s";
}

// "in rows 1, 2 (of 0..4) and every column", or with parts: "in head 1 (columns 4..7) and
// head 2 (columns 8..11); head 0 agrees".
std::string where(const std::vector<std::vector<bool>>& differs, Index rows, Index cols, const Parts& parts) {
  std::vector<Index> bad_rows, bad_cols;
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j)
      if (differs[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) {
        if (bad_rows.empty() || bad_rows.back() != i) bad_rows.push_back(i);
      }
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i)
      if (differs[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) {
        bad_cols.push_back(j);
        break;
      }
  const auto axis = [](const std::vector<Index>& bad, Index count, const char* name, const char* part, Index per) {
    std::string text;
    if (static_cast<Index>(bad.size()) == count) {
      text = std::string("every ") + name + " (" + std::to_string(count) + ")";
    } else {
      text = std::string(name) + "s " + runs(bad) + " (of 0.." + std::to_string(count - 1) + ")";
    }
    if (part != nullptr && per == 1) {  // each row (column) is one part: name them
      text += ": " + (bad.size() == 1 ? std::string(part) : plural(part)) + " " + runs(bad);
    } else if (part != nullptr && per > 1) {
      std::vector<Index> bad_parts, good_parts;
      const Index parts_count = count / per + (count % per != 0 ? 1 : 0);  // any per >= 1, up to the largest Index
      for (Index p = 0; p < parts_count; ++p) {
        const bool any = std::any_of(bad.begin(), bad.end(), [&](Index x) { return x / per == p; });
        (any ? bad_parts : good_parts).push_back(p);
      }
      text += ": " + (bad_parts.size() == 1 ? std::string(part) : plural(part)) + " " + runs(bad_parts) + " of " +
              std::to_string(parts_count) + " (" + std::to_string(std::min(per, count)) + " " + name + "s each)";
      if (!good_parts.empty()) text += ", " + (good_parts.size() == 1 ? std::string(part) : plural(part)) + " " +
                                       runs(good_parts) + (good_parts.size() == 1 ? " agrees" : " agree");
    }
    return text;
  };
  return "in " + axis(bad_rows, rows, "row", parts.row_part, parts.rows_per_part) + " and " +
         axis(bad_cols, cols, "column", parts.col_part, parts.cols_per_part);
}

MatrixMatch compare(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                    double tol, bool exact, const Parts& parts) {
  MatrixMatch match;
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    std::string same_size;
    if (actual.size() == expected.size() && actual.size() > 0)
      same_size = " (the same number of entries, " + std::to_string(actual.size()) + ", in another shape" +
                  (actual.rows() == expected.cols() && actual.cols() == expected.rows() ? ": transposed?" : "") + ")";
    match.report = "shapes differ: actual " + shape_of(actual) + " vs expected " + shape_of(expected) + same_size +
                   "\nactual:\n" + format_matrix(actual) + "expected:\n" + format_matrix(expected);
    if (actual.rows() == expected.cols() && actual.cols() == expected.rows()) {
      match.report = "shapes differ: actual " + shape_of(actual) + " vs expected " + shape_of(expected) +
                     " (actual has expected's shape transposed)\nactual:\n" + format_matrix(actual) + "expected:\n" +
                     format_matrix(expected);
    }
    return match;
  }
  double worst = -1.0;
  Index worst_i = -1, worst_j = -1, differing = 0;
  std::vector<std::vector<bool>> differs(static_cast<std::size_t>(actual.rows()),
                                         std::vector<bool>(static_cast<std::size_t>(actual.cols()), false));
  for (Index j = 0; j < actual.cols(); ++j) {
    for (Index i = 0; i < actual.rows(); ++i) {
      const double a = actual(i, j), e = expected(i, j);
      double excess = 0.0;  // how far past its tolerance this entry is
      if (exact) {
        const bool same = (a == e && std::signbit(a) == std::signbit(e)) || (std::isnan(a) && std::isnan(e));
        excess = same ? 0.0 : (std::isfinite(a - e) ? std::abs(a - e) : INFINITY);
        if (!same && excess == 0.0) excess = 1e-300;  // +0 vs -0
      } else if (std::isnan(a) || std::isnan(e)) {
        excess = INFINITY;
      } else if (a != e) {
        const double diff = std::abs(a - e);
        excess = diff <= tol * std::max(1.0, std::abs(e)) ? 0.0 : (std::isfinite(diff) ? diff : INFINITY);
      }
      if (excess > 0.0) {
        ++differing;
        differs[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = true;
      }
      if (excess > worst) {
        worst = excess;
        worst_i = i;
        worst_j = j;
      }
    }
  }
  if (worst <= 0.0) {
    match.ok = true;
    return match;
  }
  std::ostringstream out;
  out << "matrices differ: largest difference at (" << worst_i << ", " << worst_j << "): actual "
      << format_number(actual(worst_i, worst_j)) << " vs expected " << format_number(expected(worst_i, worst_j));
  if (exact) out << " (bit-identical required)";
  else out << " (tolerance " << tol << ")";
  out << "; " << differing << " of " << actual.size() << " entries differ, "
      << where(differs, actual.rows(), actual.cols(), parts);
  out << "\nactual " << shape_of(actual) << ":\n" << format_matrix(actual, worst_i, worst_j)
      << "expected " << shape_of(expected) << ":\n" << format_matrix(expected, worst_i, worst_j);
  match.report = out.str();
  return match;
}
}  // namespace

MatrixMatch near(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                 double tol, const Parts& parts) {
  return compare(actual, expected, tol, false, parts);
}

MatrixMatch identical(const Eigen::Ref<const Matrix>& actual,
                      const Eigen::Ref<const Matrix>& expected, const Parts& parts) {
  return compare(actual, expected, 0.0, true, parts);
}

namespace {
bool numbers_near(double actual, double expected, double tol) {
  if (std::isnan(actual) || std::isnan(expected)) return false;
  if (actual == expected) return true;
  return std::abs(actual - expected) <= tol * std::max(1.0, std::abs(expected));
}

}  // namespace

namespace {
// A mask entry's byte, read without reading a bool: an entry the code under test never set may
// hold any byte, and a bool that is neither 0 nor 1 cannot be printed or compared reliably.
unsigned char mask_byte(const BoolMatrix& m, Index i, Index j) {
  unsigned char byte = 0;
  std::memcpy(&byte, &m(i, j), 1);
  return byte;
}

std::string mask_entry(unsigned char byte) {
  if (byte <= 1) return byte == 1 ? "1" : "0";
  return "neither 0 nor 1 (the byte " + std::to_string(byte) + ": an entry never set?)";
}
}  // namespace

std::string format_mask(const BoolMatrix& m, Index mark_row, Index mark_col) {
  std::ostringstream out;
  const Index rows = std::min(m.rows(), Index{16}), cols = std::min(m.cols(), Index{16});
  bool unset = false;
  for (Index i = 0; i < rows; ++i) {
    out << "  ";
    for (Index j = 0; j < cols; ++j) {
      const bool marked = i == mark_row && j == mark_col;
      const unsigned char byte = mask_byte(m, i, j);
      unset = unset || byte > 1;
      out << (marked ? '[' : ' ') << (byte > 1 ? '#' : byte == 1 ? '1' : '0') << (marked ? ']' : ' ');
    }
    if (m.cols() > cols) out << " ...";
    out << '\n';
  }
  if (m.rows() > rows) out << "  ...\n";
  if (m.size() == 0) out << "  (empty)\n";
  if (unset) out << "  (# is neither 0 nor 1: an entry never set?)\n";
  return out.str();
}

std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof text, x);
  return error == std::errc() ? std::string(text, end) : std::to_string(x);
}

namespace {
constexpr std::size_t kListShown = 12, kListHead = 6, kListTail = 3;

// "{a, b, c}": every entry of a short list; of a long one the head, the tail and, when mark is
// an index, the entries around it, with "..." for the entries left out; mark is shown [bracketed].
template <class T, class Text>
std::string braces(const std::vector<T>& values, Text text, std::size_t mark = SIZE_MAX) {
  const std::size_t n = values.size();
  if (n == 0) return "{} (empty)";
  std::vector<bool> shown(n, n <= kListShown);
  for (std::size_t i = 0; i < n; ++i) {
    const bool near_mark = mark != SIZE_MAX && i + 2 >= mark && i <= mark + 2;
    if (i < kListHead || i + kListTail >= n || near_mark) shown[i] = true;
  }
  std::string out = "{";
  bool gap = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!shown[i]) {
      gap = true;
      continue;
    }
    if (out.size() > 1) out += ", ";
    if (gap) out += "..., ";
    gap = false;
    out += i == mark ? "[" + text(values[i]) + "]" : text(values[i]);
  }
  out += "}";
  if (n > kListShown) out += " (" + std::to_string(n) + " values)";
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

template <class T, class Equal, class Text>
MatrixMatch compare_lists(const std::vector<T>& actual, const std::vector<T>& expected, Equal equal,
                          Text text, const std::string& tolerance) {
  MatrixMatch match;
  std::size_t first = 0;
  const std::size_t common = std::min(actual.size(), expected.size());
  while (first < common && equal(actual[first], expected[first])) ++first;
  if (first == common && actual.size() == expected.size()) {
    match.ok = true;
    return match;
  }
  std::string head;
  if (first < common) {
    head = "lists differ first at [" + std::to_string(first) + "]: actual " + text(actual[first]) +
           " vs expected " + text(expected[first]) + tolerance;
    std::size_t differing = 0;
    for (std::size_t i = first; i < common; ++i) differing += equal(actual[i], expected[i]) ? 0 : 1;
    head += "; " + std::to_string(differing) + " of " + std::to_string(common) + " entries differ";
    if (actual.size() != expected.size()) head += ", and the lengths too";
  } else {
    head = "lists differ in length: actual has " + std::to_string(actual.size()) + " values, expected " +
           std::to_string(expected.size()) + " (the first " + std::to_string(common) + " agree)";
  }
  const std::size_t mark = first < common ? first : SIZE_MAX;
  match.report = head + "\nactual:   " + braces(actual, text, mark) + "\nexpected: " +
                 braces(expected, text, mark);
  return match;
}
}  // namespace

std::string format_values(const std::vector<double>& values) {
  return braces(values, [](double x) { return format_number(x); });
}

std::string format_values(const std::vector<long long>& values) {
  return braces(values, [](long long x) { return std::to_string(x); });
}

std::string format_values(const std::vector<std::string>& values) {
  return braces(values, quoted);
}

std::string format_matrices(const std::vector<Matrix>& matrices) {
  if (matrices.empty()) return "no matrices (an empty list)";
  std::string out = std::to_string(matrices.size()) + (matrices.size() == 1 ? " matrix" : " matrices");
  const std::size_t shown = std::min<std::size_t>(matrices.size(), 4);
  for (std::size_t i = 0; i < shown; ++i)
    out += "\n[" + std::to_string(i) + "] " + shape_of(matrices[i]) + ":\n" + format_matrix(matrices[i]);
  if (matrices.size() > shown) out += "... and " + std::to_string(matrices.size() - shown) + " more\n";
  return out;
}

MatrixMatch same_values(const std::vector<double>& actual, const std::vector<double>& expected, double tol) {
  std::ostringstream tolerance;
  if (tol > 0.0) tolerance << " (tolerance " << tol << ")";
  return compare_lists(
      actual, expected,
      [tol](double a, double e) {
        if (std::isnan(a) || std::isnan(e)) return false;
        return a == e || std::abs(a - e) <= tol * std::max(1.0, std::abs(e));
      },
      [](double x) { return format_number(x); }, tolerance.str());
}

MatrixMatch same_values(const std::vector<long long>& actual, const std::vector<long long>& expected) {
  return compare_lists(
      actual, expected, [](long long a, long long e) { return a == e; },
      [](long long x) { return std::to_string(x); }, "");
}

MatrixMatch near(double actual, double expected, double tol) {
  MatrixMatch match;
  match.ok = numbers_near(actual, expected, tol);
  if (!match.ok) {
    std::ostringstream out;
    out << "actual " << format_number(actual) << " vs expected " << format_number(expected)
        << " (difference " << std::setprecision(3) << std::abs(actual - expected) << ", tolerance "
        << tol << ")";
    match.report = out.str();
  }
  return match;
}

MatrixMatch same_mask(const BoolMatrix& actual, const BoolMatrix& expected) {
  MatrixMatch match;
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    match.report = "masks differ in shape: actual " + shape_of(actual) + " vs expected " +
                   shape_of(expected) + "\nactual:\n" + format_mask(actual, -1, -1) +
                   "expected:\n" + format_mask(expected, -1, -1);
    return match;
  }
  Index differing = 0, first_i = -1, first_j = -1;
  for (Index i = 0; i < actual.rows(); ++i) {
    for (Index j = 0; j < actual.cols(); ++j) {
      if (mask_byte(actual, i, j) == mask_byte(expected, i, j)) continue;
      if (differing++ == 0) {
        first_i = i;
        first_j = j;
      }
    }
  }
  if (differing == 0) {
    match.ok = true;
    return match;
  }
  std::ostringstream out;
  out << "masks differ in " << differing << " of " << actual.size() << " entries, first at ("
      << first_i << ", " << first_j << "): actual " << mask_entry(mask_byte(actual, first_i, first_j))
      << " vs expected " << mask_entry(mask_byte(expected, first_i, first_j)) << "\nactual " << shape_of(actual) << ":\n"
      << format_mask(actual, first_i, first_j) << "expected " << shape_of(expected) << ":\n"
      << format_mask(expected, first_i, first_j);
  match.report = out.str();
  return match;
}

namespace detail {
std::string name_mistakes(const std::vector<Named>& mistakes) {
  std::string out;
  std::vector<std::string> said;  // a mistake listed twice (two spellings of one slip) is named once
  for (const Named& mistake : mistakes) {
    if (std::find(said.begin(), said.end(), mistake.id) != said.end()) continue;
    said.push_back(mistake.id);
    if (!out.empty()) out += " | ";
    out += std::string("the output matches ") + kMistakeForm + mistake.id + "]: " + mistake.text;
  }
  return out;
}

std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("; ") : std::string(1, c);
  return out;
}
}  // namespace detail

namespace {
// Equal as a named mistake's output: both NaN, the same infinity, or within tol * max(1, |output|).
bool same_output(double actual, double output, double tol) {
  if (std::isnan(actual) || std::isnan(output)) return std::isnan(actual) && std::isnan(output);
  if (actual == output) return true;
  return std::abs(actual - output) <= tol * std::max(1.0, std::abs(output));
}

bool same_output(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& output, double tol) {
  if (actual.rows() != output.rows() || actual.cols() != output.cols()) return false;
  for (Index i = 0; i < actual.rows(); ++i)
    for (Index j = 0; j < actual.cols(); ++j)
      if (!same_output(actual(i, j), output(i, j), tol)) return false;
  return true;
}
}  // namespace

std::string suspect(double actual, std::initializer_list<ScalarMistake> mistakes, double tol) {
  std::vector<Named> found;
  for (const ScalarMistake& mistake : mistakes)
    if (same_output(actual, mistake.output, tol)) found.push_back(mistake.mistake);
  return detail::name_mistakes(found);
}

std::string suspect_mask(const BoolMatrix& actual, std::initializer_list<MaskMistake> mistakes) {
  std::vector<Named> found;
  for (const MaskMistake& mistake : mistakes)
    if (same_mask(actual, mistake.output)) found.push_back(mistake.mistake);
  return detail::name_mistakes(found);
}

std::string suspect_values(const std::vector<double>& actual, std::initializer_list<ListMistake> mistakes,
                           double tol) {
  std::vector<Named> found;
  for (const ListMistake& mistake : mistakes) {
    bool same = mistake.output.size() == actual.size();
    for (std::size_t i = 0; same && i < actual.size(); ++i) same = same_output(actual[i], mistake.output[i], tol);
    if (same) found.push_back(mistake.mistake);
  }
  return detail::name_mistakes(found);
}

std::string submitted(std::string text) {
  const std::string form = kMistakeForm;
  for (std::size_t at = text.find(form); at != std::string::npos; at = text.find(form, at + 1))
    text[at + form.size() - 1] = '(';
  return text;
}

namespace {
// "causal_mask" for "causal_mask: n_q must be positive": the function a message names first.
std::string leading_name(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos || colon == 0) return "";
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = message[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return "";
  }
  return message.substr(0, colon);
}
}  // namespace

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? demangled.get() : type.name();
}

ThrowMatch throws_typed(const std::function<void()>& call,
                        const std::function<bool(const std::exception&)>& is_expected,
                        std::string_view expected_name, std::string_view function,
                        const std::function<std::string()>& describe_call, const Why& why) {
  ThrowMatch match;
  const std::string expected(expected_name), name(function);
  const auto mistake = [](const std::optional<Named>& m) {
    return m ? " | " + detail::name_mistakes({*m}) : std::string();
  };
  const std::string rule = why.rule.empty() ? "" : ": " + why.rule;
  try {
    call();
  } catch (const std::exception& e) {
    const std::string thrown = type_name(typeid(e)), message = submitted(e.what());
    const std::string prefix = name + ": ";
    if (!is_expected(e)) {
      match.report = describe_call() + " threw " + thrown + " where " + expected + " was expected" + rule +
                     "; its message: \"" + message + "\"";
      if (thrown == "scalebook::NotImplemented") match.report = describe_call() + ": " + message;
    } else if (message.rfind("Eigen", 0) == 0) {
      match.report = describe_call() + " threw " + thrown + " from Eigen's own assertion, not from " + name +
                     "'s own input checks" + rule + " (check the input before computing)" + mistake(why.inner) +
                     " | its message: \"" + message + "\"";
    } else if (const std::string inner = leading_name(message); !inner.empty() && inner != name) {
      match.report = describe_call() + " threw " + thrown + " from " + inner + ", not from " + name +
                     "'s own input checks" + rule + " (check the input at the start of " + name + ")" +
                     mistake(why.inner) + " | its message: \"" + message + "\"";
    } else if (message.rfind(prefix, 0) != 0) {
      match.report = describe_call() + " threw " + thrown + " as expected, but its message must start with \"" +
                     prefix + "\" (the contract's rule): \"" + message + "\"";
    } else {
      match.ok = true;
    }
    return match;
  } catch (...) {
    match.report = describe_call() + " threw something that is not a std::exception where " + expected +
                   " was expected" + rule;
    return match;
  }
  match.report = describe_call() + " threw nothing where " + expected + " was expected" + rule + mistake(why.nothing);
  return match;
}

namespace {
// "3", "-1e-3", "0.5f": a number written as a literal, shown as written.
bool is_number_literal(std::string_view text) {
  if (text.empty()) return false;
  std::size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) return false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '\'')) return false;
  }
  return true;
}

// The top-level comma-separated parts of a call's argument text.
std::vector<std::string> split_arguments(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      current += c;
      if (c == '\\' && i + 1 < text.size()) current += text[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    // a template's arguments, as in std::pair<Index, Index>{...}
    if (c == '<' && i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_') &&
        i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '=')
      ++depth;
    if (c == '>' && depth > 0 && i > 0 && text[i - 1] != ' ' && text[i - 1] != '-') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty() || !parts.empty()) parts.push_back(current);
  for (std::string& part : parts) {
    const std::size_t first = part.find_first_not_of(" \n\t"), last = part.find_last_not_of(" \n\t");
    part = first == std::string::npos ? "" : part.substr(first, last - first + 1);
  }
  return parts;
}
}  // namespace

std::string call_text(std::string_view function, std::string_view arguments, const std::vector<std::string>& shown) {
  std::vector<std::string> names = split_arguments(arguments);
  if (names.size() != shown.size()) {  // a text the split cannot follow: number the arguments
    names.clear();
    for (std::size_t i = 0; i < shown.size(); ++i) names.push_back("argument " + std::to_string(i + 1));
  }
  std::string values;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (is_number_literal(names[i]) || names[i] == shown[i]) {
      if (function.empty()) values += (values.empty() ? "" : "; ") + shown[i];
      continue;
    }
    values += (values.empty() ? "" : "; ") + names[i] + " = " + shown[i];
  }
  if (function.empty()) return values;
  std::string call = std::string(function) + "(";
  for (std::size_t i = 0; i < names.size(); ++i) call += (i ? ", " : "") + names[i];
  call += ")";
  return values.empty() ? call : call + " [input: " + values + "]";
}

namespace {
// An entry of an input: exact when short ("1000000002.5", "0.1"), else 10 significant digits
// (1e9 + 0.84 stays "1000000000.8", a random normal "0.8439239235").
std::string input_entry(double x) {
  const std::string exact = format_number(x);
  if (exact.size() <= 12) return exact;
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", x);
  return text;
}
}  // namespace

namespace {
// The entries of M (a vector's flat when FLAT), shown after SHAPE.
std::string describe_entries(const Eigen::Ref<const Matrix>& m, std::string out, bool flat) {
  if (m.size() == 0) return out + ", empty";
  const bool constant = (m.array() == m(0, 0)).all() || m.array().isNaN().all();
  if (constant && m.size() > 1) return out + ", all " + input_entry(m(0, 0));
  if (m.size() <= 24) {
    if (flat) {
      out += " [";
      for (Index i = 0; i < m.size(); ++i) out += (i ? ", " : "") + input_entry(m(i / m.cols(), i % m.cols()));
      return out + "]";
    }
    out += " [";
    for (Index i = 0; i < m.rows(); ++i) {
      out += i ? ", [" : "[";
      for (Index j = 0; j < m.cols(); ++j) out += (j ? ", " : "") + input_entry(m(i, j));
      out += "]";
    }
    return out + "]";
  }
  double lo = INFINITY, hi = -INFINITY;
  std::string odd;
  int odd_count = 0;
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) {
      const double x = m(i, j);
      if (std::isfinite(x)) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      } else if (odd_count++ < 4) {
        odd += ", " + format_number(x) + " at (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      }
    }
  if (lo <= hi) out += ", entries from " + input_entry(lo) + " to " + input_entry(hi);
  out += odd;
  if (odd_count > 4) out += " and " + std::to_string(odd_count - 4) + " more non-finite entries";
  if (flat) {
    out += ", first entries [";
    for (Index i = 0; i < std::min<Index>(m.size(), 4); ++i) out += (i ? ", " : "") + input_entry(m(i / m.cols(), i % m.cols()));
  } else {
    out += ", first row [";
    for (Index j = 0; j < std::min<Index>(m.cols(), 4); ++j) out += (j ? ", " : "") + input_entry(m(0, j));
  }
  return out + ((flat ? m.size() : m.cols()) > 4 ? ", ...]" : "]");
}
}  // namespace

std::string show_matrix(const Eigen::Ref<const Matrix>& m) { return describe_entries(m, shape_of(m), false); }
std::string show(const Matrix& m) { return show_matrix(m); }
std::string show(const Vector& m) { return describe_entries(m.transpose(), shape_of(m), true); }
std::string show(const RowVector& m) { return describe_entries(m, shape_of(m), true); }
std::string show(const BoolMatrix& m) {
  std::string out = "mask " + shape_of(m);
  if (m.size() == 0) return out + ", empty";
  Index ones = 0, unset = 0;
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) {
      const unsigned char byte = mask_byte(m, i, j);
      ones += byte == 1;
      unset += byte > 1;
    }
  const std::string never_set = unset ? ", " + std::to_string(unset) + " neither 0 nor 1 (#)" : "";
  if (unset == 0 && (ones == m.size() || ones == 0)) return out + ", all " + (ones ? "1" : "0");
  if (m.size() > 64) return out + ", " + std::to_string(ones) + " entries 1" + never_set;
  out += " [";
  for (Index i = 0; i < m.rows(); ++i) {
    out += i ? " " : "";
    for (Index j = 0; j < m.cols(); ++j) {
      const unsigned char byte = mask_byte(m, i, j);
      out += byte > 1 ? '#' : byte == 1 ? '1' : '0';
    }
  }
  return out + "]" + never_set;
}
std::string show(const std::vector<Matrix>& matrices) {
  std::string out = std::to_string(matrices.size()) + (matrices.size() == 1 ? " matrix" : " matrices");
  for (std::size_t i = 0; i < std::min<std::size_t>(matrices.size(), 4); ++i)
    out += (i ? "; " : ": ") + show_matrix(matrices[i]);
  if (matrices.size() > 4) out += "; ...";
  return out;
}

std::string suspect(const Eigen::Ref<const Matrix>& actual, std::initializer_list<Mistake> mistakes,
                    double tol) {
  return suspect(actual, std::vector<Mistake>(mistakes), tol);
}

std::string suspect(const Eigen::Ref<const Matrix>& actual, const std::vector<Mistake>& mistakes, double tol) {
  std::vector<Named> found;
  for (const Mistake& mistake : mistakes)
    if (same_output(actual, mistake.output, tol)) found.push_back(mistake.mistake);
  return detail::name_mistakes(found);
}

std::string format_matrix(const Eigen::Ref<const Matrix>& m, Index mark_row, Index mark_col) {
  std::ostringstream out;
  const Index rows = std::min(m.rows(), kShown), cols = std::min(m.cols(), kShown);
  std::size_t width = 1;
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) width = std::max(width, format_entry(m(i, j)).size());
  for (Index i = 0; i < rows; ++i) {
    out << "  ";
    for (Index j = 0; j < cols; ++j) {
      const bool marked = i == mark_row && j == mark_col;
      out << (marked ? '[' : ' ') << std::setw(static_cast<int>(width)) << format_entry(m(i, j))
          << (marked ? ']' : ' ');
    }
    if (m.cols() > cols) out << " ...";
    out << '\n';
  }
  if (m.rows() > rows) out << "  ...\n";
  if (m.size() == 0) out << "  (empty)\n";
  return out.str();
}

}  // namespace scalebook::testing
