// The once-compiled doctest main shared by every check binary (compiling doctest's implementation
// once keeps a student's edit-to-verdict loop short).
//
// Besides doctest's own options it understands:
//   --scalebook-expect-all-fail   exit 0 only if every selected test case failed. The maintainers'
//                                 build runs the checks against the untouched stubs this way: a
//                                 check that passes on a stub proves nothing and is a defect.
//   --scalebook-prove-separation  run no check: prove instead that every Diagnosis's battery tells
//                                 each of its known mistakes apart from the right answer and from
//                                 every other one (scalebook/diagnosis.hpp); exit 1, listing what
//                                 it cannot tell apart, otherwise 0.
//   --scalebook-results=FILE      write FILE as the checks run, flushed line by line:
//                                 "start <TAB> name" when a test case begins, then
//                                 "STATUS <TAB> name <TAB> failure message" when it ends (the first
//                                 failure's message in full, then a line "also failed: REASON" for
//                                 each further failure of the check, its one-line reason),
//                                 STATUS being passed, failed, crashed (this process died of a
//                                 signal) or, for a check failed by a call to the sandboxed worker,
//                                 how the worker failed: worker_crashed:SIGNAME,
//                                 worker_timed_out:call_wall|call_cpu or worker_failed
//                                 (lib/remote/client.cpp knows it; a message never decides it) (the message is one line, its newlines and
//                                 backslashes escaped as \n and \\). A "start" with no end means
//                                 the process died or was stopped inside that check: the runner
//                                 (tools/scalebook/loop/run_checks.py) names it and runs the rest again.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <typeinfo>
#include <sstream>
#include <string>
#include <vector>

namespace scalebook::testing {
std::string& transport_status();  // below
std::string submitted(std::string text);  // scalebook/testing.hpp: a submission's text, quoted safely
std::string type_name(const std::type_info& type);
std::string call_inputs_in_force();
std::vector<std::string> prove_separation();
namespace detail {
const std::string& last_report();
}
}

namespace {
// The last exception doctest translated to text: its type and its text, so that the listener can
// say which error was thrown (doctest hands the listener the text alone).
struct Translated {
  std::string type, text;
};
Translated& last_translated() {
  static Translated last;
  return last;
}
}  // namespace

// Translated as doctest does (its what()), remembering its type on the way.
REGISTER_EXCEPTION_TRANSLATOR(const std::exception& e) {
  last_translated() = {scalebook::testing::type_name(typeid(e)), e.what()};
  return e.what();
}

namespace {

// Per test case: did it fail, and the first failure's message? Filled by a listener, so it works
// beside any reporter.
struct Outcome {
  bool failed = false;
  std::string message;              // the first failure's, in full
  std::vector<std::string> further;  // every further failure's one-line reason, each once
};

// What a results line says after the first failure's message, once per further failure.
constexpr const char* kFurther = "also failed: ";

std::map<std::string, Outcome>& outcomes() {
  static std::map<std::string, Outcome> by_name;
  return by_name;
}

std::vector<std::string>& order() {
  static std::vector<std::string> names;
  return names;
}

// The results file, written line by line as checks start and end (nullptr: not asked for).
std::FILE*& results() {
  static std::FILE* file = nullptr;
  return file;
}

void write_result(const char* status, const std::string& name, const std::string& message) {
  if (results() == nullptr) return;
  std::fprintf(results(), "%s\t%s\t%s\n", status, name.c_str(), message.c_str());
  std::fflush(results());
}

// One line for the results file: backslashes and newlines escaped (\\, \n), tabs as spaces.
std::string one_line(const std::string& text, std::size_t limit = 8000) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t' || c == '\r') out += ' ';
    else out += c;
  }
  if (text.size() > limit) out += "...";
  return out;
}

// lib's eigen_assert turns Eigen's assertions into a ShapeError "Eigen assertion failed: COND
// (...) in FUNCTION, at FILE:LINE". Said as what it is, with the check that was running: the
// header line alone points into Eigen, not at the student's code. "" for any other exception.
std::string eigen_assertion(const std::string& thrown, const std::string& check) {
  const std::string prefix = "Eigen assertion failed: ";
  const std::size_t at = thrown.find(prefix);
  if (at == std::string::npos) return "";
  std::string exercise = check.substr(0, check.find(' '));
  return "Eigen assertion failed inside the code under test: " + thrown.substr(at + prefix.size()) +
         " | while check \"" + check + "\" ran (exercise " + exercise + ")";
}

