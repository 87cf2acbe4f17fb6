// Tests of scalebook/masking.hpp: lib's causal mask and masked softmax, which chapters after 4 use.
#include <doctest/doctest.h>

#include <cmath>

#include "scalebook/masking.hpp"
#include "scalebook/testing.hpp"

using namespace scalebook;
using scalebook::testing::near;

TEST_SUITE("lib") {
TEST_CASE("causal mask: lower triangle top-left, shifted by n_k - n_q bottom-right") {
  const BoolMatrix top = causal_mask(2, 4, Alignment::TopLeft);
  const BoolMatrix bottom = causal_mask(2, 4, Alignment::BottomRight);
  for (Index i = 0; i < 2; ++i) {
    for (Index j = 0; j < 4; ++j) {
      CHECK(top(i, j) == (j <= i));
      CHECK(bottom(i, j) == (j <= i + 2));
    }
  }
  CHECK_FALSE(causal_mask(3, 1, Alignment::BottomRight).row(0).any());  // before every key
  CHECK_THROWS_AS(causal_mask(0, 2), ShapeError);
}

TEST_CASE("masked softmax: masked weights exactly zero, fully masked row all zeros") {
  Matrix scores(2, 3);
  scores << 1, 500, 1, 3, 4, 5;
  BoolMatrix allowed(2, 3);
  allowed << true, false, true, false, false, false;
  const Matrix w = masked_softmax(scores, allowed);
  CHECK(w(0, 1) == 0.0);
  CHECK(w(0, 0) == 0.5);
  CHECK(w(0, 2) == 0.5);
  CHECK(w.row(1).isZero(0.0));
  Matrix expected(1, 3);
  expected << 1 / (1 + std::exp(1.0) + std::exp(2.0)), std::exp(1.0) / (1 + std::exp(1.0) + std::exp(2.0)),
      std::exp(2.0) / (1 + std::exp(1.0) + std::exp(2.0));
  CHECK(near(masked_softmax(scores.row(1), BoolMatrix::Constant(1, 3, true)), expected, 1e-15));
  CHECK_THROWS_AS(masked_softmax(scores, BoolMatrix::Constant(3, 2, true)), ShapeError);
}
}
