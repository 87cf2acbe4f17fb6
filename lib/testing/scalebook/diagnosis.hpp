// scalebook/diagnosis.hpp — a known mistake named only on evidence that separates it from the others.
//
// A Diagnosis holds one exercise's known mistakes as computations (each the check's own reference
// computation with that slip applied) and a battery of inputs on which they all give different
// outputs. It names mistake X for a failing input only when
//   - the student's output there equals X's and differs from the right answer, and
//   - on every input of the battery the student's output equals X's too.
// One matching output, on a degenerate input (a single 0/1 prediction, d_v = d_k / 2, inputs of
// +-infinity), is not evidence: many mistakes give it. Agreeing with X on the whole battery is,
// because the battery is proven to tell every pair of known mistakes apart:
//
//   ./chNN_checks --scalebook-prove-separation
//
// runs each Diagnosis's proof (no code under test involved): every mistake differs from the right
// answer on some battery input, and every two mistakes differ from each other on some battery
// input. The reference build runs it as a test per chapter. A mistake the battery cannot tell from
// another is never named; the proof fails instead of the message guessing.
//
//   const Diagnosis<Matrix, Matrix> kSoftmaxSlips{
//       "3.3", [](const Matrix& s) { return ch03::softmax_rows(s); },      // the code under test
//       [](const Matrix& s) { return softmax_by_definition(s); },          // the right answer
//       {{kNoMax, [](const Matrix& s) { return shifted(s, 0); }}, ...},    // each known slip
//       [] { return std::vector<std::tuple<Matrix>>{...}; },               // the battery
//       same_matrix(1e-12)};
//   CHECK_MESSAGE(near(w, expected), said("softmax_rows of ... must ...", kSoftmaxSlips.name(s)));
//
// name() is called only when its check fails (a CHECK_MESSAGE's message is built lazily): it calls
// the code under test once on the failing input and once on each battery input.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "scalebook/core.hpp"
#include "scalebook/testing.hpp"  // Named, the one form a named mistake takes

namespace scalebook::testing {

/// Every Diagnosis of a checks binary registers its separation proof here (in order of
/// construction); doctest_main's --scalebook-prove-separation runs them all.
struct SeparationProof {
  const void* owner;  ///< the Diagnosis (it leaves the registry when it is destroyed)
  std::string exercise;
  std::function<std::vector<std::string>()> problems;  ///< what the battery fails to tell apart ({} when none)
};
std::vector<SeparationProof>& separation_proofs();

/// Runs every registered proof; returns the problems, each "EXERCISE: ...".
std::vector<std::string> prove_separation();

/// Equality of two outputs for a Diagnosis: within tol * max(1, |b|) entry by entry (NaN equal to
/// NaN, the same infinities equal), the same shape.
bool same_output_matrix(const Matrix& a, const Matrix& b, double tol);
std::function<bool(const Matrix&, const Matrix&)> same_matrix(double tol = 1e-9);
bool same_output_number(double a, double b, double tol);

namespace detail {
inline std::string mistake_id(const Named& mistake) { return mistake.id; }
void forget_proof(const void* owner);  ///< a Diagnosis leaves the registry
}  // namespace detail

/// One exercise's known mistakes, the battery that tells them apart, and the naming rule above.
/// Obs is what a check observes of the code under test for an input (a matrix, a number, a struct,
/// or several functions' results together); Args are the input's parts.
template <class Obs, class... Args>
class Diagnosis {
 public:
  using Input = std::tuple<Args...>;
  using Observe = std::function<Obs(const Args&...)>;
  using Same = std::function<bool(const Obs&, const Obs&)>;
  struct Slip {
    Named mistake;
    Observe output;  ///< what the code gives with this mistake, for an input (the check computes it)
  };

  Diagnosis(std::string exercise, Observe student, Observe right, std::vector<Slip> slips,
            std::function<std::vector<Input>()> battery, Same same)
      : exercise_(std::move(exercise)),
        student_(std::move(student)),
        right_(std::move(right)),
        slips_(std::move(slips)),
        battery_(std::move(battery)),
        same_(std::move(same)) {
    separation_proofs().push_back({this, exercise_, [this] { return proof(); }});
  }
  ~Diagnosis() { detail::forget_proof(this); }
  Diagnosis(const Diagnosis&) = delete;
  Diagnosis& operator=(const Diagnosis&) = delete;