// A failure's one-line reason: its first part (the check's sentence, or the comparison's first
// line), and the part that names a known mistake when another part does.
std::string reason_of(const std::string& message) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= message.size();) {
    const std::size_t bar = message.find(" | ", at);
    const std::size_t end = bar == std::string::npos ? message.size() : bar;
    parts.push_back(message.substr(at, end - at));
    at = end + 3;
  }
  std::string reason = parts.front().substr(0, parts.front().find('\n'));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].find("known mistake [") != std::string::npos) {
      reason += " | " + parts[i].substr(0, parts[i].find('\n'));
      break;
    }
  }
  return reason.size() > 400 ? reason.substr(0, 400) + "..." : reason;
}

void record_failure(const std::string& name, const std::string& message) {
  Outcome& outcome = outcomes()[name];
  // doctest first reports an exception in a subcase with a placeholder, then the real message.
  const bool placeholder = outcome.message.find("will translate later") != std::string::npos;
  if (!outcome.failed || outcome.message.empty() || placeholder) {
    outcome.message = message;
  } else if (message.empty()) {  // the check's end, already failed: nothing more to say
  } else if (outcome.further.size() < 12) {  // every further failure's reason, each said once
    const std::string reason = reason_of(message);
    if (reason != reason_of(outcome.message) &&
        std::find(outcome.further.begin(), outcome.further.end(), reason) == outcome.further.end())
      outcome.further.push_back(reason);
  }
  outcome.failed = true;
}

// The results line's message: the first failure in full, then each further failure's reason.
std::string full_message(const Outcome& outcome) {
  std::string text = outcome.message;
  for (const std::string& reason : outcome.further) text += std::string("\n") + kFurther + reason;
  return one_line(text);
}

// The code under test threw where the check called it on a valid input (a throw check catches its
// own): what it threw, and that the input was valid. TRANSLATED is doctest's text of it; its type
// is the translator's, when it translated that very text.
std::string thrown_on_valid_input(const std::string& translated, const std::string& check) {
  const std::string type = last_translated().text == translated ? last_translated().type : "";
  const std::string text = scalebook::testing::submitted(translated);
  const std::string eigen = eigen_assertion(text, check);
  if (!eigen.empty()) return eigen;
  if (type == "scalebook::NotImplemented") return text;  // the untouched stub: its own sentence
  return "the code under test threw " + (type.empty() ? std::string("an exception") : type) +
         " on a valid input (the contract accepts this input, so nothing may be thrown): \"" + text + "\"";
}

struct OutcomeListener : doctest::IReporter {
  explicit OutcomeListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    current_ = data.m_name;
    if (outcomes().emplace(current_, Outcome{}).second) order().push_back(current_);
    scalebook::testing::transport_status().clear();
    write_result("start", current_, "");
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    if (!stats.testCaseSuccess) record_failure(current_, "");
    const Outcome& outcome = outcomes()[current_];
    const std::string& transport = scalebook::testing::transport_status();
    const std::string status = !outcome.failed ? "passed" : transport.empty() ? "failed" : transport;
    write_result(status.c_str(), current_, outcome.failed ? full_message(outcome) : "");
  }
  void test_case_exception(const doctest::TestCaseException& e) override {
    if (e.is_crash) {  // a signal: doctest re-raises it after this, so say it now, with the inputs
      // The INFO / INPUTS contexts of the call that crashed are still in scope: they name its input.
      std::string contexts;
      for (int i = 0; i < get_num_active_contexts(); ++i) {
        std::ostringstream text;
        get_active_contexts()[i]->stringify(&text);
        if (!text.str().empty()) contexts += " | " + text.str();
      }
      // The inputs of the calls in progress that no doctest context shows (a throw check's call,
      // a probe, a property's generated input).
      const std::string calls = scalebook::testing::call_inputs_in_force();
      if (!calls.empty()) contexts += " | " + calls;
      write_result("crashed", current_, one_line(e.error_string.c_str() + contexts));
      record_failure(current_, std::string("crashed: ") + e.error_string.c_str() + contexts);
      return;
    }
    // An exception that left the check: its message is the submission's text; the contexts of the
    // scopes it left (INPUTS among them) were kept by doctest as it unwound.
    std::string contexts;
    for (int i = get_num_stringified_contexts() - 1; i >= 0; --i) {
      const std::string context = get_stringified_contexts()[i].c_str();
      if (!context.empty()) contexts += " | " + context;
    }
    record_failure(current_, thrown_on_valid_input(e.error_string.c_str(), current_) + contexts);
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& data) override {
    if (!data.m_failed) return;
    // The diagnosis first (what ./workbook quotes on one line): the innermost context, which is
    // the CHECK_MESSAGE text of a *_MESSAGE assertion (possibly empty: then the comparison's own
    // report leads); then the expression and its report; then the outer INFO / CAPTURE contexts
    // ("alignment: TopLeft", "d_k := 64"), which say where, not what.
    const int contexts = get_num_active_contexts();
    std::vector<std::string> texts;
    for (int i = 0; i < contexts; ++i) {
      std::ostringstream text;
      get_active_contexts()[i]->stringify(&text);
      texts.push_back(text.str());
    }
    // Never the C++ expression nor doctest's decomposition of it ("std::abs(x) < 1e-9 is 0.1 <
    // 1e-09"): the sentence says what was wrong, a comparison helper's report says where.
    const std::string sentence = texts.empty() ? "" : texts.back();
    const std::string decomposition = data.m_decomp.c_str();
    const bool report = !decomposition.empty() && decomposition == scalebook::testing::detail::last_report();
    std::string message = sentence;
    if (data.m_threw) {
      const std::string thrown = thrown_on_valid_input(data.m_exception.c_str(), current_);
      message = thrown.rfind("Eigen assertion", 0) == 0 ? thrown + (sentence.empty() ? "" : " | " + sentence)
                                                        : (sentence.empty() ? thrown : sentence + " | " + thrown);
    } else if (report) {
      message += (message.empty() ? "" : " | ") + decomposition;
    } else if (message.empty()) {  // a bare CHECK (lib's own tests; the chapters have none)
      message = std::string(data.m_expr) + (decomposition.empty() ? "" : " is " + decomposition);
    }
    for (int i = 0; i + 1 < static_cast<int>(texts.size()); ++i)
      if (!texts[i].empty()) message += " | " + texts[i];
    record_failure(current_, message);
  }
  void log_message(const doctest::MessageData& data) override {
    // FAIL_CHECK / FAIL (CHECK_THROWS_TYPED reports this way): the message is the diagnosis; the
    // INFO / CAPTURE contexts follow it. MESSAGE and WARN are not failures.
    if (data.m_severity & doctest::assertType::is_warn) return;
    std::string message = data.m_string.c_str();
    const int contexts = get_num_active_contexts();
    for (int i = 0; i < contexts; ++i) {
      std::ostringstream text;
      get_active_contexts()[i]->stringify(&text);
      if (!text.str().empty()) message += " | " + text.str();
    }
    record_failure(current_, message);
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::string current_;
};

}  // namespace

