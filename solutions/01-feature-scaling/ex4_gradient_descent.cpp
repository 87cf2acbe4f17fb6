// Reference for exercise 1.4 — gradient_descent.
// Chapter 1: feature scaling. Data matrices are (n, d): one example per row, one feature per column.
#include "feature_scaling.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch01 {

DescentResult gradient_descent(const Matrix& x, const Vector& y, double learning_rate,
                               double tolerance, int max_iterations) {
  const char* fn = "gradient_descent";
  require_nonempty(fn, "x", x);
  if (y.rows() != x.rows()) {
    throw ShapeError(std::string(fn) + ": y " + shape_of(y) + " must have one value per row of x " + shape_of(x));
  }
  require_finite(fn, "x", x);
  require_finite(fn, "y", y);
  if (!(learning_rate > 0.0) || !std::isfinite(learning_rate) || !(tolerance > 0.0) || !std::isfinite(tolerance)) {
    throw ValueError(std::string(fn) + ": learning_rate and tolerance must be positive and finite, got " +
                     std::to_string(learning_rate) + " and " + std::to_string(tolerance));
  }
  if (max_iterations < 0) {
    throw ValueError(std::string(fn) + ": max_iterations must be >= 0, got " + std::to_string(max_iterations));
  }
  const double n = static_cast<double>(x.rows());
  DescentResult result;
  result.weights = Vector::Zero(x.cols());
  result.bias = 0.0;
  while (true) {
    const Vector r = x.lazyProduct(result.weights).array() + result.bias - y.array();  // residuals (n)
    const double loss = r.squaredNorm() / (2.0 * n);
    result.loss.push_back(loss);
    if (!std::isfinite(loss)) return result;  // diverged: converged stays false
    const Vector g_w = x.transpose().lazyProduct(r) / n;
    const double g_b = r.sum() / n;
    if (std::sqrt(g_w.squaredNorm() + g_b * g_b) <= tolerance) {
      result.converged = true;
      return result;
    }
    if (result.iterations == max_iterations) return result;
    result.weights -= learning_rate * g_w;
    result.bias -= learning_rate * g_b;
    ++result.iterations;
  }
}

}  // namespace scalebook::ch01
