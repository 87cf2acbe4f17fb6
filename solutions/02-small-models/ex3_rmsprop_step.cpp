// Reference for exercise 2.3 — rmsprop_step.
// Chapter 2: small models on scarce data. A batch x is (n, in), one example per row; a Dense
// layer's weights w are (in, out), its bias b is (1, out).
#include "small_models.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch02 {

void rmsprop_step(Matrix& param, const Matrix& grad, Matrix& velocity, double learning_rate, double rho,
                  double epsilon) {
  const char* fn = "rmsprop_step";
  require_nonempty(fn, "param", param);
  require_shape(fn, "grad", grad, param.rows(), param.cols());
  require_shape(fn, "velocity", velocity, param.rows(), param.cols());
  require_finite(fn, "param", param);
  require_finite(fn, "grad", grad);
  require_finite(fn, "velocity", velocity);
  if ((velocity.array() < 0.0).any()) throw ValueError(std::string(fn) + ": velocity must be >= 0 (a mean of squares)");
  if (!(learning_rate > 0.0) || !std::isfinite(learning_rate) || !(rho >= 0.0 && rho < 1.0) || !(epsilon > 0.0) ||
      !std::isfinite(epsilon)) {
    throw ValueError(std::string(fn) + ": need learning_rate > 0, 0 <= rho < 1 and epsilon > 0, got " +
                     std::to_string(learning_rate) + ", " + std::to_string(rho) + ", " + std::to_string(epsilon));
  }
  for (Index i = 0; i < param.size(); ++i) {
    const double g = grad.data()[i];
    double& v = velocity.data()[i];
    v = rho * v + (1.0 - rho) * g * g;                              // the running mean square
    param.data()[i] -= learning_rate * g / std::sqrt(v + epsilon);  // divided by its square root
  }
}

}  // namespace scalebook::ch02
