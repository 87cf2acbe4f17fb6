// Reference for exercise 8.1 — layer_norm.
// Chapter 8: normalisation. x is (n, d), one token per row; gamma and beta are (1, d).
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch08 {

Matrix layer_norm(const Matrix& x, const RowVector& gamma, const RowVector& beta, double eps) {
  const char* fn = "layer_norm";
  require_nonempty(fn, "x", x);
  require_shape(fn, "gamma", gamma, 1, x.cols());
  require_shape(fn, "beta", beta, 1, x.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "gamma", gamma);
  require_finite(fn, "beta", beta);
  if (!(eps > 0.0) || !std::isfinite(eps)) {
    std::ostringstream out;
    out.precision(17);
    out << fn << ": eps must be a finite number above 0, got " << eps;
    throw ValueError(out.str());
  }
  const double d = static_cast<double>(x.cols());
  Matrix y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    // Work in units of 2^e, a power of two above the row's largest magnitude when that exceeds 1:
    // dividing by it is exact, and no square of a deviation can overflow. The variance is then
    // divided by 4^e, and so is eps.
    const double largest = x.row(i).cwiseAbs().maxCoeff();
    const int e = largest > 1.0 ? std::ilogb(largest) + 1 : 0;
    const RowVector row = x.row(i).unaryExpr([e](double v) { return std::ldexp(v, -e); });
    const double mean = row.sum() / d;                       // first pass
    const RowVector centred = row.array() - mean;
    const double variance = centred.squaredNorm() / d;       // second pass: divided by d, not d - 1
    const double root = std::sqrt(variance + std::ldexp(eps, -2 * e));  // eps inside the root
    // root is 0 only when every deviation is 0 and eps's share underflowed: the row is constant.
    const RowVector normalised = root > 0.0 ? RowVector(centred / root) : RowVector::Zero(x.cols());
    y.row(i) = normalised.cwiseProduct(gamma) + beta;        // gamma(j) and beta(j) belong to feature j
  }
  return y;
}

}  // namespace scalebook::ch08
