// The trusted side's reading of a worker's memory (scalebook/remote.hpp, WorkerMemory): the
// kernel's counters for the worker process, in /proc, which code in the worker cannot write. The
// sandbox mounts the box's /proc read-only, so the worker cannot reset its own peak or the accessed
// bits of its pages (/proc/self/clear_refs), and its seccomp filter refuses the madvise advice that
// would clear accessed bits of pages it keeps (MADV_FREE, MADV_COLD, MADV_PAGEOUT).
//
// The worker is found from the process the client started: the sandbox's processes each have one
// child, down to the worker, which cannot start one (seccomp). Without a sandbox (the reference's
// grading-path test) the started process is the worker itself.
#include <dirent.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "scalebook/remote.hpp"

namespace scalebook::remote {

int launched_worker();  // lib/remote/client.cpp

namespace {

// The process ids whose parent is PARENT.
std::vector<int> children_of(int parent) {
  std::vector<int> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (command) state ppid ...": the command may hold spaces and parentheses; the last ')' ends it.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) found.push_back(static_cast<int>(pid));
  }
  closedir(proc);
  return found;
}

// A /proc file of PID, opened as the process's owner where this process is root and the worker is
// another uid (grading's uid box): a root without CAP_SYS_PTRACE (Docker's default) may not read
// another uid's smaps_rollup, its owner may. Elsewhere (bubblewrap's box maps the worker to the
// grader's own uid) nothing changes.
std::ifstream open_as_owner(int pid, const char* file) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  struct stat info{};
  if (geteuid() != 0 || stat(("/proc/" + std::to_string(pid)).c_str(), &info) != 0 || info.st_uid == 0)
    return std::ifstream(path);
  setfsgid(info.st_gid);
  setfsuid(info.st_uid);
  std::ifstream in(path);
  setfsuid(0);
  setfsgid(0);
  return in;
}

// The "Key:   1234 kB" lines of a /proc file, in bytes, from one reading of it.
std::map<std::string, std::int64_t> proc_fields(int pid, const char* file) {
  std::map<std::string, std::int64_t> fields;
  std::ifstream in = open_as_owner(pid, file);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos && line.find(" kB", colon) != std::string::npos)
      fields[line.substr(0, colon)] = std::strtoll(line.c_str() + colon + 1, nullptr, 10) * 1024;
  }
  return fields;
}

std::int64_t field(const std::map<std::string, std::int64_t>& fields, int pid, const char* file, const char* key) {
  const auto found = fields.find(key);
  if (found == fields.end())
    throw CallFailed(std::string("cannot read ") + key + " in /proc/" + std::to_string(pid) + "/" + file);
  return found->second;
}

struct Measure {
  int pid = -1;
  std::int64_t resident_before = 0;
};

Measure& measure() {
  static Measure m;
  return m;
}

}  // namespace

int worker_process() {
  int pid = launched_worker();
  if (pid <= 0) return -1;
  for (int depth = 0; depth < 8; ++depth) {
    const std::vector<int> below = children_of(pid);
    if (below.empty()) return pid;
    if (below.size() > 1) return -1;  // not the one-process worker this expects
    pid = below.front();
  }
  return -1;
}

void begin_worker_memory() {
  const int pid = worker_process();
  if (pid <= 0) throw CallFailed("no single worker process to measure");
  // "1" clears the accessed bits of all the process's pages, "5" resets its peak resident set to
  // the present one (proc(5), /proc/pid/clear_refs).
  for (const char* what : {"1", "5"}) {
    std::ofstream clear("/proc/" + std::to_string(pid) + "/clear_refs");
    clear << what;
    clear.close();
    if (!clear) throw CallFailed("cannot reset the worker's memory counters (/proc/" + std::to_string(pid) + "/clear_refs)");
  }
  measure() = Measure{pid, field(proc_fields(pid, "smaps_rollup"), pid, "smaps_rollup", "Rss")};
}

WorkerMemory end_worker_memory() {
  const Measure m = measure();
  measure() = Measure{};
  if (m.pid <= 0 || worker_process() != m.pid)
    throw CallFailed("the worker measured is gone: its memory cannot be read");
  // smaps_rollup first: pages the worker gives up after this reading still count in it, and pages
  // given up before it lower the resident set read with it.
  const auto rollup = proc_fields(m.pid, "smaps_rollup");
  const std::int64_t referenced = field(rollup, m.pid, "smaps_rollup", "Referenced");
  const std::int64_t resident_after = field(rollup, m.pid, "smaps_rollup", "Rss");
  const std::int64_t peak = field(proc_fields(m.pid, "status"), m.pid, "status", "VmHWM");
  WorkerMemory memory;
  memory.peak_growth = std::max<std::int64_t>(0, peak - m.resident_before);
  memory.referenced = referenced;
  memory.released = std::max<std::int64_t>(0, m.resident_before - resident_after);
  return memory;
}

}  // namespace scalebook::remote
