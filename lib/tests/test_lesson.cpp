// Tests of scalebook/lesson.hpp: what a failed claim does to a lesson's exit status, on the book's
// run (--book, the docs build's) and on a student's.
#include <doctest/doctest.h>

#include <functional>
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
