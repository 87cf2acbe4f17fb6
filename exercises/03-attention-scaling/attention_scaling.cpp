// Chapter 3 exercises — why attention scores are divided by sqrt(d_k).
//
// Implement the five functions below, one exercise at a time, and re-run ./workbook (or keep
// ./workbook watch open) until the chapter's checks pass. Stuck? ./workbook hint 3.1 shows the
// first hint for exercise 3.1.
//
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key. The contract, with every
// function's exact promise, is chapters/03-attention-scaling/attention_scaling.hpp.
//
// Bad input must throw, never crash: the helpers in scalebook/core.hpp do the work and write the
// message for you, e.g. require_nonempty("dot_scores", "q", q) throws a ShapeError naming the
// function and the shape. require_same_cols, require_finite and require_positive work alike.
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

// Exercise 3.1 — the raw scores.
// Return the (n, m) matrix whose entry (i, j) is the dot product of query i (row i of q) with
// key j (row j of k). No scaling yet: that is 3.2.
// Throw ShapeError if q or k is empty or if they disagree on d_k (their number of columns), and
// ValueError if either holds NaN or infinity.
Matrix dot_scores([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k) {
  scalebook::not_implemented("3.1", "dot_scores");
}

// Exercise 3.2 — the scaled scores.
// Return the scores of 3.1 divided by the square root of d_k, where d_k = q.cols() is the
// length of each query and key vector (not the number of queries or keys).
// Same bad-input rules as 3.1.
Matrix scaled_scores([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k) {
  scalebook::not_implemented("3.2", "scaled_scores");
}

// Exercise 3.3 — a softmax that survives large scores.
// Turn each ROW of scores into weights: w(i, j) = exp(s(i, j)) / sum over j' of exp(s(i, j')).
// Each row of the result is non-negative and sums to 1. Scores like 1000 or -1000 must give
// correct weights, not NaN or infinity: exp(1000) does not fit in a double.
// Throw ShapeError if scores is empty, ValueError if it holds NaN or infinity.
Matrix softmax_rows([[maybe_unused]] const Matrix& scores) {
  scalebook::not_implemented("3.3", "softmax_rows");
}

// Exercise 3.4 — where sqrt(d_k) comes from, measured.
// Draw `samples` pairs of vectors q and k of length d_k with standard normal components and
// return the sample variance of their dot products z = q·k (of z / sqrt(d_k) when `scaled`).
// Draw in exactly this order, so that everyone's numbers agree: for each sample, first the d_k
// components of q with rng.normal(), then the d_k components of k.
// "Sample variance": subtract the mean of the z values, and divide the sum of squares by
// samples - 1.
// Throw ShapeError if d_k < 1 or samples < 2.
double dot_product_variance([[maybe_unused]] int d_k, [[maybe_unused]] int samples,
                            [[maybe_unused]] bool scaled, [[maybe_unused]] Rng& rng) {
  scalebook::not_implemented("3.4", "dot_product_variance");
}

// Exercise 3.5 — how concentrated is attention?
// Return one number per row of weights: its entropy in nats (natural logarithm),
// H = - sum over j of w(i, j) ln w(i, j), where a weight of exactly 0 contributes 0.
// Spread-out rows have high entropy (ln m at most), a row with all weight on one key has 0.
// Throw ShapeError if weights is empty; ValueError if an entry is negative, NaN or infinite, or if
// a row does not sum to 1 within 1e-9.
Vector row_entropy([[maybe_unused]] const Matrix& weights) {
  scalebook::not_implemented("3.5", "row_entropy");
}

}  // namespace scalebook::ch03
