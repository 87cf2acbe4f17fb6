// The uid box: grading's second isolation (grading/sandbox.py, mode "uid"), for a root grader where
// bubblewrap cannot make its namespaces (a Docker container under Docker's default seccomp profile,
// as Gradescope, PrairieLearn and CI run graders). grading/kit.py compiles this file into the kit.
//
//   grade_uidbox OPTIONS_FILE COMMAND...
//
// runs COMMAND (an absolute path; "{box}" in any word is replaced by the box's folder) as an
// unprivileged uid of its own, taken from a range of slots (one flock each, held while the box
// lives; a uid the system's passwd names is never taken). OPTIONS_FILE holds NUL-separated words:
//
//   --base DIR          root-owned folder of the boxes: DIR/slots/UID.lock, DIR/box-UID-XXXXXX
//   --uids FIRST COUNT  the range of box uids (each box's gid is its uid)
//   --give PATH         readable by the box (group box, g+rX), taken back when the box ends
//   --own PATH          owned by the box (writable), taken back (root's, 0700) when the box ends
//   --read PATH         Landlock: the box may read and execute below PATH
//   --write PATH        Landlock: the box may write below PATH
//   --copy SRC NAME     SRC copied to {box}/NAME, readable and executable by the box only
//   --nproc N           RLIMIT_NPROC: with a uid of its own it counts this box's processes alone
//   --seccomp FILE      a BPF program (seccomp_filter.py) loaded last, after no_new_privs
//   --setenv NAME VALUE the box's environment (besides PATH, HOME, TMPDIR, LC_ALL)
//   --landlock          Landlock is required (the kit was made with it): refuse without it
//
// The box's own folder {box} (root's, group box, 0750) holds {box}/tmp (the box's, 0700): its
// working folder, HOME and TMPDIR. Every process of the box starts from one that has set its
// session, dropped every group and the root uid (so every capability), set umask 077, its
// parent-death signal, no_new_privs, Landlock where asked, and the seccomp filter.
//
// Three processes: this one (the command's stand-in, which the caller waits for and may kill),
// a guard (root, a session of its own, the box's parent and subreaper), and the box. When the box's
// first process ends, or this one is killed, the guard kills every process of the box's uid (as
// that uid: kill(-1, SIGKILL), until /proc shows none), removes what the uid left in the
// world-writable folders, takes the given and owned paths back, removes {box}, and frees the slot.
// This process exits with the box's status (128 + N for a signal), 125 when the box could not be made.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "uid box: %s%s%s\n", what.c_str(), errno ? ": " : "", errno ? std::strerror(errno) : "");
  _exit(125);
}

struct Options {
  std::string base;
  unsigned first = 0, count = 0;
  std::vector<std::string> give, own, read, write;
  std::vector<std::pair<std::string, std::string>> copy, env;
  long nproc = -1;
  std::string seccomp;
  bool landlock = false;
};

Options read_options(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot read the options file ") + path);
  std::vector<std::string> words;
  for (std::string word; std::getline(in, word, '\0');) words.push_back(word);
  Options o;
  auto next = [&](std::size_t& i) -> const std::string& {
    if (++i >= words.size()) {
      errno = 0;
      fail("option " + words[i - 1] + " needs a value");
    }
    return words[i];
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--base") o.base = next(i);
    else if (w == "--uids") {
      o.first = static_cast<unsigned>(std::stoul(next(i)));
      o.count = static_cast<unsigned>(std::stoul(next(i)));
    } else if (w == "--give") o.give.push_back(next(i));
    else if (w == "--own") o.own.push_back(next(i));
    else if (w == "--read") o.read.push_back(next(i));
    else if (w == "--write") o.write.push_back(next(i));
    else if (w == "--copy") {
      const std::string source = next(i);
      o.copy.emplace_back(source, next(i));
    } else if (w == "--setenv") {
      const std::string name = next(i);
      o.env.emplace_back(name, next(i));
    } else if (w == "--nproc") o.nproc = std::stol(next(i));
    else if (w == "--seccomp") o.seccomp = next(i);
    else if (w == "--landlock") o.landlock = true;
    else {
      errno = 0;
      fail("unknown option " + w);
    }
  }
  if (o.base.empty() || o.count == 0) {
    errno = 0;
    fail("--base and --uids are required");
  }
  return o;
}

// The uids /etc/passwd names: never a box's.
std::set<unsigned> named_uids() {
  std::set<unsigned> uids;
  std::ifstream passwd("/etc/passwd");
  for (std::string line; std::getline(passwd, line);) {
    std::istringstream fields(line);
    std::string name, password, uid;
    if (std::getline(fields, name, ':') && std::getline(fields, password, ':') && std::getline(fields, uid, ':'))
      uids.insert(static_cast<unsigned>(std::strtoul(uid.c_str(), nullptr, 10)));
  }
  return uids;
}

