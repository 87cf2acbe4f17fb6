// Chapter 8 lesson — normalisation.
//
// Prints every number the chapter's page shows (the page cuts the sections out of this
// program's output with \snippet) and writes ch08_first_look.dat for the figure.
// Deterministic: fixed seeds, fixed precision, one thread.
#include <cstdio>
#include <vector>

#include "normalisation.hpp"
#include "scalebook/lesson.hpp"

int main(int argc, char** argv) {
  return scalebook::run_lesson(argc, argv, [](scalebook::Lesson& lesson) {
    lesson.begin("first-look");
    // SCALEBOOK-TODO: call the chapter's functions and print what the page shows.
    std::vector<double> xs, ys;
    for (int i = 1; i <= 4; ++i) {
      xs.push_back(i);
      ys.push_back(i * i);
      std::printf("x = %d  y = %d\n", i, i * i);
    }
    lesson.end("first-look");
    lesson.table("ch08_first_look.dat", {"x", "y"}, {xs, ys});
  });
}
