// Variant of exercise 8.2 — rms_norm finds each row's root mean square with Eigen's stableNorm()
// (which scales blockwise so that no square overflows) and adds eps with std::hypot:
// sqrt(ms + eps) = hypot(rms, sqrt(eps)), which overflows no more than its result does. The row is
// divided by sqrt(d) before its norm is taken: the norm of four entries of the largest double is
// twice the largest double, infinite, while their root mean square is finite.
#include "normalisation.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch08 {

Matrix rms_norm(const Matrix& x, const RowVector& gamma, double eps) {
  const char* fn = "rms_norm";
  require_nonempty(fn, "x", x);
  require_shape(fn, "gamma", gamma, 1, x.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "gamma", gamma);
  if (!(eps > 0.0) || std::isinf(eps)) throw ValueError(std::string(fn) + ": eps must be a finite number above 0");
  Matrix y(x.rows(), x.cols());
  const double root_d = std::sqrt(static_cast<double>(x.cols()));
  for (Index i = 0; i < x.rows(); ++i) {
    const double rms = (x.row(i) / root_d).stableNorm();
    const double root = std::hypot(rms, std::sqrt(eps));
    for (Index j = 0; j < x.cols(); ++j) y(i, j) = x(i, j) / root * gamma(j);
  }
  return y;
}

}  // namespace scalebook::ch08
