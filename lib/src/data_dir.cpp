// scalebook::data_dir() (see scalebook/data.hpp), alone in its file: the one source of lib compiled
// with an absolute path (the repository's data/ folder). A copy of the tree elsewhere (a scratch
// tree of the tests, a student's clone) recompiles only this small file and finds the rest of lib
// in ccache, whose keys hold paths relative to the tree.
#include <cstdlib>

#include "scalebook/data.hpp"

#ifndef SCALEBOOK_DATA_DIR
#error "lib/CMakeLists.txt defines SCALEBOOK_DATA_DIR, the repository's data/ folder"
#endif

namespace scalebook {

std::filesystem::path data_dir() {
  if (const char* dir = std::getenv("SCALEBOOK_DATA_DIR"); dir != nullptr && *dir != '\0') return dir;
  return SCALEBOOK_DATA_DIR;
}

}  // namespace scalebook
