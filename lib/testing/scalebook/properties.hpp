// scalebook/properties.hpp — a contract's property checked on generated inputs (Debian's RapidCheck),
// reported with the property in one sentence and the smallest input that breaks it.
//
//   check_property("every row of softmax_rows(s) is non-negative and sums to 1 (within 1e-12)", "s",
//                  [](const Matrix& s) -> std::string {
//                    const Matrix w = ch03::softmax_rows(s);
//                    for (Index i = 0; i < w.rows(); ++i)
//                      if (std::abs(w.row(i).sum() - 1) > 1e-12) return "row " + std::to_string(i) + " sums to ...";
//                    return "";                                   // the property holds here
//                  },
//                  gen_matrix({1, 4}, {1, 6}, gen_number(-50, 50)));
//
// The body returns "" where the property holds and what breaks it otherwise (a thrown exception
// breaks it too). The inputs are drawn with a fixed seed (the same every run, whatever RC_PARAMS
// says), 100 cases by default; a failing case is shrunk (RapidCheck's shrinking) to the smallest
// input that still fails, and the check fails once with:
//
//   property: every row of softmax_rows(s) ... | broken by the smallest failing input found: row 0
//   sums to 1.5 | input: s = (1, 2) [[0, 1]] (shrunk from a failing case after 37 cases that hold)
//
// Only the checks link RapidCheck (scalebook::testing): never the code under test.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "scalebook/core.hpp"
#include "scalebook/testing.hpp"

namespace scalebook::testing {

/// How a property is tried: the seed, how many cases must hold, and the largest size RapidCheck
/// grows its generators to.
struct PropertyParams {
  std::uint64_t seed = 20240531;
  int cases = 100;
  int max_size = 100;
};

/// The outcome of a property's run (the check reports it; lib's tests look at it).
struct PropertyOutcome {
  bool holds = true;
  std::string report;  ///< the failure's whole message ("" when it holds)
  int cases = 0;       ///< cases that held before the first failure
};

namespace detail {
/// What the last failing case said and showed (after shrinking: the smallest failing input).
struct LastFailure {
  std::string what, input;
};
/// Runs PROPERTY (RapidCheck's form: it draws its inputs with *gen and fails by RC_FAIL, having
/// filled in LastFailure first) with PARAMS and reports it under SENTENCE.
PropertyOutcome run_property(const std::string& sentence, const std::function<void(LastFailure&)>& property,
                             const PropertyParams& params);
}  // namespace detail

/// Tries the property on inputs drawn from GENS (one generator per argument of BODY; NAMES are
/// their names, comma separated, as the report shows them). BODY returns "" where the property
/// holds, else what breaks it. Returns the outcome; a failing property also fails the check.
namespace detail {
// The arguments a property's draws give its body: each draw one argument, or, when a draw is a pair
// or a tuple (arguments that depend on each other, such as q and k of one width), its parts.
template <class T>
struct is_tuple_like : std::false_type {};
template <class... T>
struct is_tuple_like<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class T>
auto as_parts(const T& drawn) {
  if constexpr (is_tuple_like<T>::value) {
    return std::apply([](const auto&... parts) { return std::make_tuple(parts...); }, drawn);
  } else {
    return std::make_tuple(drawn);
  }
}
template <class... T>
auto as_arguments(const T&... drawn) {
  return std::tuple_cat(as_parts(drawn)...);
}
}  // namespace detail

template <class Body, class... Gens>
PropertyOutcome check_property(const std::string& sentence, const char* names, Body body, const PropertyParams& params,
                               const Gens&... gens) {
  const auto property = [&](detail::LastFailure& last) {
    // Every argument drawn first, then the body: RapidCheck shrinks each draw.
    const auto args = detail::as_arguments(*gens...);
    const auto describe = [&] { return std::apply([&](const auto&... a) { return inputs(names, a...); }, args); };
    const CallInput during(describe);
    std::string what;
    try {
      what = std::apply(body, args);
    } catch (const std::exception& e) {
      what = "the code under test threw " + type_name(typeid(e)) + " on a valid input: \"" + submitted(e.what()) + "\"";
    }
    if (!what.empty()) {
      last.what = what;
      last.input = describe();
      RC_FAIL(what);
    }
  };
  PropertyOutcome outcome = detail::run_property(sentence, std::function<void(detail::LastFailure&)>(property), params);
  if (!outcome.holds) FAIL_CHECK(outcome.report);
  return outcome;
}

template <class Body, class... Gens>
PropertyOutcome check_property(const std::string& sentence, const char* names, Body body, const Gens&... gens) {
  return check_property(sentence, names, std::move(body), PropertyParams{}, gens...);
}

// --- generators, each shrinking towards simple values ----------------------------------------------

/// Whole numbers from lo to hi (shrinking towards the one nearest 0).
rc::Gen<double> gen_whole(int lo, int hi);
/// Numbers from lo to hi in steps of 1/8 (exact in binary; shrinking towards 0).
rc::Gen<double> gen_number(double lo, double hi);
/// Numbers of any magnitude a double holds: a sign, a mantissa in [1, 10) in steps of 1/8, and a
/// power of ten from lo_exp to hi_exp (shrinking towards 1).
rc::Gen<double> gen_magnitude(int lo_exp, int hi_exp);
/// One of VALUES (shrinking towards the first).
rc::Gen<double> gen_one_of(std::vector<double> values);
/// Sizes from lo to hi (shrinking towards lo).
rc::Gen<Index> gen_size(Index lo, Index hi);
/// A (rows, cols) matrix, rows in [rows.first, rows.second] and cols likewise, entries from ENTRY.
rc::Gen<Matrix> gen_matrix(std::pair<Index, Index> rows, std::pair<Index, Index> cols, rc::Gen<double> entry);
/// A matrix of the given shape, entries from ENTRY.
rc::Gen<Matrix> gen_matrix_of(Index rows, Index cols, rc::Gen<double> entry);
/// Attention's (q, k, v): 1 to MOST_QUERIES queries, 1 to MOST_KEYS keys, d_k and d_v from 1 to
/// MOST_WIDTH, entries in [-3, 3] in steps of 1/8.
rc::Gen<std::tuple<Matrix, Matrix, Matrix>> gen_attention_inputs(Index most_queries, Index most_keys, Index most_width);

}  // namespace scalebook::testing
