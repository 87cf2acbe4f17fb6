"""The box a submission's code runs in, for grading (Debian's bubblewrap, bwrap).

Every compile, link and worker run happens in a box with its own user (uid 65534 in a user namespace
of its own), mount, PID, network, IPC and UTS namespaces and no capabilities. It sees a read-only
/usr, the folders the caller binds, a private /tmp of a fixed size and read-only /dev and /proc; nothing of
the grader's tree, no other submission, no host /tmp, no sockets, no network. Everything it starts
dies with it (PID namespace; bwrap dies with its parent).

The box's /proc is read-only: the worker cannot reset its own memory counters
(/proc/self/clear_refs), which the trusted checks read from outside it (chapter 7's memory proof).

Nothing of the host reaches the box's view of itself: bwrap starts with an empty environment and
reads its arguments from a file descriptor (`--args FD`), so /proc/1/environ is empty and
/proc/1/cmdline is "bwrap --args N" inside every box.

Limits (see Limits): per process CPU time, address space, file size, no core dumps (prlimit). For the
whole box:
- as root, a cgroup per box (v1 memory, pids and cpu controllers): memory including its tmpfs,
  processes, and at most one CPU's worth of time across all of its processes;
- as any user, the worker box runs one process only (a seccomp filter makes fork, vfork, clone and
  clone3 fail), so its address-space limit bounds its memory and it uses at most one CPU; compile
  boxes count their processes in their own user namespace (RLIMIT_NPROC set inside the box counts
  that box alone, not every process of the grading user).

A second mode, the uid box (native/uidbox.cpp), for a root grader where bubblewrap cannot make its
namespaces (a Docker container under Docker's default seccomp profile: Gradescope, PrairieLearn,
CI): each box runs as an unprivileged uid of its own (a slot of BOX_UIDS, so RLIMIT_NPROC counts that
box alone), with no groups, no capabilities, no_new_privs and a seccomp filter (no sockets, ptrace,
namespaces or mounts: seccomp_filter.write_uid_box_filter), the same prlimit limits, a private
folder of its own for scratch, and Landlock where the kernel and the container allow it (reads of
the system's programs and of what the box is given, writes to its own folders). Nothing is bound:
the box sees the host's paths, so each step writes its command line for the mode (translate()).
What the box is given is made readable to its uid alone and taken back when it ends, when every
process of its uid is killed and what it left in the world-writable folders removed. mode() picks
the mode (SCALEBOOK_SANDBOX=namespaces or uid forces one), description() says what held.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import re
import selectors
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from ..config import Limits  # noqa: F401 (sandbox.Limits, as the steps name it)
from ..errors import SandboxError

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
BWRAP = "/usr/bin/bwrap"
PRLIMIT = "/usr/bin/prlimit"
ENV = "/usr/bin/env"
ARGS_FD, SECCOMP_FD = 5, 6  # the worker's pipes are 3 and 4 (lib/remote/client.cpp)
WORKER_FD, LAUNCHER_FD = 7, 8  # the files a worker box copies in (--ro-bind-data)


SandboxUnavailable = SandboxError  # no bubblewrap, user namespaces or seccomp: grading refuses

MODE_ENV = "SCALEBOOK_SANDBOX"      # namespaces, uid or uid-no-landlock: that mode or none (tests force the uid box)
NAMESPACES, UID, UID_LANDLOCK = "namespaces", "uid", "uid+landlock"
NO_LANDLOCK = "uid-no-landlock"     # the uid box as where Landlock cannot be used (its weakest form, for tests)
BOX_BASE = Path("/var/lib/scalebook/boxes")  # the uid boxes' folders and slots (root's, 0755)
BOX_UIDS = (61000, 2000)            # the uid boxes' uids: the first and how many (below 65534: any container maps them)
UID_HELPER, UID_FILTER, UID_WORKER_FILTER = "grade_uidbox", "uidbox.bpf", "uidbox-worker.bpf"  # in the kit


def check_available() -> None:
    """The sandbox this grader can make, or SandboxError naming the cause and the remedies."""
    if shutil.which("bwrap") is None or not Path(BWRAP).exists():
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    if importlib.util.find_spec("seccomp") is None:  # Debian's python3-seccomp
        raise SandboxUnavailable("python3-seccomp is not installed (the worker's no-fork filter): "
                                 "apt-get install python3-seccomp")
    mode()


def namespaces_refused() -> str | None:
    """bubblewrap's own words when it cannot make its namespaces here, None when it can."""
    probe = subprocess.run([shutil.which("bwrap") or BWRAP, "--unshare-all", "--ro-bind", "/usr", "/usr",
                            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                            "--symlink", "usr/bin", "/bin", "--", "/usr/bin/true"],
                           capture_output=True, text=True, env={})
    return None if probe.returncode == 0 else (probe.stderr.strip() or f"exit status {probe.returncode}")


