// Matrix comparison and mistake diagnosis for the checks (see scalebook/testing.hpp).
#include "scalebook/testing.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
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
