// The once-compiled doctest main shared by every check binary (compiling doctest's implementation
// once keeps a student's edit-to-verdict loop short).
//
// Besides doctest's own options it understands:
//   --scalebook-expect-all-fail   exit 0 only if every selected test case failed. The maintainers'
//                                 build runs the checks against the untouched stubs this way: a
//                                 check that passes on a stub proves nothing and is a defect.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

// Per test case: did it fail? Filled by a listener, so it works beside any reporter.
std::map<std::string, bool>& outcomes() {
  static std::map<std::string, bool> failed_by_name;
  return failed_by_name;
}

struct OutcomeListener : doctest::IReporter {
  explicit OutcomeListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override { current_ = data.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    outcomes()[current_] |= !stats.testCaseSuccess;
  }
  void test_case_exception(const doctest::TestCaseException&) override { outcomes()[current_] = true; }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::string current_;
};

}  // namespace

DOCTEST_REGISTER_LISTENER("scalebook_outcomes", 1, OutcomeListener);

int main(int argc, char** argv) {
  bool expect_all_fail = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scalebook-expect-all-fail") == 0) expect_all_fail = true;
    else args.push_back(argv[i]);
  }
  doctest::Context context;
  context.applyCommandLine(static_cast<int>(args.size()), args.data());
  const int status = context.run();
  if (context.shouldExit() || !expect_all_fail) return status;

  int passed_on_stub = 0;
  for (const auto& [name, failed] : outcomes()) {
    if (!failed) {
      std::cout << "check passed on the untouched stub (it proves nothing): " << name << '\n';
      ++passed_on_stub;
    }
  }
  if (outcomes().empty()) {
    std::cout << "no check ran: nothing was proven\n";
    return 1;
  }
  std::cout << outcomes().size() - passed_on_stub << " of " << outcomes().size()
            << " checks fail on the untouched stubs, as they must\n";
  return passed_on_stub == 0 ? 0 : 1;
}
