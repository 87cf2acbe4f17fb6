// The step CTest runs for every (submission, check) pair of a grading tree (grading/tree.py writes
// the tree, grading/kit.py compiles this file into its kit; grading/step.py does the compile steps):
//
//   grade_check start SUBMISSION
//       resets the submission's budgets for this ctest run (a fixture every test requires)
//   grade_check check SUBMISSION CHAPTER KEY NAME EXERCISE CHECKS_BINARY
//       runs the check NAME of the trusted checks process CHECKS_BINARY against the chapter's
//       worker (SUBMISSION/build/CHAPTER/worker.sh), in a box of its own; exit status 0 iff passed
//   grade_check safe
//       the text rule alone (safe() below), for its test: records "LIMIT ONE_LINE LENGTH\n" and
//       LENGTH bytes on standard input, each answered with "LENGTH\n" and the safe text
//
// Limits come from the kit's settings.env (this binary is KIT/bin/grade_check). The verdict is written to
// SUBMISSION/results/KEY.tsv ("STATUS<TAB>MESSAGE") and printed, its first line the status and
// message, made safe for a terminal by safe() below (control characters, invalid UTF-8, format
// characters such as bidirectional overrides shown as \xNN, \uNNNN or \UNNNNNNNN). The status
// comes from the trusted process's results file
// (its status field, never its message) or from this step (a compile error, a budget, the check's
// wall-clock limit). Written in C++ because it runs once per check: a Python step cost four
// times the check itself.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// At most LIMIT bytes of the regular file PATH ("" if it is anything else): never follows a
// symlink, never waits on a FIFO or a device, never holds more than it keeps.
std::string read_file(const std::string& path, std::size_t limit = 1 << 20) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info{};
  std::string text;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    text.resize(std::min(limit, static_cast<std::size_t>(64) << 10));
    std::size_t have = 0;
    while (have < limit) {
      if (have == text.size()) text.resize(std::min(limit, text.size() * 2));
      const ssize_t got = read(fd, text.data() + have, text.size() - have);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      have += static_cast<std::size_t>(got);
    }
    text.resize(have);
  }
  close(fd);
  return text;
}

bool write_file(const std::string& path, const std::string& text) {
  const std::string part = path + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return false;
  }
  return std::rename(part.c_str(), path.c_str()) == 0;
}

// The kit this step belongs to (it is KIT/bin/grade_check), whatever folder a submission is in.
std::string kit_dir() {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return ".";
  std::string path(self, static_cast<std::size_t>(length));
  for (int up = 0; up < 2; ++up) path = path.substr(0, path.rfind('/'));
  return path;
}

std::map<std::string, std::string> read_settings(const std::string& path) {
  std::map<std::string, std::string> settings;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find('=');
    if (at != std::string::npos) settings[line.substr(0, at)] = line.substr(at + 1);
  }
  return settings;
}

// Hostile bytes made safe to print and store: the one rule of scalebook/verdicts.py's safe_text,
// which says why, written again here for speed (tests/unit/test_safe_text.py gives both the same
// bytes and wants the same text). Decode UTF-8, an invalid byte as the text \xNN; on one line, runs
// of whitespace as one space, none at either end; the unsafe characters as \xNN, \uNNNN or
// \UNNNNNNNN; cut to LIMIT characters, the last three "...".
constexpr char32_t kUnsafe[][2] = {
    {0x00, 0x08}, {0x0B, 0x1F}, {0x7F, 0x9F}, {0xAD, 0xAD}, {0x600, 0x605}, {0x61C, 0x61C},
    {0x6DD, 0x6DD}, {0x70F, 0x70F}, {0x890, 0x891}, {0x8E2, 0x8E2}, {0x180E, 0x180E},
    {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F}, {0xD800, 0xDFFF},
    {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}, {0xFFFE, 0xFFFF}, {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F}};
constexpr char32_t kWhitespace[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x1C,   0x1D,   0x1E,
                                    0x1F,   0x20,   0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002,
                                    0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                    0x2028, 0x2029, 0x202F, 0x205F, 0x3000};

