// scalebook/random.hpp — deterministic random numbers: the same seed gives the same bits on every
// run and every machine with IEEE doubles and the same libm.
//
// Algorithm (documented so that results can be reproduced elsewhere):
//  - state: xoshiro256** (Blackman & Vigna, 2018), its four words filled from the seed by splitmix64;
//  - uniform(): the top 53 bits of the next output times 2^-53, a double in [0, 1);
//  - normal(): Box–Muller on two uniforms u1, u2 (u1 taken as 1 - uniform() so it is never 0):
//    r = sqrt(-2 ln u1), first call returns r cos(2 pi u2), the next call returns r sin(2 pi u2);
//  - normal_matrix(): fills row by row (row 0 left to right, then row 1, ...).
/// \file
/// \brief Deterministic random numbers: the same seed gives the same numbers on every run and
/// machine.
#pragma once

#include <array>
#include <cstdint>

#include "scalebook/core.hpp"

namespace scalebook {

/// \brief The workbook's random numbers: xoshiro256** seeded by splitmix64 (see the top of
/// scalebook/random.hpp); the same seed gives the same numbers everywhere.
class Rng {
 public:
  /// A generator whose four state words are filled from `seed` by splitmix64.
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();  ///< the raw xoshiro256** output
  double uniform();          ///< in [0, 1)
  double normal();           ///< standard normal, mean 0 and variance 1

  /// Everything that decides the next numbers: the grader carries a generator across processes.
  struct State {
    std::array<std::uint64_t, 4> words;  ///< xoshiro256**'s state
    double spare_normal;                 ///< Box–Muller's second value, when has_spare
    bool has_spare;                      ///< whether the next normal() returns spare_normal
  };
  /// The generator's state, to restore() elsewhere.
  State state() const { return {state_, spare_normal_, has_spare_}; }
  /// Continues from a state() taken earlier: the same numbers follow.
  void restore(const State& s) {
    state_ = s.words;
    spare_normal_ = s.spare_normal;
    has_spare_ = s.has_spare;
  }

 private:
  std::array<std::uint64_t, 4> state_{};
  double spare_normal_ = 0.0;
  bool has_spare_ = false;
};

/// rows × cols standard normal entries, drawn row by row. Throws ShapeError for negative sizes.
Matrix normal_matrix(Index rows, Index cols, Rng& rng);

}  // namespace scalebook