  /// "the output matches known mistake [ID]: TEXT" when the evidence separates one mistake (see
  /// above), else "". Never throws: an exception from the code under test is no evidence.
  std::string name(const Args&... input) const { return name_on(Input(input...)); }

  /// The same for an input held as a tuple.
  std::string name_on(const Input& input) const {
    std::vector<const Slip*> alive;
    try {
      const Obs actual = std::apply(student_, input), right = std::apply(right_, input);
      for (const Slip& slip : slips_) {
        const Obs wrong = std::apply(slip.output, input);
        if (same_(actual, wrong) && !same_(wrong, right)) alive.push_back(&slip);
      }
      if (alive.empty()) return "";
      for (const Input& probe : battery_()) {
        const Obs actual_there = std::apply(student_, probe);
        std::vector<const Slip*> kept;
        for (const Slip* slip : alive)
          if (same_(actual_there, std::apply(slip->output, probe))) kept.push_back(slip);
        alive.swap(kept);
        if (alive.empty()) return "";
      }
    } catch (...) {  // the code under test threw on a valid input: that says no mistake's name
      return "";
    }
    // Two ways of computing one mistake (std::exp or Eigen's, say) may both agree: one id. Two
    // mistakes never do on the whole battery (the proof says so); if they did, neither is named.
    for (const Slip* slip : alive)
      if (detail::mistake_id(slip->mistake) != detail::mistake_id(alive.front()->mistake)) return "";
    return detail::name_mistakes({alive.front()->mistake});
  }

  const std::string& exercise() const { return exercise_; }

 private:
  // What the battery fails to tell apart (the proof run by --scalebook-prove-separation).
  std::vector<std::string> proof() const {
    std::vector<std::string> problems;
    std::vector<Input> inputs;
    try {
      inputs = battery_();
    } catch (const std::exception& e) {
      return {exercise_ + ": its battery of diagnostic inputs threw: " + e.what()};
    }
    if (inputs.empty()) problems.push_back(exercise_ + ": its battery holds no input");
    std::vector<std::vector<Obs>> outputs(slips_.size());
    std::vector<Obs> right;
    try {
      for (const Input& input : inputs) right.push_back(std::apply(right_, input));
    } catch (const std::exception& e) {
      return {exercise_ + ": the right answer's computation threw on a diagnostic input: " + e.what()};
    }
    for (std::size_t s = 0; s < slips_.size(); ++s) {
      try {
        for (const Input& input : inputs) outputs[s].push_back(std::apply(slips_[s].output, input));
      } catch (const std::exception& e) {
        problems.push_back(exercise_ + ": [" + detail::mistake_id(slips_[s].mistake) +
                           "]'s computation threw on a diagnostic input: " + e.what());
        outputs[s].clear();
      }
    }
    const auto differs = [&](const std::vector<Obs>& a, const std::vector<Obs>& b) {
      if (a.size() != b.size() || a.empty()) return true;  // a failed computation: said above
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_(a[i], b[i])) return true;
      return false;
    };
    for (std::size_t s = 0; s < slips_.size(); ++s) {
      if (!differs(outputs[s], right))
        problems.push_back(exercise_ + ": [" + detail::mistake_id(slips_[s].mistake) +
                           "] gives the right answer on every diagnostic input: add one where it shows");
      for (std::size_t t = s + 1; t < slips_.size(); ++t)
        if (detail::mistake_id(slips_[s].mistake) != detail::mistake_id(slips_[t].mistake) &&
            !differs(outputs[s], outputs[t]))
          problems.push_back(exercise_ + ": [" + detail::mistake_id(slips_[s].mistake) + "] and [" +
                             detail::mistake_id(slips_[t].mistake) +
                             "] give the same output on every diagnostic input: add one that tells them apart");
    }
    return problems;
  }

  std::string exercise_;
  Observe student_, right_;
  std::vector<Slip> slips_;
  std::function<std::vector<Input>()> battery_;
  Same same_;
};

}  // namespace scalebook::testing