bool unsafe_char(char32_t c) {
  for (const auto& range : kUnsafe)
    if (c >= range[0] && c <= range[1]) return true;
  return false;
}

bool space_char(char32_t c) {
  for (char32_t w : kWhitespace)
    if (c == w) return true;
  return false;
}

void append_ascii(std::u32string& out, const char* text) {
  for (; *text; ++text) out += static_cast<char32_t>(static_cast<unsigned char>(*text));
}

// UTF-8 to code points as Python's decoder with errors="backslashreplace" reads them.
std::u32string decode(const std::string& text) {
  std::u32string out;
  char escape[8];
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int length = c < 0x80 ? 1 : c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    char32_t code = length == 1 ? c : length == 4 ? c & 0x07u : length == 3 ? c & 0x0fu : c & 0x1fu;
    bool valid = length > 0 && i + static_cast<std::size_t>(length) <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3fu);
    }
    if (valid && ((length == 3 && code < 0x800) || (length == 4 && (code < 0x10000 || code > 0x10ffff)) ||
                  (code >= 0xd800 && code <= 0xdfff)))
      valid = false;
    if (!valid) {
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      append_ascii(out, escape);
      ++i;
      continue;
    }
    out += code;
    i += static_cast<std::size_t>(length);
  }
  return out;
}

