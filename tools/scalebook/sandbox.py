"""The box a submission's code runs in, for grading: bubblewrap (Debian's bwrap) gives it its own
user, mount, PID, network, IPC and UTS namespaces; it sees a read-only /usr, the contract headers
and lib's headers, its own sources or objects, and a small private /tmp; nothing of the grader's
tree, no other submission, no host /tmp, no sockets, no network. Everything it starts dies with it
(PID namespace). Limits: wall time (the caller's), CPU time, address space and file size per process
(prlimit), and, where the grader may create cgroups (root), memory and process count for the whole
box."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


class SandboxUnavailable(Exception):
    """No bubblewrap, or no user namespaces: grading refuses to run rather than run unboxed."""


def check_available() -> None:
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    probe = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib",
                            "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                            "--", "/usr/bin/true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SandboxUnavailable("bubblewrap cannot create its namespaces here "
                                 f"({probe.stderr.strip() or probe.returncode}); grading refuses to "
                                 "run without a sandbox")


class Box:
    """One submission's box: a private folder on the host (created fresh, removed by the caller)
    and the cgroups that bound it as a whole, when they can be made."""

    def __init__(self, folder: Path, memory_mb: int = 3072, processes: int = 64):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=False)
        self.cgroups: list[Path] = []
        name = f"scalebook-{uuid.uuid4().hex[:12]}"
        for controller, settings in (("memory", {"memory.limit_in_bytes": str(memory_mb << 20)}),
                                     ("pids", {"pids.max": str(processes)})):
            group = CGROUP_ROOT / controller / name
            try:
                group.mkdir()
                for key, value in settings.items():
                    (group / key).write_text(value)
                self.cgroups.append(group)
            except OSError:
                try:
                    group.rmdir()
                except OSError:
                    pass
        self.whole_box_limits = len(self.cgroups) == 2

    def close(self) -> None:
        for group in self.cgroups:
            procs = group / "cgroup.procs"
            try:
                for pid in procs.read_text().split():
                    os.kill(int(pid), 9)
            except OSError:
                pass
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)
        shutil.rmtree(self.folder, ignore_errors=True)

    def enter(self) -> None:
        """preexec_fn: the process (and so the whole box) joins the box's cgroups."""
        for group in self.cgroups:
            try:
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                pass


def command(binds: list[tuple[str, Path | str, str]], argv: list[str], *, cpu_seconds: int,
            memory_mb: int = 2048, file_mb: int = 64, tmp_mb: int = 64, processes: int = 64) -> list[str]:
    """The command line that runs ARGV in a box. BINDS: (mode, host path, box path), mode "ro" or
    "rw". Limits are per process (prlimit); the Box's cgroups bound the box as a whole."""
    limits = ["prlimit", f"--cpu={cpu_seconds}", f"--as={memory_mb << 20}", f"--fsize={file_mb << 20}",
              "--core=0"]
    if os.geteuid() != 0:  # RLIMIT_NPROC binds only non-root users (root: the pids cgroup does)
        limits.append(f"--nproc={processes + 512}")  # counts every process of the user
    box = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--uid", "65534", "--gid", "65534", "--hostname", "box",
           "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
           "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
           "--proc", "/proc", "--dev", "/dev", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp",
           "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
           "--setenv", "LC_ALL", "C"]
    for mode, host, inside in binds:
        box += ["--ro-bind" if mode == "ro" else "--bind", str(host), inside]
    box += ["--chdir", "/tmp", "--"]
    return [*limits, "--", *box, *argv]
