// Variant of exercise 8.3 — layer_norm_backward sums over the tokens first: dbeta and dgamma as
// column sums of whole matrices, and dx row by row as (d g - sum(g) - x_hat sum(g x_hat)) / (d s),
// the contract's formula with the two means written as sums; the statistics by Welford's method
// in units of a power of two, as the 8.1 variant takes them.
#include "normalisation.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch08 {

LayerNormGrads layer_norm_backward(const Matrix& x, const RowVector& gamma, double eps,
                                   const Matrix& grad_out) {
  const char* fn = "layer_norm_backward";
  require_nonempty(fn, "x", x);
  require_shape(fn, "gamma", gamma, 1, x.cols());
  require_shape(fn, "grad_out", grad_out, x.rows(), x.cols());
  require_finite(fn, "x", x);
  require_finite(fn, "gamma", gamma);
  require_finite(fn, "grad_out", grad_out);
  if (!(eps > 0.0) || std::isinf(eps)) throw ValueError(std::string(fn) + ": eps must be a finite number above 0");
  const Index n = x.rows(), d = x.cols();
  Matrix x_hat(n, d), dx(n, d);
  for (Index i = 0; i < n; ++i) {
    int e = 0;
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
    double g_sum = 0.0, g_along = 0.0;
    for (Index j = 0; j < d; ++j) {
      x_hat(i, j) = root > 0.0 ? (std::ldexp(x(i, j), -e) - mean) / root : 0.0;
      g_sum += grad_out(i, j) * gamma(j);
      g_along += grad_out(i, j) * gamma(j) * x_hat(i, j);
    }
    for (Index j = 0; j < d; ++j) {
      const double g = grad_out(i, j) * gamma(j);
      const double numerator = static_cast<double>(d) * g - g_sum - x_hat(i, j) * g_along;
      // s = 2^e root, or sqrt(eps) for a constant row whose eps share underflowed (root = 0)
      dx(i, j) = root > 0.0 ? std::ldexp(numerator / (static_cast<double>(d) * root), -e)
                            : numerator / (static_cast<double>(d) * std::sqrt(eps));
    }
  }
  return {dx, grad_out.cwiseProduct(x_hat).colwise().sum(), grad_out.colwise().sum()};
}

}  // namespace scalebook::ch08