// The trusted process's output, each line after "| ": no line of it can pass for one of CTest's
// own (a "100% tests passed" printed by a check's message, say) in ctest --output-on-failure.
std::string quoted(const std::string& text) {
  std::string out = "| ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "| ";
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::string safe(const std::string& text, std::size_t limit, bool one_line) {
  const std::u32string chars = decode(text);
  std::u32string shown;
  char escape[16];
  bool pending_space = false;
  for (char32_t c : chars) {
    if (one_line && space_char(c)) {
      pending_space = !shown.empty();
      continue;
    }
    if (pending_space) shown += U' ';
    pending_space = false;
    if (unsafe_char(c)) {
      const unsigned code = static_cast<unsigned>(c);
      std::snprintf(escape, sizeof escape, code < 0x100 ? "\\x%02x" : code <= 0xffff ? "\\u%04x" : "\\U%08x", code);
      append_ascii(shown, escape);
    } else {
      shown += c;
    }
  }
  if (shown.size() > limit) {
    shown.resize(limit >= 3 ? limit - 3 : 0);
    shown += U"...";
  }
  std::string out;
  for (char32_t c : shown) append_utf8(out, c);
  return out;
}

// The text rule for its test (tests/unit/test_safe_text.py): many texts through one process.
int safe_records() {
  std::ostringstream input;
  input << std::cin.rdbuf();
  const std::string all = input.str();
  std::size_t at = 0;
  while (at < all.size()) {
    const std::size_t newline = all.find('\n', at);
    if (newline == std::string::npos) return 2;
    std::istringstream header(all.substr(at, newline - at));
    std::size_t limit = 0, length = 0;
    int one_line = 0;
    if (!(header >> limit >> one_line >> length) || newline + 1 + length > all.size()) return 2;
    const std::string text = safe(all.substr(newline + 1, length), limit, one_line == 1);
    std::printf("%zu\n", text.size());
    std::fwrite(text.data(), 1, text.size(), stdout);
    at = newline + 1 + length;
  }
  return 0;
}

// --- the submission's budget: seconds its checks spent in this ctest run ----------------------

double add_to_ledger(const std::string& ledger, const char* what, double seconds) {
  const int fd = open((ledger + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) flock(fd, LOCK_EX);
  std::map<std::string, double> spent;
  std::istringstream lines(read_file(ledger));
  for (std::string key; lines >> key;) lines >> spent[key];
  spent[what] += seconds;
  std::ostringstream text;
  for (const auto& [key, value] : spent) text << key << ' ' << value << '\n';
  write_file(ledger, text.str());
  if (fd >= 0) close(fd);
  return spent[what];
}

// --- the box's cgroups, as root (see grading/sandbox.py) ------------------------------

struct Cgroups {
  std::vector<std::string> groups;

  void make(const std::map<std::string, std::string>& settings) {
    if (geteuid() != 0 || settings.count("box_memory_mb") == 0) return;
    std::random_device random;
    char name[64];
    std::snprintf(name, sizeof name, "scalebook-%08x%08x", random(), random());
    const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> controllers = {
        {"memory", {{"memory.limit_in_bytes", std::to_string(std::stoll(settings.at("box_memory_mb")) << 20)}}},
        {"pids", {{"pids.max", settings.at("processes")}}},
        {"cpu", {{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "100000"}}}};
    for (const auto& [controller, values] : controllers) {
      const std::string group = "/sys/fs/cgroup/" + controller + "/" + name;
      if (mkdir(group.c_str(), 0755) != 0) {
        close_all();
        return;
      }
      groups.push_back(group);
      for (const auto& [key, value] : values) {
        std::ofstream out(group + "/" + key);
        out << value;
        out.flush();
        if (!out) {
          close_all();
          return;
        }
      }
    }
  }

  std::string joined() const {
    std::string text;
    for (const auto& group : groups) text += (text.empty() ? "" : " ") + group;
    return text;
  }

  void close_all() {
    for (const auto& group : groups) {
      for (int attempt = 0; attempt < 200; ++attempt) {
        std::istringstream pids(read_file(group + "/cgroup.procs"));
        for (long pid; pids >> pid;) kill(static_cast<pid_t>(pid), SIGKILL);
        if (rmdir(group.c_str()) == 0 || errno == ENOENT) break;
        usleep(10000);
      }
    }
    groups.clear();
  }
};

// What a signal handler may touch (async-signal-safe): the check's process and its cgroups' paths.
volatile pid_t the_child = -1;
char the_groups[3][160];
volatile int group_count = 0;

void stop(int signum) {
  if (the_child > 0) kill(the_child, SIGKILL);
  for (int attempt = 0; attempt < 50 && group_count > 0; ++attempt) {  // the box dies with the check
    int left = 0;
    for (int i = 0; i < group_count; ++i)
      if (the_groups[i][0] != '\0' && rmdir(the_groups[i]) != 0 && errno != ENOENT) ++left;
    if (left == 0) break;
    const timespec pause{0, 10000000};
    nanosleep(&pause, nullptr);
  }
  signal(signum, SIG_DFL);
  raise(signum);
}

struct Verdict {
  std::string status;   // passed, failed, crashed, timed_out, compile_error, not_run
  std::string message;  // safe already
};

int finish(const std::string& submission, const std::string& key, const std::string& code, const Verdict& verdict,
           const std::string& output) {
  mkdir((submission + "/results").c_str(), 0700);
  write_file(submission + "/results/" + key + ".tsv", code + "\t" + verdict.status + "\t" + verdict.message + "\n");
  // A message that names its status already ("timed_out: call wall") is printed as it is.
  if (verdict.message.rfind(verdict.status + ":", 0) == 0) std::printf("%s\n", verdict.message.c_str());
  else std::printf("%s%s%s\n", verdict.status.c_str(), verdict.message.empty() ? "" : ": ", verdict.message.c_str());
  if (!output.empty()) std::printf("--- the trusted checks process's output ---\n%s\n", output.c_str());
  std::fflush(stdout);
  return verdict.status == "passed" ? 0 : 1;
}

// The transport's status (interface: the trusted process writes it) as a report status.
Verdict from_transport(const std::string& code, const std::string& message) {
  const std::string text = safe(message, 500, true);
  auto with = [&](const std::string& prefix) { return text.empty() ? prefix : prefix + ": " + text; };
  if (code == "passed") return {"passed", ""};
  if (code == "crashed") return {"crashed", with("crashed: the trusted checks process")};
  if (code.rfind("worker_crashed:", 0) == 0) return {"crashed", with("crashed: " + safe(code.substr(15), 40, true))};
  if (code.rfind("worker_timed_out:", 0) == 0) {
    static const std::map<std::string, std::string> names = {{"call_cpu", "call CPU"}, {"call_wall", "call wall"},
                                                             {"check_wall", "check wall"},
                                                             {"submission_budget", "submission budget"}};
    const std::string limit = code.substr(17);
    const auto found = names.find(limit);
    return {"timed_out", with("timed_out: " + (found != names.end() ? found->second : safe(limit, 40, true)))};
  }
  if (code == "worker_failed") return {"failed", with("failed: the worker's reply")};
  return {"failed", text};
}

// One run of a trusted checks process: FILTER picks the checks ("" for all of the binary's), RUN is
// its own folder (results.tsv, output.log, charged), LIMIT the charged seconds it may spend (what
// is left of the submission's budget). The trusted process keeps every time limit itself, in
// charged time (lib/remote/client.cpp: wall clock less a busy machine's waits and the calls' CPU),
// and says what its checks were charged; this step stops it only if it outlasts ten times LIMIT
// and a minute in wall clock (a fault of the trusted side: it has no blocking wait of its own).
struct TrustedRun {
  bool stopped = false;   // stopped by this step
  int status = 0;         // waitpid's
  double seconds = 0;     // wall clock
  double charged = 0;     // what its checks were charged (or LIMIT, when it was stopped)
  std::string results;    // the results file's text
  std::string output;     // its output, made safe
};

TrustedRun run_trusted(const std::map<std::string, std::string>& settings, const std::string& build,
                       const std::string& run, const std::string& binary, const std::string& filter, double limit) {
  const double check_seconds = std::stod(settings.at("check_seconds"));
  const double wall = 10 * limit + 60;
  mkdir(run.c_str(), 0700);
  const std::string results = run + "/results.tsv", log = run + "/output.log", charged = run + "/charged";
  std::remove(results.c_str());
  std::remove(charged.c_str());
  Cgroups cgroups;
  cgroups.make(settings);
  for (const auto& group : cgroups.groups) {
    if (group_count < 3 && group.size() < sizeof the_groups[0]) {
      std::memcpy(the_groups[group_count], group.c_str(), group.size() + 1);
      group_count = group_count + 1;
    }
  }
  const std::string results_flag = "--scalebook-results=" + results;
  // worker.sh starts the chapter's worker box, which starts a fresh worker for each check.
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "SCALEBOOK_WORKER=" + build + "/worker.sh",
                                  "SCALEBOOK_WORKER_BOX=1",
                                  "SCALEBOOK_BOX_CGROUPS=" + cgroups.joined(),
                                  "SCALEBOOK_CALL_TIMEOUT=" + settings.at("call_seconds"),
                                  "SCALEBOOK_CALL_CPU=" + settings.at("call_cpu_seconds"),
                                  "SCALEBOOK_CHECK_WALL=" + settings.at("check_seconds"),
                                  "SCALEBOOK_SUBMISSION_LEFT=" + std::to_string(limit),
                                  "SCALEBOOK_CHARGED_FILE=" + charged};
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary_copy = binary, no_colors = "--no-colors", no_version = "--no-version";
  std::string filter_copy = filter, results_copy = results_flag;
  for (std::string* a : {&binary_copy, &no_colors, &no_version, &results_copy}) argv.push_back(a->data());
  if (!filter.empty()) argv.push_back(filter_copy.data());
  argv.push_back(nullptr);
  // The process's own CPU time (the workers' is theirs): the check's limit, or the whole run's
  // for a chapter's batch.
  const double cpu_seconds = std::max(check_seconds, limit);

  sigset_t child_signal, old;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signal, &old);
  const auto started = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // this step dies (ctest's timeout, a signal): so does the check
    // The trusted process's own bounds: replies are at most 64 MiB (lib/remote/client.cpp), so 2 GiB
    // of address space is far more than any check needs; its CPU time, its wall-clock limit.
    const rlimit memory{rlim_t{2} << 30, rlim_t{2} << 30};
    const rlimit cpu{static_cast<rlim_t>(cpu_seconds) + 2, static_cast<rlim_t>(cpu_seconds) + 3};
    setrlimit(RLIMIT_AS, &memory);
    setrlimit(RLIMIT_CPU, &cpu);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out, 1);
    dup2(out, 2);
    if (chdir(run.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  the_child = child;
  TrustedRun done;
  while (true) {
    const pid_t ended = waitpid(child, &done.status, WNOHANG);
    if (ended == child) break;
    const double left = wall - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (left <= 0) {
      kill(child, SIGKILL);
      waitpid(child, &done.status, 0);
      done.stopped = true;
      break;
    }
    timespec wait{static_cast<time_t>(left), static_cast<long>((left - static_cast<double>(static_cast<time_t>(left))) * 1e9)};
    sigtimedwait(&child_signal, nullptr, &wait);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  the_child = -1;
  group_count = 0;
  cgroups.close_all();
  done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  done.charged = done.stopped ? limit : std::min(done.seconds, std::max(0.0, std::atof(read_file(charged, 64).c_str())));
  std::string output = read_file(log, 1 << 20);
  if (output.size() > 20000) output = output.substr(output.size() - 20000);
  done.output = quoted(safe(output, 4000, false));
  done.results = read_file(results, 8 << 20);
  return done;
}

// The last line a trusted process wrote about NAME ("STATUS<TAB>NAME<TAB>MESSAGE"): its status
// ("" if none) and message (unescaped: a line break written as backslash-n, a backslash as two).
std::pair<std::string, std::string> result_of(const std::string& results, const std::string& name) {
  std::string code, message;
  std::istringstream lines(results);
  for (std::string line; std::getline(lines, line);) {
    if (lines.eof()) break;  // a line cut short by a dying process
    const auto first = line.find('\t');
    const auto second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos || line.compare(first + 1, second - first - 1, name) != 0) continue;
    code = line.substr(0, first);
    message.clear();
    for (std::size_t i = second + 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        message += line[i] == 'n' ? ' ' : line[i];
      } else {
        message += line[i];
      }
    }
  }
  return {code, message};
}