// --- the uid's processes, killed --------------------------------------------------------------
// Whether a live (not zombie) process has UID as its real, effective or saved uid.
bool uid_has_processes(unsigned uid) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  while (const dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + entry->d_name + "/status");
    bool zombie = false, mine = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("State:", 0) == 0) zombie = line.find('Z') != std::string::npos || line.find('X') != std::string::npos;
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream ids(line.substr(4));
        unsigned real = 0, effective = 0, saved = 0;
        ids >> real >> effective >> saved;
        mine = real == uid || effective == uid || saved == uid;
        break;
      }
    }
    if (mine && !zombie) {
      found = true;
      break;
    }
  }
  closedir(proc);
  return found;
}

void reap() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {}
}

// Every process of UID, killed from a process of that uid (kill(-1) reaches exactly the processes
// it may signal: its uid's), again until none is left (a fork racing the first kill).
void kill_uid(unsigned uid) {
  for (int round = 0; round < 500; ++round) {
    const pid_t killer = fork();
    if (killer == 0) {
      if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
      kill(-1, SIGKILL);
      _exit(0);
    }
    if (killer > 0) waitpid(killer, nullptr, 0);
    reap();
    if (!uid_has_processes(uid)) return;
    usleep(2000);
  }
}

// --- paths given to the box and taken back -----------------------------------------------------
unsigned walk_uid = 0;
bool walk_give = false;

int give_one(const char* path, const struct stat* info, int type, FTW*) {
  if (type == FTW_SL || type == FTW_SLN) return 0;
  const bool directory = type == FTW_D || type == FTW_DP || type == FTW_DNR;
  if (walk_give) {  // group box, readable (and searchable, or executable where it was)
    if (lchown(path, 0, walk_uid) != 0) return 1;
    const mode_t mode = directory ? 0750 : (info->st_mode & 0100 ? 0750 : 0640);
    return chmod(path, mode) == 0 ? 0 : 1;
  }
  if (lchown(path, walk_uid, walk_uid) != 0) return 1;  // owned
  return chmod(path, directory ? 0700 : ((info->st_mode & 0700) | 0600)) == 0 ? 0 : 1;
}

int take_back_one(const char* path, const struct stat* info, int type, FTW*) {
  if (lchown(path, 0, 0) != 0 && errno != ENOENT) return 0;
  if (type != FTW_SL && type != FTW_SLN) chmod(path, (info->st_mode & 0700) | (type == FTW_D || type == FTW_DP ? 0700 : 0));
  return 0;
}

int remove_one(const char* path, const struct stat*, int type, FTW*) {
  if (type == FTW_DP) rmdir(path);
  else unlink(path);
  return 0;
}

void remove_tree(const std::string& path) { nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS); }

// What UID left in the folders every uid may write (its files outlive it otherwise: a full disk).
void remove_left_behind(unsigned uid) {
  for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}) {
    DIR* folder = opendir(shared);
    if (folder == nullptr) continue;
    std::vector<std::string> found;
    while (const dirent* entry = readdir(folder)) {
      if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
      struct stat info{};
      const std::string path = std::string(shared) + "/" + entry->d_name;
      if (lstat(path.c_str(), &info) == 0 && info.st_uid == uid) found.push_back(path);
    }
    closedir(folder);
    for (const auto& path : found) remove_tree(path);
  }
}

// --- Landlock (raw system calls: the C library has no wrappers) ---------------------------------
constexpr std::uint64_t kExecute = 1, kWriteFile = 2, kReadFile = 4, kReadDir = 8, kTruncate = 1ull << 14,
                        kIoctlDev = 1ull << 15;
struct RulesetAttr {
  std::uint64_t fs, net, scoped;
};
struct PathBeneath {
  std::uint64_t allowed;
  std::int32_t parent_fd;
} __attribute__((packed));

