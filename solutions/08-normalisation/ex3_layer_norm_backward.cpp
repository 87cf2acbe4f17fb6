// Reference for exercise 8.3 — layer_norm_backward.
// Chapter 8: normalisation. x and grad_out are (n, d), one token per row; gamma is (1, d).
#include "normalisation.hpp"

#include <cmath>
#include <sstream>
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
  if (!(eps > 0.0) || !std::isfinite(eps)) {
    std::ostringstream out;
    out.precision(17);
    out << fn << ": eps must be a finite number above 0, got " << eps;
    throw ValueError(out.str());
  }
  const Index n = x.rows(), d = x.cols();
  LayerNormGrads grads{Matrix(n, d), RowVector::Zero(d), RowVector::Zero(d)};
  for (Index i = 0; i < n; ++i) {
    // x-hat as layer_norm computes it, in units of 2^e (no square overflows): s = 2^e root.
    const double largest = x.row(i).cwiseAbs().maxCoeff();
    const int e = largest > 1.0 ? std::ilogb(largest) + 1 : 0;
    const RowVector row = x.row(i).unaryExpr([e](double v) { return std::ldexp(v, -e); });
    const RowVector centred = row.array() - row.sum() / static_cast<double>(d);
    const double root = std::sqrt(centred.squaredNorm() / static_cast<double>(d) + std::ldexp(eps, -2 * e));
    const RowVector x_hat = root > 0.0 ? RowVector(centred / root) : RowVector::Zero(d);
    const RowVector g = grad_out.row(i).cwiseProduct(gamma);  // dL/dx-hat
    const double g_mean = g.mean();                           // the direction of a shift
    const double g_along = g.cwiseProduct(x_hat).mean();      // the direction of x-hat itself
    const RowVector projected = g.array() - g_mean - x_hat.array() * g_along;
    // Divide by s = 2^e root; a constant row whose eps share underflowed (root = 0) has s = sqrt(eps).
    grads.dx.row(i) = root > 0.0 ? RowVector((projected / root).unaryExpr([e](double v) { return std::ldexp(v, -e); }))
                                 : RowVector(projected / std::sqrt(eps));
    grads.dgamma += grad_out.row(i).cwiseProduct(x_hat);  // summed over tokens: gamma is shared
    grads.dbeta += grad_out.row(i);
  }
  return grads;
}

}  // namespace scalebook::ch08
