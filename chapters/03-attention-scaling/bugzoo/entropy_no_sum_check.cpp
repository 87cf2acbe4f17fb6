// mistake: row_entropy accepts rows that do not sum to 1
// expect: a row that does not sum to 1 (within 1e-9) must throw ValueError
// (bug zoo: a copy of the reference with this one mistake; chapter 3's checks must catch it)
//
// Five small functions: the raw dot-product scores QK^T (3.1), the same scores divided by
// sqrt(d_k) (3.2), a softmax over each row that survives large logits (3.3), the sample variance
// of a random dot product, which shows where sqrt(d_k) comes from (3.4), and the entropy of each
// row of weights, which measures how concentrated attention is (3.5).
//
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

namespace {

// The checks dot_scores() and scaled_scores() share; the message names the caller.
void require_queries_keys(const char* function, const Matrix& q, const Matrix& k) {
  require_nonempty(function, "q", q);
  require_nonempty(function, "k", k);
  require_same_cols(function, "q", q, "k", k);
  require_finite(function, "q", q);
  require_finite(function, "k", k);
}

}  // namespace

Matrix dot_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("dot_scores", q, k);
  Matrix scores(q.rows(), k.rows());  // (n, m): n·m dot products of length d_k
  for (Index i = 0; i < q.rows(); ++i)
    for (Index j = 0; j < k.rows(); ++j) scores(i, j) = q.row(i).dot(k.row(j));
  return scores;
}

Matrix scaled_scores(const Matrix& q, const Matrix& k) {
  require_queries_keys("scaled_scores", q, k);
  const double d_k = static_cast<double>(q.cols());
  return dot_scores(q, k) / std::sqrt(d_k);  // (n, m), divided by sqrt(d_k), not by d_k
}

Matrix softmax_rows(const Matrix& scores) {
  require_nonempty("softmax_rows", "scores", scores);
  require_finite("softmax_rows", "scores", scores);
  Matrix weights(scores.rows(), scores.cols());  // (n, m), each row sums to 1
  for (Index i = 0; i < scores.rows(); ++i) {
    // Subtracting the row's maximum changes nothing mathematically (it cancels in the ratio) but
    // keeps every exponent <= 0: no overflow, and the largest term is exactly exp(0) = 1.
    const double row_max = scores.row(i).maxCoeff();
    weights.row(i) = (scores.row(i).array() - row_max).exp().matrix();
    weights.row(i) /= weights.row(i).sum();
  }
  return weights;
}

double dot_product_variance(int d_k, int samples, bool scaled, Rng& rng) {
  require_positive("dot_product_variance", "d_k", d_k);
  if (samples < 2) {
    throw ShapeError("dot_product_variance: samples must be at least 2 (a sample variance needs "
                     "two values), got " + std::to_string(samples));
  }
  const double scale = scaled ? std::sqrt(static_cast<double>(d_k)) : 1.0;
  Vector q(d_k), k(d_k), z(samples);  // z holds one dot product per sample
  for (int s = 0; s < samples; ++s) {
    for (int c = 0; c < d_k; ++c) q(c) = rng.normal();  // first the d_k components of q,
    for (int c = 0; c < d_k; ++c) k(c) = rng.normal();  // then the d_k components of k
    z(s) = q.dot(k) / scale;
  }
  const double mean = z.mean();
  return (z.array() - mean).square().sum() / (samples - 1);  // the sample variance
}

Vector row_entropy(const Matrix& weights) {
  require_nonempty("row_entropy", "weights", weights);
  require_finite("row_entropy", "weights", weights);
  Vector entropy(weights.rows());  // (n): one entropy per row, in nats
  for (Index i = 0; i < weights.rows(); ++i) {
    double h = 0.0;
    for (Index j = 0; j < weights.cols(); ++j) {
      const double w = weights(i, j);
      if (w < 0.0) {
        std::ostringstream out;
        out << "row_entropy: weights " << shape_of(weights) << " has a negative weight " << w
            << " at (" << i << ", " << j << ')';
        throw ValueError(out.str());
      }
      if (w > 0.0) h -= w * std::log(w);  // 0 ln 0 = 0: a key with no weight adds nothing
    }
    entropy(i) = h;
  }
  return entropy;
}

}  // namespace scalebook::ch03
