// Exercise 2.1 — dense_forward
// Chapter 2: small models on scarce data.
//
// The chapter has six exercises, one per file (ex1_dense_forward.cpp to ex6_best_epoch.cpp):
// saving one recompiles only that exercise. Run ./workbook check 2 (or keep ./workbook watch 2
// open) until the chapter's checks pass. Stuck? ./workbook hint 2.1 shows the first hint for 2.1.
//
// Shapes: a batch x is (n, in), one example per row; a Dense layer's weights w are (in, out) and
// its bias b is (1, out); its output is (n, out). The contract, with every function's exact
// promise, is chapters/02-small-models/small_models.hpp.
//
// Bad input must throw, never crash: the helpers in scalebook/core.hpp do the work and write the
// message for you, e.g. require_nonempty("dense_forward", "x", x) throws a ShapeError naming the
// function and the shape; require_shape, require_finite and require_positive work alike.
// Remove [[maybe_unused]] from a parameter once you use it.
//
// Products and the wait at each save: Eigen's x * w compiles its whole blocked product code into
// your file (about a second per save); x.lazyProduct(w) computes the same product entry by entry
// and compiles in a third of the time (x.transpose().lazyProduct(dz) and dz.lazyProduct(w.transpose())
// likewise in 2.2).
//
// What to write:
// Return x w + b (b added to every row), then, when `relu` is true, max(0, .) of every entry.
// Throw ShapeError if x or w is empty, x's columns differ from w's rows, or b is not (1, out);
// ValueError for NaN or infinity in x, w or b.
//
// ---- Your code goes below this line; fixes to the lines above never touch it ----
#include "small_models.hpp"

#include <string>

namespace scalebook::ch02 {

Matrix dense_forward([[maybe_unused]] const Matrix& x, [[maybe_unused]] const Matrix& w,
                     [[maybe_unused]] const RowVector& b, [[maybe_unused]] bool relu) {
  scalebook::not_implemented("2.1", "dense_forward");
}

}  // namespace scalebook::ch02
