// The once-compiled doctest main shared by every check binary (compiling doctest's implementation
// once keeps a student's edit-to-verdict loop short).
//
// Besides doctest's own options it understands:
//   --scalebook-expect-all-fail   exit 0 only if every selected test case failed. The maintainers'
//                                 build runs the checks against the untouched stubs this way: a
//                                 check that passes on a stub proves nothing and is a defect.
//   --scalebook-results=FILE      write FILE as the checks run, flushed line by line:
//                                 "start <TAB> name" when a test case begins, then
//                                 "STATUS <TAB> name <TAB> first failure message" when it ends,
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

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace scalebook::testing {
std::string& transport_status();  // below
std::string submitted(std::string text);  // scalebook/testing.hpp: a submission's text, quoted safely
}

namespace {

// Per test case: did it fail, and the first failure's message? Filled by a listener, so it works
// beside any reporter.
struct Outcome {
  bool failed = false;
  std::string message;
};

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

void record_failure(const std::string& name, const std::string& message) {
  Outcome& outcome = outcomes()[name];
  // doctest first reports an exception in a subcase with a placeholder, then the real message.
  const bool placeholder = outcome.message.find("will translate later") != std::string::npos;
  if (!outcome.failed || outcome.message.empty() || placeholder) outcome.message = one_line(message);
  outcome.failed = true;
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
    write_result(status.c_str(), current_, outcome.message);
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
      write_result("crashed", current_, one_line(e.error_string.c_str() + contexts));
      record_failure(current_, std::string("crashed: ") + e.error_string.c_str() + contexts);
      return;
    }
    // An exception that left the check: its message is the submission's text; the contexts of the
    // scopes it left (INPUTS among them) were kept by doctest as it unwound.
    const std::string text = scalebook::testing::submitted(e.error_string.c_str());
    std::string contexts;
    for (int i = get_num_stringified_contexts() - 1; i >= 0; --i) {
      const std::string context = get_stringified_contexts()[i].c_str();
      if (!context.empty()) contexts += " | " + context;
    }
    const std::string eigen = eigen_assertion(text, current_);
    record_failure(current_, (eigen.empty() ? "threw: " + text : eigen) + contexts);
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
    std::string message;
    if (!texts.empty() && !texts.back().empty()) message += texts.back() + " | ";
    message += data.m_expr;
    if (data.m_threw) {
      const std::string thrown = scalebook::testing::submitted(data.m_exception.c_str());
      const std::string eigen = eigen_assertion(thrown, current_);
      message = eigen.empty() ? message + " threw: " + thrown : eigen + " | " + message;
    } else if (data.m_decomp.size() > 0) {
      message += " is " + std::string(data.m_decomp.c_str());
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
  bool expect_all_fail = false;
  const char* results_file = nullptr;
  constexpr const char* results_flag = "--scalebook-results=";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scalebook-expect-all-fail") == 0) expect_all_fail = true;
    else if (std::strncmp(argv[i], results_flag, std::strlen(results_flag)) == 0)
      results_file = argv[i] + std::strlen(results_flag);
    else args.push_back(argv[i]);
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
