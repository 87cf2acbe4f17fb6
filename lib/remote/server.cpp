// The worker side of scalebook/remote.hpp: main() of the process that runs a submission's code in
// the sandbox. Reads requests on fd 3, writes replies on fd 4, until fd 3 closes.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>

#include <cxxabi.h>
#include <map>
#include <string>
#include <typeinfo>
#include <vector>

#include "scalebook/remote.hpp"

namespace scalebook::remote {
namespace {

std::map<std::string, Handler>& table() {
  static std::map<std::string, Handler> handlers;
  return handlers;
}

std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return "unknown";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string result = status == 0 && name != nullptr ? name : type->name();
  std::free(name);
  if (result.rfind("std::__cxx11::", 0) == 0) result = "std::" + result.substr(14);
  return result;
}

void exception_reply(Writer& out, const std::string& type, const std::string& message) {
  out.buffer().clear();
  out.raw<std::uint8_t>(1);
  Codec<std::string>::put(out, type);
  Codec<std::string>::put(out, message.substr(0, 4096));
}

// Lowers this process's soft CPU limit to the CPU time it has used plus SECONDS (rounded up), never
// above the hard limit the box set: past it the kernel sends SIGXCPU, and the client reports the
// call as timed_out: call CPU. SECONDS 0: the box's own limit only.
void limit_cpu(double seconds) {
  if (!(seconds > 0)) return;
  rusage used{};
  rlimit limit{};
  if (getrusage(RUSAGE_SELF, &used) != 0 || getrlimit(RLIMIT_CPU, &limit) != 0) return;
  const double spent = static_cast<double>(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(used.ru_utime.tv_usec + used.ru_stime.tv_usec);
  rlim_t soft = static_cast<rlim_t>(std::ceil(spent + seconds));
  if (limit.rlim_max != RLIM_INFINITY && soft > limit.rlim_max) soft = limit.rlim_max;
  limit.rlim_cur = soft;
  setrlimit(RLIMIT_CPU, &limit);
}

}  // namespace

Served::Served(const char* exercise, const char* function, Handler handler) {
  table()[std::string(exercise) + "/" + function] = handler;
}

}  // namespace scalebook::remote

int main() {
  using namespace scalebook::remote;
  // Pages of 4 KiB, never 2 MiB ones: the trusted side's memory readings (lib/remote/memory.cpp)
  // then count what a call touched, not the huge pages around it.
  prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  while (true) {
    std::uint64_t size = 0;
    if (!read_fully(3, reinterpret_cast<char*>(&size), sizeof size)) return 0;
    if (size > (1ull << 31)) return 3;
    std::vector<char> frame(size);
    if (!read_fully(3, frame.data(), frame.size())) return 3;
    Writer out;
    try {
      Reader in(frame.data(), frame.size());
      const std::string exercise = Codec<std::string>::get(in);
      const std::string function = Codec<std::string>::get(in);
      limit_cpu(Codec<double>::get(in));
      const auto found = table().find(exercise + "/" + function);
      if (found == table().end()) {
        exception_reply(out, "scalebook::remote::Unknown", function + " is not served by this worker");
      } else {
        found->second(in, out);
      }
    } catch (const std::exception& error) {
      exception_reply(out, current_exception_type(), error.what());
    } catch (...) {
      exception_reply(out, current_exception_type(), "(not a std::exception)");
    }
    const std::uint64_t reply_size = out.buffer().size();
    if (!write_fully(4, reinterpret_cast<const char*>(&reply_size), sizeof reply_size) ||
        !write_fully(4, out.buffer().data(), out.buffer().size()))
      return 4;
  }
}
