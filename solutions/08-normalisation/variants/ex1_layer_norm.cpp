// Variant of exercise 8.1 — layer_norm takes each row's mean and variance in one pass by Welford's
// method (a running mean and a running sum of squared deviations, never the mean of the squares
// minus the squared mean), in units of a power of two found with std::frexp, and applies gamma and
// beta entry by entry in a loop.
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
  if (!(eps > 0.0 && eps < HUGE_VAL)) {
    std::ostringstream out;
    out << fn << ": eps must be a finite number above 0, got " << eps;
    throw ValueError(out.str());
  }
  const Index d = x.cols();
  Matrix y(x.rows(), d);
  for (Index i = 0; i < x.rows(); ++i) {
    int e = 0;  // largest = m 2^e with m in [1/2, 1): every entry / 2^e is below 1
    const double largest = x.row(i).cwiseAbs().maxCoeff();
    if (largest > 1.0) std::frexp(largest, &e);
    double mean = 0.0, squares = 0.0;
    for (Index j = 0; j < d; ++j) {
      const double v = std::ldexp(x(i, j), -e);
      const double delta = v - mean;
      mean += delta / static_cast<double>(j + 1);
      squares += delta * (v - mean);
    }
    const double root = std::sqrt(squares / static_cast<double>(d) + std::ldexp(eps, -2 * e));
    for (Index j = 0; j < d; ++j) {
      const double centred = std::ldexp(x(i, j), -e) - mean;
      y(i, j) = (root > 0.0 ? centred / root : 0.0) * gamma(j) + beta(j);
    }
  }
  return y;
}

}  // namespace scalebook::ch08