def uid_box_refused() -> str | None:
    """Why a uid box cannot be made here (None: it can): it needs root, which may become another uid."""
    if os.geteuid() != 0:
        return "the uid box needs root (it runs each box as a uid of its own), and this grader runs as uid " \
               f"{os.geteuid()}"
    probe = subprocess.run(["/usr/bin/true"], user=BOX_UIDS[0], group=BOX_UIDS[0], extra_groups=[],
                           capture_output=True, text=True, env={})
    return None if probe.returncode == 0 else f"root cannot become uid {BOX_UIDS[0]} here"


def landlock_abi() -> int:
    """Landlock's ABI version where the kernel has it and this process may use it (a container's
    seccomp profile may refuse its calls), else 0."""
    abi = _libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, abi)


def userns_remedies() -> str:
    """What would let bubblewrap make its namespaces here, as exact commands, for the cause found."""
    def read(path: str) -> str:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return ""
    causes = []
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        causes.append("AppArmor forbids unprivileged user namespaces here (Ubuntu 23.10 and later): give bwrap "
                      "a profile that allows them, as root: printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\n"
                      "profile bwrap /usr/bin/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' > /etc/apparmor.d/bwrap "
                      "&& apparmor_parser -r /etc/apparmor.d/bwrap")
    if read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        causes.append("the kernel forbids unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1")
    if read("/proc/sys/user/max_user_namespaces") == "0":
        causes.append("user namespaces are switched off: sysctl -w user.max_user_namespaces=15000")
    if not causes:
        causes.append("a seccomp filter or a container refuses them (Docker's default profile does): run the "
                      "grader as root in the container, where the uid box needs no namespaces, or give the "
                      "container --security-opt seccomp=unconfined")
    return "; or ".join(causes)


@functools.lru_cache(maxsize=None)
def mode() -> str:
    """The sandbox grading uses here: NAMESPACES where bubblewrap can make its namespaces, else
    UID_LANDLOCK or UID for a root grader (Landlock where it can be used), else SandboxError naming
    the cause and the exact remedies. SCALEBOOK_SANDBOX=namespaces or uid asks for that mode alone,
    uid-no-landlock for the uid box without Landlock."""
    forced = os.environ.get(MODE_ENV, "")
    if forced not in ("", NAMESPACES, UID, NO_LANDLOCK):
        raise SandboxUnavailable(f"{MODE_ENV}={forced!r}: it takes {NAMESPACES}, {UID} or {NO_LANDLOCK} (or is unset: "
                                 "chosen here)")
    without_landlock = forced == NO_LANDLOCK
    forced = UID if without_landlock else forced
    refused = namespaces_refused() if forced != UID else f"{MODE_ENV}={UID}"
    if refused is None:
        return NAMESPACES
    if forced == NAMESPACES:
        raise SandboxUnavailable(f"bubblewrap cannot create its namespaces here ({refused}), and {MODE_ENV}="
                                 f"{NAMESPACES} asks for them alone; remedy: {userns_remedies()}")
    no_uid_box = uid_box_refused()
    if no_uid_box is not None and forced == UID:
        raise SandboxUnavailable(f"{MODE_ENV}={UID} asks for the uid box, and {no_uid_box}: grade as root (in a "
                                 f"container too), or leave {MODE_ENV} unset to use bubblewrap where it works")
    if no_uid_box is not None:
        raise SandboxUnavailable(
            f"grading refuses to run without a sandbox, and neither can be made here: bubblewrap cannot create "
            f"its namespaces ({refused}), and {no_uid_box}. Remedies: {userns_remedies()}; or grade as root "
            f"(in a container too: the uid box needs no namespaces)")
    return UID_LANDLOCK if landlock_abi() > 0 and not without_landlock else UID


