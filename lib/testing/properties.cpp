// A contract's property checked on generated inputs (see scalebook/properties.hpp).
#include "scalebook/properties.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace scalebook::testing {

namespace {
// RapidCheck's own reporting (the configuration it read, the failures to reproduce at exit) is
// left out: the check's message says it all, and no environment variable changes the seed.
struct Quiet : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};
}  // namespace

namespace detail {
PropertyOutcome run_property(const std::string& sentence, const std::function<void(LastFailure&)>& property,
                             const PropertyParams& params) {
  LastFailure last;
  rc::detail::TestParams test;
  test.seed = params.seed;
  test.maxSuccess = params.cases;
  test.maxSize = params.max_size;
  rc::detail::TestMetadata metadata;
  metadata.id = sentence;
  metadata.description = sentence;
  Quiet quiet;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty([&] { property(last); }), metadata, test, quiet,
      std::unordered_map<std::string, rc::detail::Reproduce>{});
  PropertyOutcome outcome;
  if (result.template is<rc::detail::SuccessResult>()) {
    outcome.cases = result.template get<rc::detail::SuccessResult>().numSuccess;
    return outcome;
  }
  outcome.holds = false;
  if (result.template is<rc::detail::FailureResult>()) {
    const auto& failure = result.template get<rc::detail::FailureResult>();
    outcome.cases = failure.numSuccess;
    outcome.report = "property: " + sentence + " | broken by the smallest failing input found: " + last.what + " | " +
                     last.input + " (found after " + std::to_string(failure.numSuccess) +
                     " generated cases held, then shrunk; the draws are the same every run)";
  } else if (result.template is<rc::detail::GaveUpResult>()) {
    outcome.report = "property: " + sentence + " | the checks' own generator gave up: " +
                     result.template get<rc::detail::GaveUpResult>().description;
  } else {
    outcome.report = "property: " + sentence + " | the checks' property could not run: " +
                     result.template get<rc::detail::Error>().description;
  }
  return outcome;
}
}  // namespace detail

rc::Gen<double> gen_whole(int lo, int hi) {
  return rc::gen::map(rc::gen::inRange(lo, hi + 1), [](int k) { return static_cast<double>(k); });
}

rc::Gen<double> gen_number(double lo, double hi) {
  const int a = static_cast<int>(std::ceil(lo * 8)), b = static_cast<int>(std::floor(hi * 8));
  return rc::gen::map(rc::gen::inRange(a, b + 1), [](int k) { return k / 8.0; });
}

rc::Gen<double> gen_magnitude(int lo_exp, int hi_exp) {
  return rc::gen::map(rc::gen::tuple(rc::gen::element(1.0, -1.0), rc::gen::inRange(8, 80), rc::gen::inRange(lo_exp, hi_exp + 1)),
                      [](const std::tuple<double, int, int>& t) {
                        const auto [sign, mantissa, exponent] = t;
                        return sign * (mantissa / 8.0) * std::pow(10.0, exponent);
                      });
}

rc::Gen<double> gen_one_of(std::vector<double> values) { return rc::gen::elementOf(std::move(values)); }

rc::Gen<Index> gen_size(Index lo, Index hi) {
  return rc::gen::map(rc::gen::inRange<long long>(lo, hi + 1), [](long long k) { return static_cast<Index>(k); });
}

rc::Gen<Matrix> gen_matrix_of(Index rows, Index cols, rc::Gen<double> entry) {
  return rc::gen::map(rc::gen::container<std::vector<double>>(static_cast<std::size_t>(rows * cols), std::move(entry)),
                      [rows, cols](const std::vector<double>& values) {
                        Matrix m(rows, cols);
                        for (Index i = 0; i < rows; ++i)
                          for (Index j = 0; j < cols; ++j) m(i, j) = values[static_cast<std::size_t>(i * cols + j)];
                        return m;
                      });
}

rc::Gen<Matrix> gen_matrix(std::pair<Index, Index> rows, std::pair<Index, Index> cols, rc::Gen<double> entry) {
  return rc::gen::mapcat(rc::gen::pair(gen_size(rows.first, rows.second), gen_size(cols.first, cols.second)),
                         [entry](const std::pair<Index, Index>& shape) {
                           return gen_matrix_of(shape.first, shape.second, entry);
                         });
}

rc::Gen<std::tuple<Matrix, Matrix, Matrix>> gen_attention_inputs(Index most_queries, Index most_keys, Index most_width) {
  return rc::gen::mapcat(rc::gen::tuple(gen_size(1, most_queries), gen_size(1, most_keys), gen_size(1, most_width), gen_size(1, most_width)),
                         [](const std::tuple<Index, Index, Index, Index>& s) {
                           const auto [n_q, n_k, d_k, d_v] = s;
                           return rc::gen::tuple(gen_matrix_of(n_q, d_k, gen_number(-3, 3)), gen_matrix_of(n_k, d_k, gen_number(-3, 3)),
                                                 gen_matrix_of(n_k, d_v, gen_number(-3, 3)));
                         });
}

}  // namespace scalebook::testing
