// Feature standardisation (see scalebook/standardize.hpp).
#include "scalebook/standardize.hpp"

#include <cmath>
#include <string>

namespace scalebook {

Standardizer fit_standardizer(const Matrix& train) {
  require_nonempty("fit_standardizer", "train", train);
  require_finite("fit_standardizer", "train", train);
  Standardizer s;
  s.mean = train.colwise().mean();
  s.scale.resize(train.cols());
  for (Index c = 0; c < train.cols(); ++c) {
    const double variance = (train.col(c).array() - s.mean(c)).square().sum() / static_cast<double>(train.rows());
    const double sd = std::sqrt(variance);
    s.scale(c) = sd > 0.0 ? sd : 1.0;  // a constant feature becomes 0, never NaN
  }
  return s;
}

Matrix standardize(const Matrix& x, const Standardizer& s) {
  if (x.cols() != s.mean.cols()) {
    throw ShapeError("standardize: x " + shape_of(x) + " has " + std::to_string(x.cols()) +
                     " features, the standardizer " + std::to_string(s.mean.cols()));
  }
  require_finite("standardize", "x", x);
  Matrix out(x.rows(), x.cols());
  for (Index c = 0; c < x.cols(); ++c) out.col(c) = (x.col(c).array() - s.mean(c)) / s.scale(c);
  return out;
}

}  // namespace scalebook