def description(which: str) -> str:
    """What the sandbox WHICH (mode()) holds, as each report says it."""
    if which == NAMESPACES:
        if cgroups_possible():
            return ("bubblewrap; whole-box limits by cgroups (memory with tmpfs, processes, one CPU); the worker "
                    "cannot fork (seccomp)")
        return ("bubblewrap; no cgroups (not root): the worker cannot fork (seccomp), so its address-space limit "
                "is its memory and it uses one CPU; compile boxes count their processes in their own user namespace")
    return ("uid box (no namespaces here): an unprivileged uid of its own per box, no_new_privs, seccomp (no "
            "sockets, ptrace, namespaces or mounts; the worker cannot fork or open a file to write), rlimits, a "
            "private folder; " + ("Landlock: reads of the system and of what the box is given only, writes to its "
                                  "own folders" if which == UID_LANDLOCK else
                                  "no Landlock here: the box may read what every user may read"))


def is_uid(which: str) -> bool:
    return which in (UID, UID_LANDLOCK)


def box_base() -> Path:
    """BOX_BASE, made root's and 0755 (refused when it is anything else: a uid box's folder there
    must be out of every other user's reach)."""
    BOX_BASE.mkdir(mode=0o755, parents=True, exist_ok=True)
    info = os.lstat(BOX_BASE)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise SandboxUnavailable(f"{BOX_BASE} must be a folder of root's that no one else may write")
    return BOX_BASE


def readable_by_a_box(paths: list[Path]) -> list[Path]:
    """Those of PATHS an unprivileged uid (a box's, without Landlock) could open: every file a box
    would read there if it knew its name."""
    exposed = []
    for path in paths:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setresgid(BOX_UIDS[0], BOX_UIDS[0], BOX_UIDS[0])
                os.setresuid(BOX_UIDS[0], BOX_UIDS[0], BOX_UIDS[0])
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) == 0:
            exposed.append(path)
    return exposed


class Box:
    """How a step makes its boxes: the mode (kit.json's "sandbox"), and for a uid box the kit's
    helper and filters."""

    def __init__(self, which: str, kit_dir: Path | None = None):
        self.mode = which
        self.kit_dir = kit_dir

    @property
    def uid(self) -> bool:
        return is_uid(self.mode)

    def command(self, arguments_file: Path, binds: list, argv: list[str], limits: Limits, *,
                count_processes: bool = True, as_pid_1: bool = False, worker: bool = False) -> list[str]:
        """The box's options written to ARGUMENTS_FILE, and the command run() takes: for bubblewrap
        (box_arguments, write_arguments) as it always was; for a uid box the helper's options
        (native/uidbox.cpp) and ARGV with every box path of BINDS translated to the path the box
        sees (translate())."""
        if not self.uid:
            return write_arguments(arguments_file, box_arguments(binds, argv, limits, count_processes=count_processes,
                                                                 as_pid_1=as_pid_1))
        base = box_base()
        options = ["--base", str(base), "--uids", str(BOX_UIDS[0]), str(BOX_UIDS[1]),
                   "--seccomp", str(self.kit_dir / (UID_WORKER_FILTER if worker else UID_FILTER)),
                   "--nproc", str(limits.processes if count_processes else 4)]
        if self.mode == UID_LANDLOCK:
            options.append("--landlock")
        for kind, host, inside in binds:
            if kind == "ro":
                options += ["--give", str(host), "--read", str(host)]
            elif kind == "rw":
                options += ["--own", str(host)]
            elif kind == "pub":  # root's, readable by all already (the kit's public view)
                options += ["--read", str(host)]
            elif kind == "data":  # a file (a path here) copied into the box's folder
                options += ["--copy", str(host), inside.strip("/")]
        arguments_file.write_bytes(b"".join(o.encode() + b"\0" for o in options))
        self.seen_paths = seen(binds)
        return [str(arguments_file), *translate(argv, self.seen_paths)]

    def run(self, arguments_file: Path, command: list[str], limits: Limits, timeout: float,
            cgroups: Cgroups | None = None, **kwargs) -> tuple[int, bytes]:
        if not self.uid:
            return run(arguments_file, command, limits, timeout, cgroups, **kwargs)
        code, output = run(arguments_file, command, limits, timeout, cgroups,
                           program=[str(self.kit_dir / "bin" / UID_HELPER)], **kwargs)
        return code, self.as_in_a_namespace_box(output)

    seen_paths: dict[str, str] = {}

    def as_in_a_namespace_box(self, output: bytes) -> bytes:
        """OUTPUT with the host paths the box saw written as bubblewrap's box would show them
        (/src/ex1.cpp, /out, /kit/include): the messages a compile gives are the same in both modes."""
        for inside, host in sorted(self.seen_paths.items(), key=lambda item: len(item[1]), reverse=True):
            if host != inside and not host.startswith("{box}"):
                output = output.replace(host.encode(), inside.encode())
        return output


