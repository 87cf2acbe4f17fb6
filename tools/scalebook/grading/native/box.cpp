// The first process (pid 1) of a worker box that serves many checks, one after another (a chapter's
// batch; grading/kit.py compiles this file into the kit, grading/step.py binds it into the box as
// /launcher). As pid 1 of the box's PID namespace it cannot be killed or stopped from inside the box. Starting a box costs more than most checks; a fresh process per check costs little.
// So the box is started once, and this process starts a fresh worker for each check:
//
//   fd 3  a socket to the trusted checks process (lib/remote/client.cpp), which sends
//         "S" with two descriptors (the worker's requests and replies: its fds 3 and 4): start one
//         "K": kill the worker now running
//         and reads "D" with the worker's wait status (4 bytes) whenever a worker has ended;
//   fd 6  the worker's seccomp program (BPF), read once.
//
// Its arguments, TMP and WORKER, name the box's scratch folder and the worker (/tmp and /worker in a
// bubblewrap box; the uid box's own folder, native/uidbox.cpp, where nothing is bound).
//
// Each worker starts as the box's first worker would: /tmp emptied of what earlier workers left
// (and its mode restored), the seccomp filter loaded (no fork, no SysV IPC, no keyrings, no ptrace:
// nothing a worker makes outlives it), then /worker executed with the box's environment. Only one
// worker lives at a time. This process makes itself undumpable: a worker (same user) can neither
// trace it nor read its memory. Anything unexpected (a /tmp it cannot empty, a broken socket) ends
// this process and so the whole box; the client then starts a new box.
#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kControl = 3, kFilter = 6;

// Removes everything below the open directory DIR (its entries, recursively), making each
// directory searchable and writable first: a worker may have taken those rights away.
bool empty_directory(int dir) {
  DIR* listing = fdopendir(dup(dir));
  if (listing == nullptr) return false;
  rewinddir(listing);  // the copy shares DIR's position, at the end since the last time
  std::vector<std::pair<std::string, bool>> entries;
  while (const dirent* entry = readdir(listing)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    struct stat info{};
    if (fstatat(dir, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
      closedir(listing);
      return false;
    }
    entries.emplace_back(entry->d_name, S_ISDIR(info.st_mode));
  }
  closedir(listing);
  for (const auto& [name, is_directory] : entries) {
    if (is_directory) {
      if (fchmodat(dir, name.c_str(), 0700, 0) != 0) return false;
      const int inner = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (inner < 0) return false;
      const bool emptied = empty_directory(inner);
      close(inner);
      if (!emptied || unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0) return false;
    } else if (unlinkat(dir, name.c_str(), 0) != 0) {
      return false;
    }
  }
  return true;
}

bool send_status(int status) {
  char message[1 + sizeof status] = {'D'};
  std::memcpy(message + 1, &status, sizeof status);
  return send(kControl, message, sizeof message, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof message);
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp_folder = argc > 1 ? argv[1] : "/tmp";
  const char* worker_path = argc > 2 ? argv[2] : "/worker";
  prctl(PR_SET_DUMPABLE, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // bwrap, outside the box, is gone: so is the box
  std::vector<char> program;
  {
    char buffer[4096];
    for (ssize_t got; (got = read(kFilter, buffer, sizeof buffer)) > 0;) program.insert(program.end(), buffer, buffer + got);
    close(kFilter);
  }
  if (program.empty() || program.size() % sizeof(sock_filter) != 0) return 120;
  sock_fprog filter{static_cast<unsigned short>(program.size() / sizeof(sock_filter)),
                    reinterpret_cast<sock_filter*>(program.data())};
  struct stat tmp_info{};
  const int tmp = open(tmp_folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tmp < 0 || fstat(tmp, &tmp_info) != 0) return 121;
  fcntl(kControl, F_SETFD, FD_CLOEXEC);

  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signal, nullptr);
  const int child_events = signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  if (child_events < 0) return 122;

  pid_t worker = -1;
  while (true) {
    pollfd waiting[2] = {{kControl, POLLIN, 0}, {child_events, POLLIN, 0}};
    if (poll(waiting, 2, -1) < 0) continue;
    if (waiting[1].revents & POLLIN) {
      signalfd_siginfo info{};
      while (read(child_events, &info, sizeof info) > 0) {}
      int status = 0;
      if (worker > 0 && waitpid(worker, &status, WNOHANG) == worker) {
        worker = -1;
        if (!send_status(status)) return 0;
      }
    }
    if (!(waiting[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char command = 0;
    int fds[2] = {-1, -1};
    char space[CMSG_SPACE(sizeof fds)] = {};
    iovec data{&command, 1};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = space;
    message.msg_controllen = sizeof space;
    const ssize_t got = recvmsg(kControl, &message, MSG_CMSG_CLOEXEC);
    if (got <= 0) return 0;  // the checks process is gone: so is the box
    int received = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        received = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        std::memcpy(fds, CMSG_DATA(c), sizeof(int) * static_cast<std::size_t>(received < 2 ? received : 2));
      }
    }
    if (command == 'K') {
      if (worker > 0) kill(worker, SIGKILL);
      continue;
    }
    if (command != 'S' || received != 2 || worker > 0) return 123;
    // What an earlier worker left in /tmp goes, and /tmp is as the box made it.
    if (fchmod(tmp, 0700) != 0 || !empty_directory(tmp) || fchmod(tmp, tmp_info.st_mode & 07777) != 0) return 124;
    worker = fork();
    if (worker < 0) return 125;
    if (worker == 0) {
      sigprocmask(SIG_UNBLOCK, &child_signal, nullptr);
      // fds 3 and 4 are the pipes, whatever numbers they came with (dup2 clears close-on-exec).
      const int requests = fcntl(fds[0], F_DUPFD_CLOEXEC, 10), replies = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
      if (requests < 0 || replies < 0 || dup2(requests, 3) != 3 || dup2(replies, 4) != 4) _exit(126);
      if (chdir(tmp_folder) != 0) _exit(126);
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0)
        _exit(126);
      std::string name = worker_path;
      char* worker_argv[] = {name.data(), nullptr};
      execve(name.c_str(), worker_argv, environ);
      _exit(127);
    }
    close(fds[0]);
    close(fds[1]);
  }
}
