// Matrix comparison and mistake diagnosis for the checks (see scalebook/testing.hpp).
#include "scalebook/testing.hpp"

#include <cxxabi.h>

#include <algorithm>
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

MatrixMatch compare(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                    double tol, bool exact) {
  MatrixMatch match;
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    match.report = "shapes differ: actual " + shape_of(actual) + " vs expected " + shape_of(expected) +
                   "\nactual:\n" + format_matrix(actual) + "expected:\n" + format_matrix(expected);
    return match;
  }
  double worst = -1.0;
  Index worst_i = -1, worst_j = -1;
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
      << format_entry(actual(worst_i, worst_j)) << " vs expected "
      << format_entry(expected(worst_i, worst_j));
  if (exact) out << " (bit-identical required)";
  else out << " (tolerance " << tol << ")";
  out << "\nactual " << shape_of(actual) << ":\n" << format_matrix(actual, worst_i, worst_j)
      << "expected " << shape_of(expected) << ":\n" << format_matrix(expected, worst_i, worst_j);
  match.report = out.str();
  return match;
}
}  // namespace

MatrixMatch near(const Eigen::Ref<const Matrix>& actual, const Eigen::Ref<const Matrix>& expected,
                 double tol) {
  return compare(actual, expected, tol, false);
}

MatrixMatch identical(const Eigen::Ref<const Matrix>& actual,
                      const Eigen::Ref<const Matrix>& expected) {
  return compare(actual, expected, 0.0, true);
}

namespace {
bool numbers_near(double actual, double expected, double tol) {
  if (std::isnan(actual) || std::isnan(expected)) return false;
  if (actual == expected) return true;
  return std::abs(actual - expected) <= tol * std::max(1.0, std::abs(expected));
}

}  // namespace

std::string format_mask(const BoolMatrix& m, Index mark_row, Index mark_col) {
  std::ostringstream out;
  const Index rows = std::min(m.rows(), Index{16}), cols = std::min(m.cols(), Index{16});
  for (Index i = 0; i < rows; ++i) {
    out << "  ";
    for (Index j = 0; j < cols; ++j) {
      const bool marked = i == mark_row && j == mark_col;
      out << (marked ? '[' : ' ') << (m(i, j) ? '1' : '0') << (marked ? ']' : ' ');
    }
    if (m.cols() > cols) out << " ...";
    out << '\n';
  }
  if (m.rows() > rows) out << "  ...\n";
  if (m.size() == 0) out << "  (empty)\n";
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
      if (actual(i, j) == expected(i, j)) continue;
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
      << first_i << ", " << first_j << "): actual " << actual(first_i, first_j) << " vs expected "
      << expected(first_i, first_j) << "\nactual " << shape_of(actual) << ":\n"
      << format_mask(actual, first_i, first_j) << "expected " << shape_of(expected) << ":\n"
      << format_mask(expected, first_i, first_j);
  match.report = out.str();
  return match;
}

std::string suspect(double actual, std::initializer_list<ScalarMistake> mistakes, double tol) {
  for (const ScalarMistake& mistake : mistakes) {
    if (numbers_near(actual, mistake.output, tol)) {
      return std::string("looks like a known mistake: ") + mistake.description;
    }
  }
  return "";
}

std::string suspect_mask(const BoolMatrix& actual, std::initializer_list<MaskMistake> mistakes) {
  for (const MaskMistake& mistake : mistakes) {
    if (same_mask(actual, mistake.output)) {
      return std::string("looks like a known mistake: ") + mistake.description;
    }
  }
  return "";
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
                        std::string_view expression, std::string_view missing_hint) {
  ThrowMatch match;
  const std::string expected(expected_name), call_text(expression);
  try {
    call();
  } catch (const std::exception& e) {
    const std::string thrown = type_name(typeid(e)), message = e.what();
    const std::string prefix = std::string(function) + ": ";
    if (!is_expected(e)) {
      match.report = call_text + " threw " + thrown + " where " + expected +
                     " was expected: \"" + message + "\"";
      if (thrown == "scalebook::NotImplemented") match.report = call_text + ": " + message;
    } else if (message.rfind("Eigen", 0) == 0) {
      match.report = call_text + " threw " + thrown + " from Eigen's own assertion, not from " +
                     std::string(function) + "'s own input checks: \"" + message +
                     "\" (check the shapes before computing)";
    } else if (const std::string inner = leading_name(message);
               !inner.empty() && inner != function) {
      match.report = call_text + " threw " + thrown + " from " + inner + ", not from " +
                     std::string(function) + "'s own input checks: \"" + message +
                     "\" (check the inputs at the start of " + std::string(function) + ")";
    } else if (message.rfind(prefix, 0) != 0) {
      match.report = call_text + " threw " + thrown + " as expected, but its message must start with \"" +
                     prefix + "\" (the contract's rule): \"" + message + "\"";
    } else {
      match.ok = true;
    }
    return match;
  } catch (...) {
    match.report = call_text + " threw something that is not a std::exception where " + expected +
                   " was expected";
    return match;
  }
  match.report = call_text + " threw nothing where " + expected + " was expected";
  if (!missing_hint.empty()) match.report += ": " + std::string(missing_hint);
  return match;
}

std::string suspect(const Eigen::Ref<const Matrix>& actual, std::initializer_list<Mistake> mistakes,
                    double tol) {
  for (const Mistake& mistake : mistakes) {
    if (near(actual, mistake.output, tol)) {
      return std::string("looks like a known mistake: ") + mistake.description;
    }
  }
  return "";
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