bool batching() {
  const char* batch = std::getenv("SCALEBOOK_BATCH");
  return batch != nullptr && std::strcmp(batch, "1") == 0;
}

// A chapter's checks in one trusted process (./workbook grade sets SCALEBOOK_BATCH=1): each check
// step then takes its verdict from this run, and runs alone only where the run has none (it died or
// was stopped inside that check). Run by hand (ctest -R ...), every check runs alone. Always
// exits 0: a fixture that fails would leave its checks unrun.
int batch(const std::string& submission, const std::string& chapter, const std::string& binary) {
  const std::string run = submission + "/runs/" + chapter + ".batch";
  std::remove((run + "/results.tsv").c_str());
  if (!batching()) {
    std::printf("the checks run one by one (./workbook grade runs a chapter's checks together)\n");
    return 0;
  }
  const std::string build = submission + "/build/" + chapter;
  if (access((build + "/worker").c_str(), F_OK) != 0) {
    std::printf("no worker: the checks say why one by one\n");
    return 0;
  }
  const auto settings = read_settings(kit_dir() + "/settings.env");
  const double budget = std::stod(settings.at("submission_seconds"));
  const double spent = add_to_ledger(submission + "/ledger", "checks", 0.0);
  if (spent >= budget) return 0;
  mkdir((submission + "/runs").c_str(), 0700);
  // A regrade that reuses some of the chapter's verdicts (grading/report.py) names the checks to run,
  // one a line, in SUBMISSION/runs/CHAPTER.only; the others are not run.
  std::string filter;
  std::istringstream only(read_file(submission + "/runs/" + chapter + ".only"));
  for (std::string name; std::getline(only, name);) {
    if (name.empty()) continue;
    filter += filter.empty() ? "--test-case=" : ",";
    for (char c : name) filter += c == ',' ? std::string("\\,") : std::string(1, c);
  }
  const TrustedRun done = run_trusted(settings, build, run, binary, filter, budget - spent);
  add_to_ledger(submission + "/ledger", "checks", done.charged);
  std::printf("the chapter's checks ran together in %.2f s (charged %.2f s)%s\n", done.seconds, done.charged,
              done.stopped ? " (stopped: it outlasted ten times the submission's budget)" : "");
  return 0;
}

