// Variant of exercise 2.3 — rmsprop_step as whole-array Eigen expressions instead of a loop, grouped
// differently: v = ρv + (1 − ρ)·(g²) and p −= η·(g / sqrt(v + ε)), where the reference computes
// ((1 − ρ)g)g and (ηg) / sqrt(v + ε); the same formula, rounded in another order.
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

void rmsprop_step(Matrix& param, const Matrix& grad, Matrix& velocity, double learning_rate, double rho,
                  double epsilon) {
  const std::string fn = "rmsprop_step";
  require_nonempty(fn, "param", param);
  require_shape(fn, "grad", grad, param.rows(), param.cols());
  require_shape(fn, "velocity", velocity, param.rows(), param.cols());
  require_finite(fn, "param", param);
  require_finite(fn, "grad", grad);
  require_finite(fn, "velocity", velocity);
  if (velocity.minCoeff() < 0.0) {
    throw ValueError(fn + ": velocity must be 0 or above (a mean of squares), got " +
                     std::to_string(velocity.minCoeff()));
  }
  if (!(learning_rate > 0.0 && std::isfinite(learning_rate))) {
    throw ValueError(fn + ": learning_rate must be above 0 and finite, got " + std::to_string(learning_rate));
  }
  if (!(rho >= 0.0 && rho < 1.0)) throw ValueError(fn + ": rho must be in [0, 1), got " + std::to_string(rho));
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) {
    throw ValueError(fn + ": epsilon must be above 0 and finite, got " + std::to_string(epsilon));
  }
  velocity.array() = rho * velocity.array() + (1.0 - rho) * grad.array().square();
  param.array() -= learning_rate * (grad.array() / (velocity.array() + epsilon).sqrt());
}

}  // namespace scalebook::ch02
