// The proxy side of scalebook/remote.hpp: starts the worker (the command in SCALEBOOK_WORKER,
// words separated by the unit separator \x1f), sends one request per call and waits for the reply
// at most SCALEBOOK_CALL_TIMEOUT seconds (default 5). A worker that fails is killed and started
// again for the next call. With SCALEBOOK_WORKER_BOX=1 the command starts a box that starts each
// worker (tools/grade_box.cpp): one box serves all the checks of this process, each check with a
// fresh worker; otherwise the command is the worker, killed with its whole process group.
//
// Time limits never count a busy machine (see "Charged time" below): a call's and a check's limits
// count wall-clock time less the time this process and the worker waited for a CPU, and a check's
// and a submission's also less the CPU the worker spent in calls (each call has a CPU limit of its
// own, SCALEBOOK_CALL_CPU): slow honest code may take long, but only waiting on nothing is charged.
//
// A failed call fails the check that made it, whatever the check does with the exception (it is
// reported to doctest here, then thrown). A function that timed out is not called again in the
// same check: the check has failed already, and each further call would only wait out the limit
// again (a check may call it a dozen times).
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "scalebook/remote.hpp"

namespace scalebook::testing {
std::string& transport_status();  // lib/testing/doctest_main.cpp
}

namespace scalebook::remote {
namespace {

// A reply larger than this is garbage: the largest any check needs is a few megabytes (chapter 7's
// naive attention), and the trusted process must not hold what a submission chooses to send.
constexpr std::uint64_t kMaxReply = 64ull << 20;

struct Worker {
  pid_t pid = -1;  // the process started for it (its box's, when a box serves many workers)
  int to_worker = -1;
  int from_worker = -1;
};

Worker& worker() {
  static Worker w;
  return w;
}

// A box that starts a fresh worker for each check (SCALEBOOK_WORKER_BOX=1: the command starts the
// box, whose first process, tools/grade_box.cpp, takes "S" with the worker's two pipes, "K" to kill
// it, and answers "D" with the worker's wait status when it ends), or none (-1): the command is
// then the worker itself, started afresh each time.
struct Box {
  pid_t pid = -1;
  int control = -1;
};

void close_box();

Box& box() {
  // When the checks process ends, so does its box: it is told, and waited for (its CPU time then
  // counts among this process's children's, as a box per check did).
  static Box b;
  static struct Closer {
    ~Closer() { close_box(); }
  } closer;
  return b;
}

bool boxed() {
  const char* value = std::getenv("SCALEBOOK_WORKER_BOX");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void kill_box() {
  Box& b = box();
  if (b.pid > 0) {
    kill(-b.pid, SIGKILL);
    kill(b.pid, SIGKILL);
    waitpid(b.pid, nullptr, 0);
  }
  if (b.control >= 0) close(b.control);
  b = Box{};
}

void close_box() {
  Box& b = box();
  if (b.control >= 0) close(b.control);
  b.control = -1;
  for (int waited = 0; b.pid > 0 && waited < 200; ++waited) {
    if (waitpid(b.pid, nullptr, WNOHANG) == b.pid) {
      b.pid = -1;
      return;
    }
    usleep(10000);
  }
  kill_box();
}

// The worker's wait status from its box, waiting at most SECONDS; false if none came (or the box
// is gone).
bool box_status(double seconds, int& status) {
  Box& b = box();
  pollfd p{b.control, POLLIN, 0};
  if (b.control < 0 || poll(&p, 1, static_cast<int>(seconds * 1000)) <= 0) return false;
  char message[1 + sizeof status];
  if (recv(b.control, message, sizeof message, 0) != static_cast<ssize_t>(sizeof message) || message[0] != 'D')
    return false;
  std::memcpy(&status, message + 1, sizeof status);
  return true;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGXCPU: return "SIGXCPU (CPU time limit)";
    case SIGXFSZ: return "SIGXFSZ (file size limit)";
    default: return "signal " + std::to_string(sig);
  }
}

// Reaps the worker, killing its process group if it is still there after GRACE seconds (a worker
// that closed its pipe is usually dying already); returns how it ended, for the message.
std::string how_it_ended(int status) {
  // A sandbox (bwrap) reports its command's death by signal N as exit status 128 + N.
  if (WIFSIGNALED(status)) return "it died of " + signal_name(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128) return "it died of " + signal_name(WEXITSTATUS(status) - 128);
  if (WIFEXITED(status)) return "it exited with status " + std::to_string(WEXITSTATUS(status));
  return "it stopped";
}

void forget_worker_clock();
double worker_used();

std::string stop_worker(double grace = 0.0) {
  Worker& w = worker();
  if (w.pid > 0) {
    worker_used();  // its last reading, while it is still there
    forget_worker_clock();
  }
  std::string how = "it stopped";
  if (w.pid > 0 && w.pid == box().pid) {
    // The worker ends, the box stays for the next one; a box that does not answer is killed.
    int status = 0;
    if (box_status(grace, status)) {
      how = how_it_ended(status);
    } else {
      const char kill_it = 'K';
      if (send(box().control, &kill_it, 1, MSG_NOSIGNAL) == 1 && box_status(2.0, status)) how = how_it_ended(status);
      else kill_box();
    }
  } else if (w.pid > 0) {
    int status = 0;
    pid_t done = waitpid(w.pid, &status, WNOHANG);
    for (int waited = 0; done == 0 && waited < grace * 100; ++waited) {
      usleep(10000);
      done = waitpid(w.pid, &status, WNOHANG);
    }
    if (done == 0) {
      kill(-w.pid, SIGKILL);
      kill(w.pid, SIGKILL);
      waitpid(w.pid, &status, 0);
      how = "it was stopped";
    }
    const std::string ended = how_it_ended(status);
    if (ended != "it stopped") how = ended;
  }
  if (w.to_worker >= 0) close(w.to_worker);
  if (w.from_worker >= 0) close(w.from_worker);
  w = Worker{};
  return how;
}

// Starts COMMAND (words separated by the unit separator) with FD3 and FD4 as its fds 3 and 4 (-1:
// none), its stdin, stdout and stderr /dev/null (printing cannot reach the checks' output), in a
// process group of its own.
pid_t launch(const char* command, int fd3, int fd4) {
  std::vector<std::string> words;
  std::string word;
  for (const char* c = command; *c != '\0'; ++c) {
    if (*c == '\x1f') {
      words.push_back(word);
      word.clear();
    } else {
      word += *c;
    }
  }
  words.push_back(word);
  const pid_t pid = fork();
  if (pid < 0) throw CallFailed("cannot start the worker (fork failed)");
  if (pid == 0) {
    setpgid(0, 0);
    // When a pipe end already is fd 3 (a process started with only 0, 1 and 2 open), dup2 onto
    // itself does nothing and leaves O_CLOEXEC set: exec would close it. Clear the flag.
    dup2(fd3, 3);
    fcntl(3, F_SETFD, 0);
    if (fd4 >= 0) {
      dup2(fd4, 4);
      fcntl(4, F_SETFD, 0);
    }
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

// Hands the worker's pipe ends to the box, which starts a fresh worker with them; false if the box
// is gone or refuses.
bool start_in_box(int requests, int replies) {
  const char start = 'S';
  const int fds[2] = {requests, replies};
  char space[CMSG_SPACE(sizeof fds)] = {};
  iovec data{const_cast<char*>(&start), 1};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = space;
  message.msg_controllen = sizeof space;
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  return sendmsg(box().control, &message, MSG_NOSIGNAL) == 1;
}

void start_worker() {
  const char* command = std::getenv("SCALEBOOK_WORKER");
  if (command == nullptr || *command == '\0')
    throw CallFailed("SCALEBOOK_WORKER is not set: this checks binary calls a worker process");
  // The worker reads requests on fd 3 and writes replies on fd 4.
  int requests[2], replies[2];
  if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0)
    throw CallFailed("cannot make the pipes to the worker");
  pid_t pid = -1;
  if (boxed()) {
    // The box of an earlier check, or a new one (also when the old one is gone or refuses).
    for (int attempt = 0; attempt < 2 && pid < 0; ++attempt) {
      if (box().pid < 0) {
        int control[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control) != 0)
          throw CallFailed("cannot make the socket to the worker's box");
        box() = Box{launch(command, control[1], -1), control[0]};
        close(control[1]);
      }
      if (start_in_box(requests[0], replies[1])) pid = box().pid;
      else kill_box();
    }
    if (pid < 0) throw CallFailed("cannot start the worker: its box does not answer");
  } else {
    pid = launch(command, requests[0], replies[1]);
  }
  close(requests[0]);
  close(replies[1]);
  // This end only: the worker's end of the pipe stays blocking (its own file description).
  fcntl(requests[1], F_SETFL, fcntl(requests[1], F_GETFL) | O_NONBLOCK);
  worker() = Worker{pid, requests[1], replies[0]};
}

}  // namespace

// The process the client started for the worker (its launcher's, which execs the sandbox), for
// lib/remote/memory.cpp; -1 when none runs.
int launched_worker() { return worker().pid; }

namespace {

double seconds_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// --- Charged time ---------------------------------------------------------------------------
// A process's CPU time and the time it waited, runnable, for a CPU (/proc/PID/schedstat, in ns; the
// kernel's numbers, which the worker cannot write). ok false where the kernel does not keep them:
// then nothing is discounted and the limits are plain wall clock.
struct Sched {
  double cpu = 0, wait = 0;
  bool ok = false;
};

Sched sched_of(const std::string& pid) {
  Sched s;
  const int fd = open(("/proc/" + pid + "/schedstat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char text[128] = {};
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  unsigned long long cpu = 0, wait = 0;
  if (got > 0 && std::sscanf(text, "%llu %llu", &cpu, &wait) == 2) s = Sched{1e-9 * cpu, 1e-9 * wait, true};
  return s;
}

// The single child of PID (its /proc children file), or -1.
int only_child(int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[64] = {};
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  int child = -1, second = -1;
  const int n = got > 0 ? std::sscanf(text, "%d %d", &child, &second) : 0;
  return n == 1 ? child : -1;
}

// The worker's host pid: down the chain of single children from the process started for it (the
// box's launcher, bwrap, the box's first process) to a process named "worker"; -1 if none.
int worker_pid_now(pid_t started) {
  int pid = started;
  for (int depth = 0; pid > 0 && depth < 8; ++depth) {
    char comm[32] = {};
    const int fd = open(("/proc/" + std::to_string(pid) + "/comm").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      const ssize_t got = read(fd, comm, sizeof comm - 1);
      close(fd);
      if (got > 0 && std::strncmp(comm, "worker\n", 7) == 0) return pid;
    }
    pid = only_child(pid);
  }
  return -1;
}

// What the worker of the running check has used: CPU and CPU-wait of the workers it had before
// (their last reading) and of the one now running.
struct CheckClock {
  double started = 0;      // wall clock at the check's start
  Sched self_start;        // this process at the check's start
  double workers_done = 0; // cpu + wait of this check's earlier workers
  int worker = -1;         // the current worker's host pid, once found
  Sched worker_last;       // its last reading
};

CheckClock& check_clock() {
  static CheckClock c;
  return c;
}

// The current worker's cpu + wait so far (found lazily, once per worker: most checks never need it).
double worker_used() {
  CheckClock& c = check_clock();
  if (c.worker < 0 && worker().pid > 0) c.worker = worker_pid_now(worker().pid);
  if (c.worker > 0) {
    const Sched now = sched_of(std::to_string(c.worker));
    if (now.ok) c.worker_last = now;
  }
  return c.worker_last.cpu + c.worker_last.wait;
}

double self_wait_since(const Sched& start) {
  const Sched now = sched_of("self");
  return now.ok && start.ok ? now.wait - start.wait : 0.0;
}

// The running check's charged seconds: its wall clock less this process's CPU-wait and its
// workers' CPU and CPU-wait.
double check_charged() {
  CheckClock& c = check_clock();
  return seconds_now() - c.started - self_wait_since(c.self_start) - c.workers_done - worker_used();
}

// One call's clock: its wall clock less the CPU-wait of this process and of the worker during it.
struct CallClock {
  double started = seconds_now();
  Sched self_start = sched_of("self");
  double worker_wait_start = check_clock().worker > 0 ? (worker_used(), check_clock().worker_last.wait) : -1.0;

  double charged() {
    const double used = (worker_used(), check_clock().worker_last.wait);
    // A worker found only now: its CPU-wait since it started (it waited, if at all, in this call
    // or in an earlier call of this check, both waits for a CPU).
    const double worker_wait = used - (worker_wait_start >= 0 ? worker_wait_start : 0.0);
    return seconds_now() - started - self_wait_since(self_start) - worker_wait;
  }
};

// The limits a call runs under: its own (charged call seconds), the check's and what is left of the
// submission's budget (charged seconds; 0: none). next() is the wall-clock time to look again, or 0
// when a limit has been reached (reached names it).
double check_wall();
double submission_left();
double charged_before_this_check();

struct Limits {
  CallClock call;
  double call_limit;
  const char* reached = nullptr;  // "call_wall", "check_wall" or "submission_budget"

  explicit Limits(double limit) : call_limit(limit) {}

  double next() {
    // Cheap first: the wall clock is an upper bound of every charged time.
    const double now = seconds_now();
    double left = call_limit - (now - call.started);
    const double check = check_wall(), budget = submission_left();
    const double in_check = now - check_clock().started;
    if (check > 0) left = std::min(left, check - in_check);
    if (budget > 0) left = std::min(left, budget - charged_before_this_check() - in_check);
    if (left > 0) return now + left;
    // A limit's wall clock has passed: what it charges decides.
    const double call_charged = call.charged(), checked = check_charged();
    double room = call_limit - call_charged;
    reached = "call_wall";
    if (check > 0 && check - checked < room) {
      room = check - checked;
      reached = "check_wall";
    }
    if (budget > 0 && budget - charged_before_this_check() - checked < room) {
      room = budget - charged_before_this_check() - checked;
      reached = "submission_budget";
    }
    if (room <= 0) return 0;
    reached = nullptr;
    return now + std::max(room, 0.01);
  }
};

// Waits for FD to be ready (POLLIN or POLLOUT) within LIMITS; false when a limit was reached.
bool wait_ready(int fd, short events, Limits& limits) {
  double deadline = limits.next();
  while (deadline > 0) {
    const double left = deadline - seconds_now();
    if (left <= 0) {
      deadline = limits.next();
      continue;
    }
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready > 0) return true;
  }
  return false;
}

// Reads exactly size bytes within LIMITS; false on EOF, error or a limit (timed_out set).
bool read_within(int fd, char* out, std::size_t size, Limits& limits, bool& timed_out) {
  while (size > 0) {
    if (!wait_ready(fd, POLLIN, limits)) {
      timed_out = true;
      return false;
    }
    const ssize_t got = read(fd, out, size);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return false;
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

// Writes all of DATA within LIMITS (a worker that does not read its request cannot hold this
// process: the pipe is non-blocking); false on error or a limit (timed_out set).
bool write_within(int fd, const char* data, std::size_t size, Limits& limits, bool& timed_out) {
  while (size > 0) {
    const ssize_t put = write(fd, data, size);
    if (put > 0) {
      data += put;
      size -= static_cast<std::size_t>(put);
      continue;
    }
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && errno != EAGAIN) return false;
    if (!wait_ready(fd, POLLOUT, limits)) {
      timed_out = true;
      return false;
    }
  }
  return true;
}

// How long all the calls of one check may take (SCALEBOOK_CHECK_WALL charged seconds; 0: no limit
// of their own). Many checks may run in one process (a chapter's batch), so the check's limit is
// kept here, call by call.
double check_wall() {
  const char* text = std::getenv("SCALEBOOK_CHECK_WALL");
  const double value = text != nullptr ? std::atof(text) : 0.0;
  return value > 0 ? value : 0.0;
}

// What is left of the submission's budget for this process's checks (SCALEBOOK_SUBMISSION_LEFT
// charged seconds; 0: no budget of its own), and what its earlier checks were charged.
double submission_left() {
  static const double left = [] {
    const char* text = std::getenv("SCALEBOOK_SUBMISSION_LEFT");
    const double value = text != nullptr ? std::atof(text) : 0.0;
    return value > 0 ? value : 0.0;
  }();
  return left;
}

double& charged_total() {
  static double total = 0;
  return total;
}

double charged_before_this_check() { return charged_total(); }

// The charged seconds of this process's finished checks, for the step that started it
// (SCALEBOOK_CHARGED_FILE: one number, rewritten after each check).
void report_charged() {
  const char* path = std::getenv("SCALEBOOK_CHARGED_FILE");
  if (path == nullptr || *path == '\0') return;
  if (std::FILE* out = std::fopen(path, "w")) {
    std::fprintf(out, "%.3f\n", charged_total());
    std::fclose(out);
  }
}

void start_check_clock() {
  check_clock() = CheckClock{};
  check_clock().started = seconds_now();
  check_clock().self_start = sched_of("self");
}

void end_check_clock() {
  if (check_clock().started <= 0) return;
  charged_total() += std::max(0.0, check_charged());
  check_clock().started = 0;
  report_charged();
}

// A worker that ends: its last reading stays the check's.
void forget_worker_clock() {
  CheckClock& c = check_clock();
  c.workers_done += c.worker_last.cpu + c.worker_last.wait;
  c.worker = -1;
  c.worker_last = Sched{};
}

// The functions that timed out in the check now running (see the top of the file).
std::set<std::string>& timed_out_in_this_check() {
  static std::set<std::string> functions;
  return functions;
}

struct ForgetTimeouts : doctest::IReporter {
  explicit ForgetTimeouts(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {
    timed_out_in_this_check().clear();
    // Every check starts with a fresh worker, as when it runs alone: nothing a worker kept from an
    // earlier check (its state, the CPU time it spent) carries over into this one.
    if (worker().pid > 0) stop_worker();
    start_check_clock();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override { end_check_clock(); }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

// The failed call's transport status for the results file (scalebook::testing::transport_status,
// lib/testing/doctest_main.cpp): how the worker failed, known here and never read from a message.
// The first failure of a check is the one reported.
void note_transport(const std::string& code) {
  std::string& status = scalebook::testing::transport_status();
  if (status.empty()) status = code;
}

// "worker_crashed:SIGSEGV" for a worker that died of a signal, "worker_timed_out:call_cpu" for its
// CPU limit, "worker_failed" otherwise (an exit, a closed pipe, garbage).
std::string transport_code(const std::string& how) {
  const std::string died = "it died of ";
  if (how.rfind(died, 0) != 0) return "worker_failed";
  const std::string signal = how.substr(died.size());
  if (signal.rfind("SIGXCPU", 0) == 0) return "worker_timed_out:call_cpu";
  return "worker_crashed:" + signal.substr(0, signal.find(' '));
}

[[noreturn]] void fail_call(const std::string& message, const std::string& code) {
  note_transport(code);
  FAIL_CHECK(message);
  throw CallFailed(message);
}

// One call's CPU seconds (SCALEBOOK_CALL_CPU; 0: no limit of its own), sent with each request: the
// worker lowers its CPU limit to what it has used plus this before it calls the function. (Raising
// it again gains the worker nothing beyond the call's wall-clock limit and the box's CPU limit.)
double call_cpu() {
  const char* text = std::getenv("SCALEBOOK_CALL_CPU");
  const double value = text != nullptr ? std::atof(text) : 0.0;
  return value > 0 ? value : 0.0;
}

double call_timeout() {
  const char* text = std::getenv("SCALEBOOK_CALL_TIMEOUT");
  const double value = text != nullptr ? std::atof(text) : 0.0;
  return value > 0 ? value : 5.0;
}

}  // namespace

DOCTEST_REGISTER_LISTENER("scalebook_remote_timeouts", 2, ForgetTimeouts);

std::vector<char> exchange(const char* exercise, const char* function, std::vector<char> request) {
  static const bool ignore_sigpipe = [] {
    signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)ignore_sigpipe;
  const std::string what = std::string(function) + " (exercise " + exercise + ") ";
  const double limit = call_timeout();
  const std::string too_long = "did not return within " + std::to_string(static_cast<int>(limit)) + " s";
  if (timed_out_in_this_check().count(function) != 0)
    fail_call(what + too_long + " earlier in this check; not called again", "worker_timed_out:call_wall");
  if (worker().pid < 0) start_worker();
  if (check_clock().started <= 0) start_check_clock();  // a call outside any check: its own clock
  Writer header;
  Codec<std::string>::put(header, exercise);
  Codec<std::string>::put(header, function);
  Codec<double>::put(header, call_cpu());
  std::vector<char> frame = std::move(header.buffer());
  frame.insert(frame.end(), request.begin(), request.end());
  const std::uint64_t size = frame.size();
  Limits limits(limit);
  bool timed_out = false;
  // A limit reached: the call (and, for the check's limit or the budget, the check) has taken too
  // long; the message names which.
  auto too_slow = [&](const std::string& doing) {
    stop_worker();
    timed_out_in_this_check().insert(function);
    const std::string reached = limits.reached != nullptr ? limits.reached : "call_wall";
    if (reached == "check_wall")
      fail_call(what + doing + " when the check's time (" + std::to_string(static_cast<int>(check_wall())) +
                    " s for all its calls, a busy machine's waits and the calls' CPU not counted) ran out",
                "worker_timed_out:check_wall");
    if (reached == "submission_budget")
      fail_call(what + doing + " when the submission's budget ran out", "worker_timed_out:submission_budget");
    fail_call(what + too_long + ": an endless loop?", "worker_timed_out:call_wall");
  };
  if (!write_within(worker().to_worker, reinterpret_cast<const char*>(&size), sizeof size, limits, timed_out) ||
      !write_within(worker().to_worker, frame.data(), frame.size(), limits, timed_out)) {
    if (timed_out) too_slow("was not reading its request");
    const std::string how = stop_worker(2.0);
    fail_call(what + "could not be called: the student process is gone (" + how + ")", transport_code(how));
  }
  std::uint64_t reply_size = 0;
  if (!read_within(worker().from_worker, reinterpret_cast<char*>(&reply_size), sizeof reply_size, limits,
                   timed_out)) {
    if (timed_out) too_slow("was still running");
    const std::string how = stop_worker(2.0);
    fail_call(what + "gave no result: the student process ended (" + how + ")", transport_code(how));
  }
  if (reply_size == 0 || reply_size > kMaxReply) {
    stop_worker();
    fail_call(what + "sent garbage instead of a result (" + std::to_string(reply_size) + " bytes)", "worker_failed");
  }
  std::vector<char> reply(reply_size);
  if (!read_within(worker().from_worker, reply.data(), reply.size(), limits, timed_out)) {
    if (timed_out) too_slow("had not finished its reply");
    const std::string how = stop_worker(2.0);
    fail_call(what + "sent half a reply (" + how + ")", transport_code(how));
  }
  return reply;
}

void bad_reply(const char* exercise, const char* function, const char* why) {
  fail_call(std::string(function) + " (exercise " + exercise + ") sent a reply that makes no sense: " + why,
            "worker_failed");
}

namespace {
// A student's message on one line: a line break (or a carriage return, which moves a terminal's
// cursor back) in it is shown as \n (\r), so that it cannot print lines of its own in the checks'
// output, which ctest --output-on-failure shows (a forged "100% tests passed", say).
std::string one_line(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}
}  // namespace

void rethrow(Reader& in, const char* exercise, const char* function) {
  const std::string type = one_line(Codec<std::string>::get(in));
  const std::string message = one_line(Codec<std::string>::get(in));
  if (type == "scalebook::ShapeError") throw ShapeError(message);
  if (type == "scalebook::ValueError") throw ValueError(message);
  if (type == "scalebook::NotImplemented") throw NotImplemented(exercise, function);
  if (type == "scalebook::Error") throw Error(message);
  if (type == "std::invalid_argument") throw std::invalid_argument(message);
  if (type == "std::out_of_range") throw std::out_of_range(message);
  if (type == "std::domain_error") throw std::domain_error(message);
  if (type == "std::length_error") throw std::length_error(message);
  if (type == "std::logic_error") throw std::logic_error(message);
  if (type == "std::runtime_error") throw std::runtime_error(message);
  if (type == "std::range_error") throw std::range_error(message);
  if (type == "std::overflow_error") throw std::overflow_error(message);
  throw OtherException(type, message);
}

}  // namespace scalebook::remote