namespace scalebook::testing {
// How a call to the worker failed in the check now running ("" if none did): lib/remote/client.cpp
// sets it, the results file reports it as the check's status.
std::string& transport_status() {
  static std::string status;
  return status;
}
}  // namespace scalebook::testing

DOCTEST_REGISTER_LISTENER("scalebook_outcomes", 1, OutcomeListener);

int main(int argc, char** argv) {
  bool expect_all_fail = false, prove = false;
  const char* results_file = nullptr;
  constexpr const char* results_flag = "--scalebook-results=";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scalebook-expect-all-fail") == 0) expect_all_fail = true;
    else if (std::strcmp(argv[i], "--scalebook-prove-separation") == 0) prove = true;
    else if (std::strncmp(argv[i], results_flag, std::strlen(results_flag)) == 0)
      results_file = argv[i] + std::strlen(results_flag);
    else args.push_back(argv[i]);
  }
  if (prove) {
    const std::vector<std::string> problems = scalebook::testing::prove_separation();
    for (const std::string& problem : problems) std::cout << problem << '\n';
    std::cout << (problems.empty() ? "every diagnosis tells its known mistakes apart on its diagnostic inputs\n"
                                   : std::to_string(problems.size()) + " mistakes are not told apart\n");
    return problems.empty() ? 0 : 1;
  }
  if (results_file != nullptr) {
    results() = std::fopen(results_file, "w");
    if (results() == nullptr) {
      std::cerr << "cannot write " << results_file << '\n';
      return 2;
    }
  }
  doctest::Context context;
  context.applyCommandLine(static_cast<int>(args.size()), args.data());
  const int status = context.run();
  if (results() != nullptr) std::fclose(results());
  if (context.shouldExit()) return status;
  if (outcomes().empty()) {
    std::cout << "no check matched the filter: nothing was tested\n";
    return 1;
  }
  if (!expect_all_fail) return status;

  int passed_on_stub = 0;
  for (const auto& [name, outcome] : outcomes()) {
    if (!outcome.failed) {
      std::cout << "check passed on the untouched stub (it proves nothing): " << name << '\n';
      ++passed_on_stub;
    }
  }
  std::cout << outcomes().size() - passed_on_stub << " of " << outcomes().size()
            << " checks fail on the untouched stubs, as they must\n";
  return passed_on_stub == 0 ? 0 : 1;
}
