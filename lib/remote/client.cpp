// The proxy side of scalebook/remote.hpp: starts the worker (the command in SCALEBOOK_WORKER,
// words separated by the unit separator \x1f), sends one request per call and waits for the reply
// at most SCALEBOOK_CALL_TIMEOUT seconds (default 5). A worker that fails is killed and started
// again for the next call. With SCALEBOOK_WORKER_BOX=1 the command starts a box that starts each
// worker (tools/grade_box.cpp): one box serves all the checks of this process, each check with a
// fresh worker; otherwise the command is the worker, killed with its whole process group.
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

#include <cerrno>
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

std::string stop_worker(double grace = 0.0) {
  Worker& w = worker();
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

// Reads exactly size bytes before the deadline; false on EOF, error or time-out (timed_out set).
bool read_before(int fd, char* out, std::size_t size, double deadline, bool& timed_out) {
  while (size > 0) {
    const double left = deadline - seconds_now();
    if (left <= 0) {
      timed_out = true;
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = read(fd, out, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

// When the check now running started, and how long all its calls together may take
// (SCALEBOOK_CHECK_WALL seconds; 0: no limit of their own). Many checks may run in one process
// (a chapter's batch), so the check's wall-clock limit is kept here, call by call.
double& check_started() {
  static double started = seconds_now();
  return started;
}

double check_wall() {
  const char* text = std::getenv("SCALEBOOK_CHECK_WALL");
  const double value = text != nullptr ? std::atof(text) : 0.0;
  return value > 0 ? value : 0.0;
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
    check_started() = seconds_now();
    // Every check starts with a fresh worker, as when it runs alone: nothing a worker kept from an
    // earlier check (its state, the CPU time it spent) carries over into this one.
    if (worker().pid > 0) stop_worker();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
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
  Writer header;
  Codec<std::string>::put(header, exercise);
  Codec<std::string>::put(header, function);
  Codec<double>::put(header, call_cpu());
  std::vector<char> frame = std::move(header.buffer());
  frame.insert(frame.end(), request.begin(), request.end());
  const std::uint64_t size = frame.size();
  if (!write_fully(worker().to_worker, reinterpret_cast<const char*>(&size), sizeof size) ||
      !write_fully(worker().to_worker, frame.data(), frame.size())) {
    const std::string how = stop_worker(2.0);
    fail_call(what + "could not be called: the student process is gone (" + how + ")", transport_code(how));
  }
  double deadline = seconds_now() + limit;
  bool check_limit = false;  // the check's limit comes before the call's
  if (check_wall() > 0 && check_started() + check_wall() < deadline) {
    deadline = check_started() + check_wall();
    check_limit = true;
  }
  bool timed_out = false;
  std::uint64_t reply_size = 0;
  if (!read_before(worker().from_worker, reinterpret_cast<char*>(&reply_size), sizeof reply_size, deadline,
                  timed_out)) {
    if (timed_out) {
      stop_worker();
      timed_out_in_this_check().insert(function);
      if (check_limit)
        fail_call(what + "was still running when the check's time (" + std::to_string(static_cast<int>(check_wall())) +
                      " s for all its calls) ran out", "worker_timed_out:check_wall");
      fail_call(what + too_long + ": an endless loop?", "worker_timed_out:call_wall");
    }
    const std::string how = stop_worker(2.0);
    fail_call(what + "gave no result: the student process ended (" + how + ")", transport_code(how));
  }
  if (reply_size == 0 || reply_size > kMaxReply) {
    stop_worker();
    fail_call(what + "sent garbage instead of a result (" + std::to_string(reply_size) + " bytes)", "worker_failed");
  }
  std::vector<char> reply(reply_size);
  if (!read_before(worker().from_worker, reply.data(), reply.size(), deadline, timed_out)) {
    const std::string how = stop_worker(timed_out ? 0.0 : 2.0);
    fail_call(what + (timed_out ? "did not finish its reply in time" : "sent half a reply (" + how + ")"),
              timed_out ? (check_limit ? "worker_timed_out:check_wall" : "worker_timed_out:call_wall")
                        : transport_code(how));
  }
  return reply;
}

void bad_reply(const char* exercise, const char* function, const char* why) {
  fail_call(std::string(function) + " (exercise " + exercise + ") sent a reply that makes no sense: " + why,
            "worker_failed");
}

void rethrow(Reader& in, const char* exercise, const char* function) {
  const std::string type = Codec<std::string>::get(in);
  const std::string message = Codec<std::string>::get(in);
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
