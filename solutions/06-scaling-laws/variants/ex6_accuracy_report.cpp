// Variant of exercise 6.6 — accuracy_report by plain loops: the prediction by a scan that keeps the
// first largest logit, the log-sum-exp by a loop of scalar exp, and the mean loss as a running mean
// (m += (x − m) / count) instead of a sum divided at the end: the same numbers up to rounding.
#include "scaling_laws.hpp"

#include <cmath>
#include <string>

namespace scalebook::ch06 {

namespace {

// Throws unless logits (one row per example) and labels describe the same examples.
void require_rows(const char* fn, const char* name, const Matrix& logits, const std::vector<int>& labels) {
  require_nonempty(fn, name, logits);
  if (static_cast<std::size_t>(logits.rows()) != labels.size()) {
    throw ShapeError(std::string(fn) + ": " + name + " " + shape_of(logits) + " has " + std::to_string(logits.rows()) +
                     " rows but " + std::to_string(labels.size()) + " labels");
  }
}

// Throws unless every logit is finite and every label is one of the columns' classes.
void require_classes(const char* fn, const char* name, const Matrix& logits, const std::vector<int>& labels) {
  require_finite(fn, name, logits);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= logits.cols()) {
      throw ValueError(std::string(fn) + ": label " + std::to_string(i) + " of " + name + " is " +
                       std::to_string(labels[i]) + ", not a class 0.." + std::to_string(logits.cols() - 1));
    }
  }
}

struct Score {
  double accuracy = 0.0, loss = 0.0;
};

Score score(const Matrix& logits, const std::vector<int>& labels) {
  Score out;
  Index correct = 0;
  for (Index i = 0; i < logits.rows(); ++i) {
    Index predicted = 0;
    for (Index j = 1; j < logits.cols(); ++j) {
      if (logits(i, j) > logits(i, predicted)) predicted = j;  // strictly larger: a tie keeps the first
    }
    const int label = labels[static_cast<std::size_t>(i)];
    if (predicted == label) ++correct;
    const double top = logits(i, predicted);
    double sum = 0.0;  // sum_j exp(z_j - max) >= 1: its log is finite for any finite logits
    for (Index j = 0; j < logits.cols(); ++j) sum += std::exp(logits(i, j) - top);
    const double cross_entropy = std::log(sum) + top - logits(i, label);  // -ln softmax(z)_y
    out.loss += (cross_entropy - out.loss) / static_cast<double>(i + 1);
  }
  out.accuracy = static_cast<double>(correct) / static_cast<double>(logits.rows());
  return out;
}

}  // namespace

AccuracyReport accuracy_report(const Matrix& train_logits, const std::vector<int>& train_labels,
                               const Matrix& test_logits, const std::vector<int>& test_labels) {
  const char* fn = "accuracy_report";
  require_rows(fn, "train_logits", train_logits, train_labels);
  require_rows(fn, "test_logits", test_logits, test_labels);
  require_same_cols(fn, "train_logits", train_logits, "test_logits", test_logits);
  require_classes(fn, "train_logits", train_logits, train_labels);
  require_classes(fn, "test_logits", test_logits, test_labels);
  const Score train = score(train_logits, train_labels), test = score(test_logits, test_labels);
  return {train.accuracy, test.accuracy, train.loss, test.loss};
}

}  // namespace scalebook::ch06
