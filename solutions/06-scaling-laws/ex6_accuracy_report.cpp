// Reference for exercise 6.6 — accuracy_report.
// Chapter 6: scaling laws and their limits. Logits: one row per example, one column per class.
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

namespace {

void check_shape(const char* fn, const char* name, const Matrix& logits, const std::vector<int>& labels) {
  require_nonempty(fn, name, logits);
  if (static_cast<std::size_t>(logits.rows()) != labels.size()) {
    throw ShapeError(std::string(fn) + ": " + name + " " + shape_of(logits) + " has " + std::to_string(logits.rows()) +
                     " rows but " + std::to_string(labels.size()) + " labels");
  }
}

void check_values(const char* fn, const char* name, const Matrix& logits, const std::vector<int>& labels) {
  require_finite(fn, name, logits);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= logits.cols()) {
      throw ValueError(std::string(fn) + ": label " + std::to_string(i) + " of " + name + " is " +
                       std::to_string(labels[i]) + ", not a class 0.." + std::to_string(logits.cols() - 1));
    }
  }
}

// Accuracy and mean cross-entropy of one set.
void score(const Matrix& logits, const std::vector<int>& labels, double& accuracy, double& loss) {
  double correct = 0.0, total = 0.0;
  for (Index i = 0; i < logits.rows(); ++i) {
    Index predicted = 0;
    const double top = logits.row(i).maxCoeff(&predicted);  // the first maximum on a tie
    const int label = labels[static_cast<std::size_t>(i)];
    correct += predicted == label ? 1.0 : 0.0;
    // -ln softmax(z)_y = ln sum_j exp(z_j - max) + max - z_y: finite for any finite logits
    total += std::log((logits.row(i).array() - top).exp().sum()) + top - logits(i, label);
  }
  accuracy = correct / static_cast<double>(logits.rows());
  loss = total / static_cast<double>(logits.rows());
}

}  // namespace

AccuracyReport accuracy_report(const Matrix& train_logits, const std::vector<int>& train_labels,
                               const Matrix& test_logits, const std::vector<int>& test_labels) {
  const char* fn = "accuracy_report";
  check_shape(fn, "train_logits", train_logits, train_labels);
  check_shape(fn, "test_logits", test_logits, test_labels);
  require_same_cols(fn, "train_logits", train_logits, "test_logits", test_logits);
  check_values(fn, "train_logits", train_logits, train_labels);
  check_values(fn, "test_logits", test_logits, test_labels);
  AccuracyReport out;
  score(train_logits, train_labels, out.train_accuracy, out.train_loss);
  score(test_logits, test_labels, out.test_accuracy, out.test_loss);  // the held-out rows
  return out;
}

}  // namespace scalebook::ch06
