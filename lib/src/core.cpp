// Implementation of the workbook's errors and shape checks (see scalebook/core.hpp).
#include "scalebook/core.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

namespace scalebook {

namespace detail {
namespace {
// The innermost function on the stack that is neither Eigen's nor this handler: where the code
// that misused Eigen lives (e.g. "scalebook::ch04::causal_attention"). Names come from the dynamic
// symbol table, so an executable must export its symbols (ENABLE_EXPORTS) for its own functions to
// be named; "" when no name is found.
std::string calling_function() {
  void* frames[48];
  const int count = backtrace(frames, 48);
  for (int f = 1; f < count; ++f) {
    Dl_info info;
    if (dladdr(frames[f], &info) == 0 || info.dli_sname == nullptr) continue;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(
        abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), std::free);
    std::string name = status == 0 && demangled ? demangled.get() : info.dli_sname;
    name = name.substr(0, name.find('('));  // the qualified name, without the parameter list
    if (name.find("Eigen::") != std::string::npos || name.find("scalebook::detail::") != std::string::npos ||
        name.rfind("std::", 0) == 0 || name.rfind("__", 0) == 0) {
      continue;
    }
    return name;
  }
  return "";
}

// What failed, readably: Eigen's own explanation when the condition carries one (`... && "Invalid
// sizes when resizing a matrix or array."`), else the condition, cut short if it is long.
std::string readable_condition(const std::string& condition) {
  const std::size_t open = condition.find('"'), close = condition.rfind('"');
  if (open != std::string::npos && close > open + 1) return condition.substr(open + 1, close - open - 1);
  constexpr std::size_t kLongest = 120;
  return condition.size() <= kLongest ? condition : condition.substr(0, kLongest) + "...";
}
}  // namespace

void eigen_assert_failed(const char* condition, const char* file, int line) {
  std::ostringstream out;
  out << "Eigen assertion failed: " << readable_condition(condition)
      << " (an index out of range, or shapes that do not fit)";
  const std::string caller = calling_function();
  if (!caller.empty()) out << " in " << caller;
  out << ", at " << file << ':' << line;
  throw ShapeError(out.str());
}
}  // namespace detail

namespace {
std::string describe_not_implemented(const std::string& id, const std::string& function) {
  return "exercise " + id + " (" + function + ") is not implemented yet; stuck? run ./workbook hint " + id;
}
}  // namespace

NotImplemented::NotImplemented(std::string exercise_id, std::string function)
    : Error(describe_not_implemented(exercise_id, function)), exercise_id_(std::move(exercise_id)) {}

void not_implemented(std::string_view exercise_id, std::string_view function) {
  throw NotImplemented(std::string(exercise_id), std::string(function));
}

namespace detail {
namespace {
std::string shape_text(Index rows, Index cols) {
  return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}
}  // namespace

void require_nonempty(std::string_view function, std::string_view name, Index rows, Index cols) {
  if (rows == 0 || cols == 0) {
    std::ostringstream out;
    out << function << ": " << name << " is empty " << shape_text(rows, cols);
    throw ShapeError(out.str());
  }
}

void require_shape(std::string_view function, std::string_view name, Index rows, Index cols,
                   Index want_rows, Index want_cols) {
  if (rows != want_rows || cols != want_cols) {
    std::ostringstream out;
    out << function << ": " << name << " must be (" << want_rows << ", " << want_cols << "), got "
        << shape_text(rows, cols);
    throw ShapeError(out.str());
  }
}

void require_same_cols(std::string_view function, std::string_view a_name, Index a_rows, Index a_cols,
                       std::string_view b_name, Index b_rows, Index b_cols) {
  if (a_cols != b_cols) {
    std::ostringstream out;
    out << function << ": " << a_name << ' ' << shape_text(a_rows, a_cols) << " and " << b_name << ' '
        << shape_text(b_rows, b_cols) << " must have the same number of columns";
    throw ShapeError(out.str());
  }
}
}  // namespace detail

void require_finite(std::string_view function, std::string_view name,
                    const Eigen::Ref<const Matrix>& m) {
  for (Index j = 0; j < m.cols(); ++j) {
    for (Index i = 0; i < m.rows(); ++i) {
      if (!std::isfinite(m(i, j))) {
        std::ostringstream out;
        out << function << ": " << name << ' ' << shape_of(m) << " has a non-finite value "
            << m(i, j) << " at (" << i << ", " << j << ')';
        throw ValueError(out.str());
      }
    }
  }
}

// require_finite's overloads for Matrix, Vector and RowVector: the Eigen::Ref each binds is made
// here, once.
void require_finite(std::string_view function, std::string_view name, const Matrix& m) {
  require_finite(function, name, Eigen::Ref<const Matrix>(m));
}
void require_finite(std::string_view function, std::string_view name, const Vector& m) {
  require_finite(function, name, Eigen::Ref<const Matrix>(m));
}
void require_finite(std::string_view function, std::string_view name, const RowVector& m) {
  require_finite(function, name, Eigen::Ref<const Matrix>(m));
}

void require_positive(std::string_view function, std::string_view name, long long value) {
  if (value <= 0) {
    std::ostringstream out;
    out << function << ": " << name << " must be positive, got " << value;
    throw ShapeError(out.str());
  }
}

}  // namespace scalebook
