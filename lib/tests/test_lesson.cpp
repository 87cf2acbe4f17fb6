// Tests of scalebook/lesson.hpp: what a failed claim does to a lesson's exit status, on the book's
// run (--book, the docs build's) and on a student's.
#include <doctest/doctest.h>

#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "scalebook/lesson.hpp"

using namespace scalebook;

namespace {

// run_lesson with the arguments ARGS (after the program's name) and BODY; its exit status.
int run_with(std::vector<std::string> args, const std::function<void(Lesson&)>& body) {
  args.insert(args.begin(), "lesson");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return run_lesson(static_cast<int>(argv.size()), argv.data(), body);
}

}  // namespace

TEST_CASE("lesson: a claim that fails makes the lesson exit 1 on every run") {
  const auto body = [](Lesson& lesson) { lesson.claim(false, "the variance grows with d_k"); };
  CHECK(run_with({"."}, body) == 1);
  CHECK(run_with({".", "--book"}, body) == 1);
  CHECK(run_with({".", "--book"}, [](Lesson& lesson) { lesson.claim(true, "holds"); }) == 0);
}

TEST_CASE("lesson: a sentence about the book's own last bits binds the book's run only") {
  bool book = false;
  const auto body = [&](Lesson& lesson) {
    book = lesson.book_run();
    lesson.claim_in_book(false, "the loop and fused forms agree to 1e-15");
  };
  CHECK(run_with({".", "--book"}, body) == 1);  // the docs build stops: the page would be wrong
  CHECK(book);
  CHECK(run_with({"."}, body) == 0);  // a student's run notes it and goes on
  CHECK_FALSE(book);
  CHECK(run_with({}, body) == 0);
  CHECK(run_with({".", "--book"}, [](Lesson& lesson) { lesson.claim_in_book(true, "holds"); }) == 0);
  // The note fails nothing, but a claim beside it still does.
  CHECK(run_with({"."}, [](Lesson& lesson) {
          lesson.claim_in_book(false, "to 1e-15");
          lesson.claim(false, "within the checks' 1e-12");
        }) == 1);
}

TEST_CASE("lesson: a named value is the printed text, listed after the sections for the page to quote") {
  std::ostringstream out;
  std::streambuf* const saved = std::cout.rdbuf(out.rdbuf());
  std::string shown;
  const int status = run_with({"."}, [&](Lesson& lesson) {
    lesson.begin("fit");
    shown = lesson.value("fitted_floor", 0.090953, "%.4f");
    std::cout << "E = " << shown << '\n';
    lesson.end("fit");
    lesson.value("rows", 16384);
    lesson.value("share", 49.04, "%.1f%%");
  });
  std::cout.rdbuf(saved);
  CHECK(status == 0);
  CHECK(shown == "0.0910");
  const std::string text = out.str();
  const auto section = text.find("== [page-numbers] ==\nfitted_floor = 0.0910\nrows = 16384\nshare = 49.0%\n-- [page-numbers] --\n");
  CHECK_MESSAGE(section != std::string::npos, text);
  CHECK_MESSAGE(section > text.find("-- [fit] --"), "the values follow the lesson's own sections: " << text);
}

TEST_CASE("lesson: a value's name, its uniqueness and its format are checked, with the function named") {
  Lesson lesson(".");
  lesson.value("ok_1", 1.5, "%.2f");
  for (const std::string name : {"", "Capital", "1st", "with space", "dash-ed", "{{x}}"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(lesson.value(name, 1.0, "%.1f"), doctest::Contains("Lesson::value"), ValueError);
  }
  CHECK_THROWS_WITH_AS(lesson.value("ok_1", 2.0, "%.1f"), doctest::Contains("given twice"), ValueError);
  CHECK_THROWS_WITH_AS(lesson.value("ok_1", 2), doctest::Contains("given twice"), ValueError);
  // printf must read exactly one double: no integer or string conversion, no second conversion.
  for (const std::string format : {"%d", "%s", "%.2f and %.2f", "no conversion", "%%f", "%n", "%.3g\n", "%*f", "%Lf"}) {
    CAPTURE(format);
    CHECK_THROWS_WITH_AS(lesson.value("ok_3", 1.0, format), doctest::Contains("is not one printf conversion"), ValueError);
  }
  CHECK(lesson.value("ok_4", 12.5, "%+.1e %%") == "+1.2e+01 %");
  CHECK(lesson.value("ok_5", static_cast<long>(-3)) == "-3");
  CHECK(lesson.values().size() == 3);
}
