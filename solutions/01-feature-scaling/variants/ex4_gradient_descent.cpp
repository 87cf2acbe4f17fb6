// Variant of exercise 1.4 — gradient_descent with explicit loops instead of Eigen products: each
// residual starts from the bias, the loss is (1/2)·(Σ r²)/n and g_w is accumulated row by row, so
// sums run in another order (last bits differ); the stopping rules are the contract's, in its order.
#include "feature_scaling.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch01 {

DescentResult gradient_descent(const Matrix& x, const Vector& y, double learning_rate,
                               double tolerance, int max_iterations) {
  const std::string fn = "gradient_descent";
  require_nonempty(fn, "x", x);
  if (y.rows() != x.rows()) {
    throw ShapeError(fn + ": y " + shape_of(y) + " must have one value per row of x " + shape_of(x));
  }
  require_finite(fn, "x", x);
  require_finite(fn, "y", y);
  const auto positive_finite = [](double v) { return v > 0.0 && std::isfinite(v); };  // false for NaN
  if (!positive_finite(learning_rate)) {
    throw ValueError(fn + ": learning_rate must be positive and finite, got " + std::to_string(learning_rate));
  }
  if (!positive_finite(tolerance)) {
    throw ValueError(fn + ": tolerance must be positive and finite, got " + std::to_string(tolerance));
  }
  if (max_iterations < 0) {
    throw ValueError(fn + ": max_iterations must be 0 or more, got " + std::to_string(max_iterations));
  }
  const Index n = x.rows(), d = x.cols();
  DescentResult result;
  result.weights = Vector::Zero(d);
  Vector r(n), g_w(d);
  for (;;) {
    double squares = 0.0, g_b = 0.0;
    for (Index i = 0; i < n; ++i) {
      double prediction = result.bias;
      for (Index j = 0; j < d; ++j) prediction += x(i, j) * result.weights(j);
      r(i) = prediction - y(i);
      squares += r(i) * r(i);
      g_b += r(i);
    }
    const double loss = 0.5 * squares / static_cast<double>(n);
    result.loss.push_back(loss);
    if (!std::isfinite(loss)) return result;  // diverged: not converged
    g_w.setZero();
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < d; ++j) g_w(j) += x(i, j) * r(i);
    }
    g_w /= static_cast<double>(n);
    g_b /= static_cast<double>(n);
    double norm_squared = g_b * g_b;
    for (Index j = 0; j < d; ++j) norm_squared += g_w(j) * g_w(j);
    if (std::sqrt(norm_squared) <= tolerance) {  // tested before the limit
      result.converged = true;
      return result;
    }
    if (result.iterations == max_iterations) return result;
    for (Index j = 0; j < d; ++j) result.weights(j) -= learning_rate * g_w(j);  // both from the same point
    result.bias -= learning_rate * g_b;
    ++result.iterations;
  }
}

}  // namespace scalebook::ch01
