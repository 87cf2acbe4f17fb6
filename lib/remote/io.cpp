// Whole-buffer reads and writes on the grader's pipes, for both sides of scalebook/remote.hpp.
#include <unistd.h>

#include <cerrno>

#include "scalebook/remote.hpp"

namespace scalebook::remote {

bool write_fully(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t put = write(fd, data, size);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    size -= static_cast<std::size_t>(put);
  }
  return true;
}

bool read_fully(int fd, char* out, std::size_t size) {
  while (size > 0) {
    const ssize_t got = read(fd, out, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace scalebook::remote
