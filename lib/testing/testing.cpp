// Matrix comparison and mistake diagnosis for the checks (see scalebook/testing.hpp).
#include "scalebook/testing.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
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
std::string format_number(double x) {
  std::ostringstream out;
  out << std::setprecision(17) << x;
  return out.str();
}

bool numbers_near(double actual, double expected, double tol) {
  if (std::isnan(actual) || std::isnan(expected)) return false;
  if (actual == expected) return true;
  return std::abs(actual - expected) <= tol * std::max(1.0, std::abs(expected));
}

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
}  // namespace

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