int landlock_abi() {
  const long abi = syscall(444 /* landlock_create_ruleset */, nullptr, 0, 1 /* VERSION */);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

std::uint64_t handled_fs(int abi) {
  std::uint64_t all = (1ull << 13) - 1;  // ABI 1: execute ... make_sym
  if (abi >= 2) all |= 1ull << 13;       // refer
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

void allow(int ruleset, const std::string& path, std::uint64_t wanted, std::uint64_t handled) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // a path this system lacks (no /lib64): nothing to allow
  struct stat info{};
  fstat(fd, &info);
  std::uint64_t allowed = wanted & handled;
  if (!S_ISDIR(info.st_mode)) allowed &= kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
  PathBeneath rule{allowed, fd};
  if (allowed != 0 && syscall(445 /* landlock_add_rule */, ruleset, 1 /* PATH_BENEATH */, &rule, 0) != 0)
    fail("Landlock refused a rule for " + path);
  close(fd);
}

// The ruleset (made as root, before the uid is dropped; applied after no_new_privs): reads of the
// system's programs and libraries and of the --read paths, writes below --write paths only, no TCP,
// and (ABI 6) no signals or abstract sockets out of the box.
int make_ruleset(const Options& o, const std::string& box) {
  const int abi = landlock_abi();
  if (abi == 0) fail("Landlock is not available here, and the kit was made with it");
  const std::uint64_t handled = handled_fs(abi);
  RulesetAttr attr{handled, abi >= 4 ? 3ull : 0ull, abi >= 6 ? 3ull : 0ull};
  const std::size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  const long ruleset = syscall(444, &attr, size, 0);
  if (ruleset < 0) fail("cannot make a Landlock ruleset");
  const std::uint64_t read = kExecute | kReadFile | kReadDir;
  for (const char* system : {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache"})
    allow(static_cast<int>(ruleset), system, read, handled);
  for (const char* device : {"/dev/null", "/dev/zero", "/dev/full"})
    allow(static_cast<int>(ruleset), device, kReadFile | kWriteFile | kTruncate | kIoctlDev, handled);
  for (const char* device : {"/dev/urandom", "/dev/random"}) allow(static_cast<int>(ruleset), device, kReadFile, handled);
  allow(static_cast<int>(ruleset), box, read, handled);
  for (const auto& path : o.read) allow(static_cast<int>(ruleset), path, read, handled);
  for (const auto& path : o.write) allow(static_cast<int>(ruleset), path, handled, handled);
  for (const auto& path : o.own) allow(static_cast<int>(ruleset), path, handled, handled);
  allow(static_cast<int>(ruleset), box + "/tmp", handled, handled);
  return static_cast<int>(ruleset);
}

std::vector<char> read_program(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> program((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) fail("cannot read the seccomp program " + path);
  if (program.empty() || program.size() % sizeof(sock_filter) != 0) {
    errno = 0;
    fail("the seccomp program " + path + " is empty or cut short");
  }
  return program;
}

std::string replace_box(std::string word, const std::string& box) {
  for (std::size_t at; (at = word.find("{box}")) != std::string::npos;) word.replace(at, 5, box);
  return word;
}

// The box's first process: everything a box holds, then COMMAND. Never returns.
[[noreturn]] void become_box(const Options& o, unsigned uid, const std::string& box, char** command) {
  setsid();
  std::vector<char> program = o.seccomp.empty() ? std::vector<char>{} : read_program(o.seccomp);
  const int ruleset = o.landlock ? make_ruleset(o, box) : -1;
  std::vector<std::string> words;
  for (char** word = command; *word != nullptr; ++word) words.push_back(replace_box(*word, box));
  std::vector<std::string> environment = {"PATH=/usr/bin:/bin", "HOME=" + box + "/tmp", "TMPDIR=" + box + "/tmp",
                                          "LC_ALL=C"};
  for (const auto& [name, value] : o.env) environment.push_back(name + "=" + replace_box(value, box));
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
    fail("cannot become the box's uid");
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // after the uid changed, which clears it: the guard gone, so is the box
  if (getppid() == 1) _exit(125);
  umask(077);
  if (o.nproc > 0) {
    const rlimit limit{static_cast<rlim_t>(o.nproc), static_cast<rlim_t>(o.nproc)};
    if (setrlimit(RLIMIT_NPROC, &limit) != 0) fail("cannot set RLIMIT_NPROC");
  }
  if (chdir((box + "/tmp").c_str()) != 0) fail("cannot enter the box's folder");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("cannot set no_new_privs");
  if (ruleset >= 0 && syscall(446 /* landlock_restrict_self */, ruleset, 0) != 0) fail("cannot apply Landlock");
  if (ruleset >= 0) close(ruleset);
  std::vector<char*> argv, envp;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!program.empty()) {
    sock_fprog filter{static_cast<unsigned short>(program.size() / sizeof(sock_filter)),
                      reinterpret_cast<sock_filter*>(program.data())};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0) fail("cannot load the seccomp filter");
  }
  execve(argv[0], argv.data(), envp.data());
  fail(std::string("cannot run ") + argv[0]);
}

void copy_in(const std::string& source, const std::string& target, unsigned gid) {
  std::ifstream in(source, std::ios::binary);
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!in || !out || chown(target.c_str(), 0, gid) != 0 || chmod(target.c_str(), 0550) != 0)
    fail("cannot copy " + source + " into the box");
}

void walk(const std::vector<std::string>& paths, unsigned uid, bool give) {
  walk_uid = uid;
  walk_give = give;
  for (const auto& path : paths)
    if (nftw(path.c_str(), give_one, 16, FTW_PHYS) != 0) fail("cannot hand " + path + " to the box");
}

void take_back(const Options& o) {
  for (const auto* paths : {&o.give, &o.own})
    for (const auto& path : *paths) nftw(path.c_str(), take_back_one, 16, FTW_PHYS);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: grade_uidbox OPTIONS_FILE COMMAND...\n");
    return 2;
  }
  errno = 0;
  if (geteuid() != 0) fail("the uid box needs root (it runs each box as a uid of its own)");
  const Options o = read_options(argv[1]);
  struct stat base_info{};
  if (lstat(o.base.c_str(), &base_info) != 0 || !S_ISDIR(base_info.st_mode) || base_info.st_uid != 0 ||
      (base_info.st_mode & 022) != 0)
    fail(o.base + " must be a folder of root's that no one else may write");
  const std::string slots = o.base + "/slots";
  mkdir(slots.c_str(), 0700);
  // A slot: the first free uid of the range from a place of this process's own (fewer collisions).
  const std::set<unsigned> named = named_uids();
  int lock = -1;
  unsigned uid = 0;
  for (unsigned step = 0; step < o.count && lock < 0; ++step) {
    const unsigned candidate = o.first + (static_cast<unsigned>(getpid()) + step) % o.count;
    if (named.count(candidate)) continue;
    const std::string path = slots + "/" + std::to_string(candidate) + ".lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) fail("cannot open " + path);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      lock = fd;
      uid = candidate;
    } else {
      close(fd);
    }
  }
  if (lock < 0) {
    errno = 0;
    fail("every box uid of the range is in use");
  }
  kill_uid(uid);  // a box of this uid whose guard was killed outright: nothing of it may stay
  remove_left_behind(uid);
  std::string box = o.base + "/box-" + std::to_string(uid) + "-XXXXXX";
  if (mkdtemp(box.data()) == nullptr) fail("cannot make the box's folder");
  const std::string tmp = box + "/tmp";
  if (chown(box.c_str(), 0, uid) != 0 || chmod(box.c_str(), 0750) != 0 || mkdir(tmp.c_str(), 0700) != 0 ||
      chown(tmp.c_str(), uid, uid) != 0)
    fail("cannot make the box's folder");
  for (const auto& [source, name] : o.copy) copy_in(source, box + "/" + name, uid);
  walk(o.give, uid, true);
  walk(o.own, uid, false);

  int link[2];  // this process <-> the guard: the box's status one way, this process's end the other
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0) fail("cannot make the guard's socket");
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signal, nullptr);
  const pid_t guard = fork();
  if (guard < 0) fail("cannot fork");
  if (guard == 0) {
    setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    close(link[0]);
    const pid_t first = fork();
    if (first == 0) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
      close(link[1]);
      close(lock);
      become_box(o, uid, box, argv + 2);
    }
    const int events = signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != link[1] && fd != lock && fd != events) close(fd);
    int status = 125 << 8;
    bool ended = first < 0;
    while (!ended) {
      pollfd waiting[2] = {{link[1], POLLIN, 0}, {events, POLLIN, 0}};
      if (poll(waiting, 2, -1) < 0) continue;
      if (waiting[0].revents) break;  // the stand-in was killed (or wrote, which it never does): stop the box
      signalfd_siginfo info{};
      while (read(events, &info, sizeof info) > 0) {}
      for (pid_t done; (done = waitpid(-1, &status, WNOHANG)) > 0;)
        if (done == first) {
          ended = true;
          break;
        }
    }
    kill_uid(uid);
    remove_left_behind(uid);
    take_back(o);
    remove_tree(box);
    const int code = !ended ? 137 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const unsigned char byte = static_cast<unsigned char>(code);
    if (write(link[1], &byte, 1) != 1) {}
    _exit(0);
  }
  close(link[1]);
  close(lock);
  for (int fd = 3; fd < 1024; ++fd)
    if (fd != link[0]) close(fd);
  unsigned char code = 125;
  while (read(link[0], &code, 1) < 0 && errno == EINTR) {}
  waitpid(guard, nullptr, 0);
  return code;
}