int check(const std::string& submission, const std::string& chapter, const std::string& key,
          const std::string& name, const std::string& exercise, const std::string& binary) {
  const auto settings = read_settings(kit_dir() + "/settings.env");
  const std::string results_dir = submission + "/results";
  std::remove((results_dir + "/" + key + ".tsv").c_str());
  const std::string build = submission + "/build/" + chapter;
  // The exercise's compile verdict (grading/step.py): "compiled" or "STATUS<TAB>safe message".
  const std::string built = read_file(build + "/" + exercise + ".status");
  if (built.empty()) return finish(submission, key, "", {"not_run", "not run: the chapter was not built"}, "");
  if (built.rfind("compiled", 0) != 0) {
    const auto tab = built.find('\t');
    const std::string message = tab == std::string::npos ? "" : built.substr(tab + 1);
    return finish(submission, key, "", {built.substr(0, tab), safe(message, 1000, true)}, "");
  }
  if (batching()) {  // the verdict of the chapter's run, where it has one
    const auto [code, message] = result_of(read_file(submission + "/runs/" + chapter + ".batch/results.tsv", 8 << 20), name);
    if (!code.empty() && code != "start") {
      const Verdict verdict = from_transport(code, message);
      return finish(submission, key, code, verdict,
                    verdict.status == "passed" ? "" : "(graded with the chapter's other checks in one process; "
                                                      "ctest -R on this test alone runs it by itself)");
    }
  }
  const double check_seconds = std::stod(settings.at("check_seconds"));
  const double budget = std::stod(settings.at("submission_seconds"));
  const double spent = add_to_ledger(submission + "/ledger", "checks", 0.0);
  if (spent >= budget) {
    return finish(submission, key, "",
                  {"timed_out", "timed_out: submission budget (" + settings.at("submission_seconds") +
                                    " s for all of the submission's checks) was spent before this check"},
                  "");
  }
  // The trusted process stops a check at these limits itself and names them (worker_timed_out:);
  // this step stops it, should it not, far later (see run_trusted).
  const double limit = std::min(check_seconds, budget - spent);
  const std::string limit_name = limit < check_seconds ? "submission budget" : "check wall";
  mkdir((submission + "/runs").c_str(), 0700);
  const std::string filter = [&] {
    std::string f = "--test-case=";
    for (char c : name) f += c == ',' ? std::string("\\,") : std::string(1, c);
    return f;
  }();
  const TrustedRun done = run_trusted(settings, build, submission + "/runs/" + key, binary, filter, budget - spent);
  add_to_ledger(submission + "/ledger", "checks", done.charged);
  if (done.stopped) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", limit);
    return finish(submission, key, "", {"timed_out", "timed_out: " + limit_name + " (" + text + " s): the check was stopped"},
                  done.output);
  }
  const auto [code, message] = result_of(done.results, name);
  const int status = done.status;
  if (code.empty() || code == "start") {
    const std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                : "status " + std::to_string(WEXITSTATUS(status));
    return finish(submission, key, code, {"crashed", "crashed: the trusted checks process ended (" + how + ") inside the check"},
                  done.output);
  }
  Verdict verdict = from_transport(code, message);
  if (verdict.status == "passed" && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    verdict = {"failed", "the trusted checks process did not exit cleanly"};
  return finish(submission, key, code, verdict, verdict.status == "passed" ? "" : done.output);
}

}  // namespace

int main(int argc, char** argv) {
  for (int signum : {SIGINT, SIGTERM, SIGHUP}) signal(signum, stop);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // ctest, or whoever started this step, is gone: so is the step
  if (getppid() == 1) return 1;
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "start" && argc == 3) {
    const std::string submission = argv[2];
    write_file(submission + "/ledger", "checks 0\ncompile 0\n");
    std::printf("budgets reset for this run\n");
    return 0;
  }
  if (what == "check" && argc == 8) return check(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7]);
  if (what == "batch" && argc == 5) return batch(argv[2], argv[3], argv[4]);
  if (what == "safe" && argc == 2) return safe_records();
  std::fprintf(stderr, "usage: grade_check start SUBMISSION | batch SUBMISSION CHAPTER BINARY |\n"
                       "                   check SUBMISSION CHAPTER KEY NAME EXERCISE BINARY | safe\n");
  return 2;
}