def seen(binds: list) -> dict[str, str]:
    """{box path: the path a uid box sees for it} for BINDS: the host path itself (nothing is
    bound), or {box}/NAME for a file copied in."""
    return {inside: (f"{{box}}/{inside.strip('/')}" if kind == "data" else str(host)) for kind, host, inside in binds}


def translate(argv: list[str], paths: dict[str, str]) -> list[str]:
    """ARGV with each box path of PATHS (a whole path, or the start of one: /out/x.o, -I/kit/include,
    a shell script's "> /out/x.cpu") replaced by the path the box sees."""
    if not paths:
        return list(argv)
    pattern = re.compile(r"(?:^|(?<=[\s>=])|(?<=-I))(" + "|".join(re.escape(p) for p in sorted(paths, key=len, reverse=True))
                         + r")(?=/|$|[\s;\"'])")
    return [pattern.sub(lambda m: paths[m.group(1)], word) for word in argv]


def cgroups_possible() -> bool:
    return os.geteuid() == 0 and all((CGROUP_ROOT / c).is_dir() for c in CONTROLLERS)


class Cgroups:
    """One box's cgroups (v1), when the grader may make them (root): memory (tmpfs included), pids,
    and one CPU's worth of time. Processes join with enter() as a preexec_fn; close() kills
    whatever is left and removes them."""

    def __init__(self, limits: Limits):
        self.groups: list[Path] = []
        if not cgroups_possible():
            return
        name = f"scalebook-{uuid.uuid4().hex[:16]}"
        settings = {"memory": {"memory.limit_in_bytes": str(limits.box_memory_mb << 20)},
                    "pids": {"pids.max": str(limits.processes)},
                    "cpu": {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"}}
        for controller in CONTROLLERS:
            group = CGROUP_ROOT / controller / name
            try:
                group.mkdir()
                self.groups.append(group)
                for key, value in settings[controller].items():
                    (group / key).write_text(value)
            except OSError:
                self.close()
                self.groups = []
                return

    def enter(self) -> None:
        for group in self.groups:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        for group in self.groups:
            for _ in range(100):
                try:
                    for pid in (group / "cgroup.procs").read_text().split():
                        os.kill(int(pid), 9)
                except OSError:
                    pass
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def sweep_cgroups(older_than: float = 3600) -> None:
    """Removes boxes' cgroups left empty by steps that were killed outright (ctest's --timeout
    sends SIGKILL): rmdir fails on any that still holds a process; recent ones are left alone."""
    if not cgroups_possible():
        return
    now = time.time()
    for controller in CONTROLLERS:
        for group in (CGROUP_ROOT / controller).glob("scalebook-*"):
            try:
                if now - group.stat().st_mtime > older_than:
                    group.rmdir()
            except OSError:
                pass


def outer_limits(limits: Limits) -> list[str]:
    """prlimit's arguments for a box's processes (set before bwrap, inherited by all of them). The
    CPU limit is soft, with the hard one a second later: a process past it gets SIGXCPU, which
    names the cause (a compiler reports "CPU time limit exceeded"), where SIGKILL would not."""
    return [PRLIMIT, f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}", f"--as={limits.memory_mb << 20}",
            f"--fsize={limits.file_mb << 20}", "--core=0", "--"]


def box_arguments(binds: list[tuple[str, Path | str, str]], argv: list[str], limits: Limits, *,
                  count_processes: bool = True, as_pid_1: bool = False) -> list[str]:
    """bwrap's arguments (for --args FD) that run ARGV in a box. BINDS: (mode, host path, box path),
    mode "ro" or "rw", or ("data", descriptor, box path): a file copied into the box (it shows no
    host path, where a bind shows its source's in the box's mountinfo). COUNT_PROCESSES: set RLIMIT_NPROC inside the box, where the box's own user
    namespace makes it count this box's processes alone (not needed where seccomp forbids fork).
    AS_PID_1: ARGV is the box's first process (pid 1), which no process of the box can kill or
    stop (the kernel ignores those signals to a PID namespace's first process from inside it)."""
    box = ["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--uid", "65534", "--gid", "65534", "--hostname", "box",
           "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
           "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
           "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
           "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp",
           "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
           "--setenv", "LC_ALL", "C"]
    for mode, host, inside in binds:
        if mode == "data":  # HOST is a descriptor: its file is copied into the box, read-only, executable
            box += ["--perms", "0555", "--ro-bind-data", str(host), inside]
        else:
            box += ["--ro-bind" if mode == "ro" else "--bind", str(host), inside]
    box += ["--chdir", "/tmp", *(["--as-pid-1"] if as_pid_1 else []), "--"]
    if count_processes:
        box += [PRLIMIT, f"--nproc={limits.processes}", "--"]
    return box + list(argv)


def write_arguments(path: Path, arguments: list[str]) -> list[str]:
    """Writes bwrap's options (up to the "--") to PATH, for --args; returns the rest, the command in
    box paths, which stays on bwrap's command line (bwrap takes no command from an --args file)."""
    cut = arguments.index("--")
    path.write_bytes(b"".join(a.encode() + b"\0" for a in arguments[:cut]))
    return arguments[cut:]


class BoundedOutput:
    """What a box printed, bounded as it is read: its first HEAD bytes and its last TAIL bytes, and
    how many were left out between them (a compiler may print hundreds of megabytes of errors; this
    side never holds more than HEAD + 2 TAIL bytes of it)."""

    def __init__(self, head: int, tail: int):
        self.head_limit, self.tail_limit = head, tail
        self.head, self.tail = bytearray(), bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > 2 * self.tail_limit:
            cut = len(self.tail) - self.tail_limit
            self.dropped += cut
            del self.tail[:cut]

    def value(self) -> bytes:
        if len(self.tail) > self.tail_limit:
            self.dropped += len(self.tail) - self.tail_limit
            del self.tail[:len(self.tail) - self.tail_limit]
        if not self.dropped:
            return bytes(self.head + self.tail)
        return bytes(self.head) + f"\n[... {self.dropped} bytes not kept ...]\n".encode() + bytes(self.tail)


def read_bounded(process: subprocess.Popen, timeout: float, head: int, tail: int) -> tuple[bytes, bool]:
    """PROCESS's output (its stdout pipe) as a BoundedOutput keeps it, and whether it ran past
    TIMEOUT seconds of wall time (then it is killed)."""
    kept = BoundedOutput(head, tail)
    deadline = time.monotonic() + timeout
    stream = process.stdout
    os.set_blocking(stream.fileno(), False)
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                process.kill()
                process.wait()
                return kept.value(), True
            if not selector.select(min(left, 1.0)):
                continue
            try:
                data = os.read(stream.fileno(), 1 << 16)
            except BlockingIOError:
                continue
            if not data:
                break
            kept.add(data)
    left = max(0.0, deadline - time.monotonic())
    try:
        process.wait(timeout=left)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return kept.value(), True
    return kept.value(), False


def run(arguments_file: Path, command: list[str], limits: Limits, timeout: float,
        cgroups: Cgroups | None = None, seccomp_file: Path | None = None,
        keep: int = 20000, head: int = 20000, data_fds: dict[int, Path] | None = None,
        program: list[str] | None = None) -> tuple[int, bytes]:
    """Runs COMMAND in the box ARGUMENTS_FILE describes (see write_arguments) and returns (exit
    status, its output: the first HEAD and the last KEEP bytes, bounded as it is read); 124 when it
    ran past TIMEOUT seconds of wall time (the box is killed). DATA_FDS: files opened for the box's
    --file and --ro-bind-data options, at those descriptor numbers. PROGRAM: a uid box's helper,
    which takes COMMAND (its options file, then the command) as it is (Box.command)."""
    with open(arguments_file, "rb") as args, open(seccomp_file or os.devnull, "rb") as rules, \
            contextlib.ExitStack() as stack:
        options = ["--args", str(args.fileno())]
        if seccomp_file is not None:
            options = ["--seccomp", str(rules.fileno()), *options]
        if program is not None:
            options = []
        opened = {number: stack.enter_context(open_regular(path)) for number, path in (data_fds or {}).items()}

        def prepare() -> None:
            die_with_parent()
            for number, handle in opened.items():
                os.dup2(handle, number)
            if cgroups is not None:
                cgroups.enter()

        process = subprocess.Popen([*outer_limits(limits), *(program or [BWRAP]), *options, *command],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={}, pass_fds=(args.fileno(), rules.fileno(), *opened.values(), *opened),
                                   preexec_fn=prepare)
        output, timed_out = read_bounded(process, timeout, head, keep)
        process.stdout.close()
        return (124, b"") if timed_out else (process.returncode, output)


@contextlib.contextmanager
def open_regular(path: Path, limit: int | None = None):
    """A descriptor of the regular file PATH, opened without following a symlink or waiting on a
    FIFO (OSError for anything else, or for a file larger than LIMIT bytes)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if limit is not None and info.st_size > limit:
            raise OSError(f"{path} is larger than {limit} bytes")
        yield fd
    finally:
        os.close(fd)


def read_file(path: Path, limit: int) -> bytes:
    """At most LIMIT bytes of the regular file PATH, which a box wrote: never follows a symlink,
    never waits on a FIFO, never holds more than LIMIT (OSError for anything but a regular file)."""
    with open_regular(path) as fd:
        chunks, size = [], 0
        while size < limit:
            data = os.read(fd, min(1 << 20, limit - size))
            if not data:
                break
            chunks.append(data)
            size += len(data)
        return b"".join(chunks)


class Staging:
    """A folder of neutral name (the system's temporary folder, a random name, mode 0700) from which
    a box's folders are bound: a bind shows its host path in the box's /proc/self/mountinfo, so the
    box sees this name, never the grading folder's path or a classmate's. Files are hard-linked
    into it where they can be (else copied); close() removes it."""

    def __init__(self, copy: bool = False):
        """COPY (a uid box's staging): files are copied, never linked (the box is given them: a link
        would hand it the grading tree's own file), and the folder is 0711 (each folder in it is
        given to one box alone)."""
        self.path = Path(tempfile.mkdtemp(prefix="box-"))
        self.copy = copy
        if copy:
            self.path.chmod(0o711)

    def folder(self, name: str) -> Path:
        folder = self.path / name
        self.make(folder)
        return folder

    def make(self, folder: Path) -> None:
        """FOLDER and its parents in the staging folder: 0700, or 0711 for a uid box (searchable, not
        listable: what a box may read in it is what it is given, native/uidbox.cpp's --give)."""
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.copy:
            for made in [folder, *folder.parents]:
                if made == self.path:
                    break
                made.chmod(0o711)

    def add(self, source: Path, name: str) -> Path:
        target = self.path / name
        self.make(target.parent)
        if self.copy:
            shutil.copyfile(source, target, follow_symlinks=False)
            target.chmod(0o600)
            return target
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError:
            shutil.copy2(source, target, follow_symlinks=False)
        return target

    def add_tree(self, source: Path, name: str) -> Path:
        for path in sorted(Path(source).rglob("*")):
            if path.is_file() and not path.is_symlink():
                self.add(path, f"{name}/{path.relative_to(source)}")
        return self.folder(name)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def uid_worker_launcher(path: Path, command: list[str], helper: Path, seccomp_file: Path, limits: Limits) -> None:
    """worker_launcher's script for a uid box: the helper (native/uidbox.cpp) with the options
    file and command Box.command wrote, the worker's no-fork filter on the descriptor the box's
    first process reads it from."""
    path.write_text("#!/bin/sh\n"
                    'for group in $SCALEBOOK_BOX_CGROUPS; do echo $$ > "$group/cgroup.procs" || exit 125; done\n'
                    f"exec {ENV} -i {' '.join(outer_limits(limits))} {shlex.quote(str(helper))} "
                    f"{SECCOMP_FD}<{shlex.quote(str(seccomp_file))} {shlex.join(command)}\n")
    path.chmod(0o700)


def worker_launcher(path: Path, arguments_file: Path, command: list[str], seccomp_file: Path,
                    limits: Limits, data: dict[int, Path] | None = None) -> None:
    """A script that starts the worker box. The checks process runs it for each box it starts, with
    a socket to the box's first process (grading/native/box.cpp, which starts a fresh worker for each
    check and loads the no-fork filter into each) on fd 3: it joins the cgroups the check's step
    made (named in SCALEBOOK_BOX_CGROUPS, as root), then bwrap, with an empty environment, reads its
    options and the filter from files it opens afresh each time."""
    path.write_text("#!/bin/sh\n"
                    'for group in $SCALEBOOK_BOX_CGROUPS; do echo $$ > "$group/cgroup.procs" || exit 125; done\n'
                    f"exec {ENV} -i {' '.join(outer_limits(limits))} {BWRAP} "
                    f"--args {ARGS_FD} {ARGS_FD}<{shlex.quote(str(arguments_file))} "
                    f"{SECCOMP_FD}<{shlex.quote(str(seccomp_file))} "
                    + "".join(f"{fd}<{shlex.quote(str(file))} " for fd, file in (data or {}).items())
                    + f"{shlex.join(command)}\n")
    path.chmod(0o700)


_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG: this process is killed when the one that started it dies, however it dies
    (a test runner's SIGKILL included). For preexec_fn."""
    _libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
