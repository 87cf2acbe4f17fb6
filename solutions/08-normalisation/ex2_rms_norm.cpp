// Reference for exercise 8.2 — rms_norm.
// Chapter 8: normalisation. x is (n, d), one token per row; gamma is (1, d).
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch08 {

Matrix rms_norm(const Matrix& x, const RowVector& gamma, double eps) {
  const char* fn = "rms_norm";
  require_nonempty(fn, "x", x);
  require_shape(fn, "gamma", gamma, 1, x.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "gamma", gamma);
  if (!(eps > 0.0) || !std::isfinite(eps)) {
    std::ostringstream out;
    out.precision(17);
    out << fn << ": eps must be a finite number above 0, got " << eps;
    throw ValueError(out.str());
  }
  const double d = static_cast<double>(x.cols());
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    // In units of 2^e above the row's largest magnitude (exact), so that no square overflows; the
    // mean square is then divided by 4^e, and so is eps.
    const double largest = x.row(i).cwiseAbs().maxCoeff();
    const int e = largest > 1.0 ? std::ilogb(largest) + 1 : 0;
    const RowVector row = x.row(i).unaryExpr([e](double v) { return std::ldexp(v, -e); });
    const double mean_square = row.squaredNorm() / d;  // no mean subtracted: RMSNorm keeps it
    const double root = std::sqrt(mean_square + std::ldexp(eps, -2 * e));  // above 0: eps > 0, or
    y.row(i) = (row / root).cwiseProduct(gamma);                          // an entry of 1/2 or more
  }
  return y;
}

}  // namespace scalebook::ch08
