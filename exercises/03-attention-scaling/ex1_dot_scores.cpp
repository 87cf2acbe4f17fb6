// Exercise 3.1 — the raw scores
// Chapter 3: why attention scores are divided by sqrt(d_k).
//
// The chapter has five exercises, one per file (ex1_dot_scores.cpp to ex5_row_entropy.cpp):
// saving one recompiles only that exercise. Run ./workbook check 3 (or keep ./workbook watch 3
// open) until the chapter's checks pass. Stuck? ./workbook hint 3.1 shows the first hint for 3.1.
//
// Shapes: q is (n, d_k) with one query per row, k is (m, d_k) with one key per row; scores and
// weights are (n, m), row i holding query i's view of every key. The contract, with every
// function's exact promise, is chapters/03-attention-scaling/attention_scaling.hpp.
//
// Bad input must throw, never crash: the helpers in scalebook/core.hpp do the work and write the
// message for you, e.g. require_nonempty("dot_scores", "q", q) throws a ShapeError naming the
// function and the shape. require_same_cols, require_finite and require_positive work alike, and
// require_queries_keys("dot_scores", q, k) makes all the checks 3.1 and 3.2 need at once.
//
// What to write:
// Return the (n, m) matrix whose entry (i, j) is the dot product of query i (row i of q) with
// key j (row j of k). No scaling yet: that is 3.2.
// Throw ShapeError if q or k is empty or if they disagree on d_k (their number of columns), and
// ValueError if either holds NaN or infinity.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "attention_scaling.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace scalebook::ch03 {

Matrix dot_scores([[maybe_unused]] const Matrix& q, [[maybe_unused]] const Matrix& k) {
  scalebook::not_implemented("3.1", "dot_scores");
}

}  // namespace scalebook::ch03
