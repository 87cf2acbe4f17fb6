"""A single-node Slurm for tests, in a PID namespace of its own.

A single-node Slurm (munged, slurmctld, slurmd) in a PID namespace of its own, for tests: every
process it started ends with it. Its namespace's first process is this module again, run with -m from tools/
(--supervise).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# The programs each part needs, with the Debian package that ships them.
CLIENT_PROGRAMS = {"sbatch": "slurm-client", "squeue": "slurm-client", "scontrol": "slurm-client",
                   "scancel": "slurm-client", "sinfo": "slurm-client"}
DAEMON_PROGRAMS = {"slurmctld": "slurmctld", "slurmd": "slurmd", "munged": "munge",
                   "unshare": "util-linux"}
# Debian's metapackage slurm-wlm pulls slurmctld, slurmd and slurm-client.
INSTALL_HINT = "apt-get install -y slurm-wlm munge"
# A job's state once it has ended (squeue no longer lists it as pending, running or completing).
from ..errors import SlurmError

START_SECONDS = 60.0  # LocalCluster gives up (and stops what it started) after this long




def available(cluster: bool = True) -> str | None:
    """None when the Slurm client commands (and, with cluster=True, what LocalCluster starts: the
    daemons, munged, unshare and root) are here; else a sentence naming what is missing and the
    apt-get line that installs it."""
    wanted = dict(CLIENT_PROGRAMS, **(DAEMON_PROGRAMS if cluster else {}))
    missing = sorted({package for program, package in wanted.items() if _which(program) is None})
    if missing:
        return (f"Slurm is not usable here: missing the Debian packages {', '.join(missing)} "
                f"({INSTALL_HINT})")
    if cluster and os.geteuid() != 0:
        return "a local Slurm cluster needs root (slurmd runs jobs as their submitter)"
    if cluster:
        probe = subprocess.run([_which("unshare") or "unshare", "--pid", "--fork", "--kill-child",
                                "--mount-proc", "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            return ("a local Slurm cluster runs in a PID namespace of its own, which cannot be made "
                    f"here: {probe.stderr.strip() or probe.returncode}")
    return None


def _which(program: str) -> str | None:
    return shutil.which(program, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the process that started it dies (prctl)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class LocalCluster:
    """A single-node Slurm started from Debian's packages, for tests, as root:

        with LocalCluster(scratch) as cluster:
            array, merge = submit_array(commands, env=cluster.env, workdir=..., ...)

    scratch (a fresh or empty folder) receives a MUNGE key and socket of its own, slurm.conf
    (ports picked free, state, spool, logs and pid files under scratch), and the daemons' logs;
    `extra_config` lines are appended to slurm.conf. The node offers `cpus` CPUs whatever the
    machine has, so that a test's concurrency limit, not the CPU count, bounds how many tasks run
    at once. `env` is os.environ with SLURM_CONF set. Every folder above scratch must be open to
    all users (munged's rule for its socket)."""

    def __init__(self, scratch: Path, cpus: int = 8, extra_config: list[str] = (),
                 start_seconds: float = START_SECONDS):
        reason = available()
        if reason:
            raise SlurmError(f"LocalCluster: {reason}")
        self.scratch = Path(scratch).resolve()
        self.cpus = cpus
        self.extra_config = list(extra_config)
        self.start_seconds = start_seconds
        self.conf = self.scratch / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "LocalCluster":
        try:
            self._write_config()
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _write_config(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        if any(self.scratch.iterdir()):
            raise SlurmError(f"LocalCluster: {self.scratch} is not empty")
        for folder in [self.scratch, *self.scratch.parents]:
            if not folder.stat().st_mode & 0o001:
                raise SlurmError(f"LocalCluster: munged refuses a socket below {folder}, which not "
                                 f"every user may enter (chmod o+x {folder}, or another scratch folder)")
        # munged refuses a key others can read and a socket folder others cannot enter.
        keys = self.scratch / "munge-key"
        keys.mkdir(mode=0o700)
        key = keys / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.scratch / "munge").mkdir(mode=0o755)
        for folder in ("state", "spool", "log"):
            (self.scratch / folder).mkdir()
        host = socket.gethostname().split(".")[0]
        s = self.scratch
        self.conf.write_text("\n".join([
            "# A single-node test cluster (tools/scalebook/grading/slurm_local.py LocalCluster).",
            "ClusterName=scalebook",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={s}/munge/munge.socket",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={s}/state",
            f"SlurmdSpoolDir={s}/spool",
            f"SlurmctldPidFile={s}/slurmctld.pid",
            f"SlurmdPidFile={s}/slurmd.pid",
            f"SlurmctldLogFile={s}/log/slurmctld.log",
            f"SlurmdLogFile={s}/log/slurmd.log",
            # No cgroups, accounting or MPI: nothing of the host's configuration is touched.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin",
            "SchedulerParameters=sched_interval=1,batch_sched_delay=0",
            "ReturnToService=2",
            # The node is declared with `cpus` CPUs, whatever the hardware says.
            "SlurmdParameters=config_overrides",
            # Ended jobs stay visible to scontrol for 10 minutes (there is no accounting database).
            "MinJobAge=600",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
            "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            *self.extra_config, ""]))

    def _start(self) -> None:
        log = open(self.scratch / "log" / "daemons.out", "wb")
        # unshare's child is PID 1 of a new PID namespace: when it ends, the kernel kills every
        # process of the namespace. --kill-child ends it when unshare ends; unshare itself dies
        # with this process (PR_SET_PDEATHSIG).
        self._process = subprocess.Popen(
            [_which("unshare") or "unshare", "--pid", "--fork", "--kill-child", "--mount-proc",
             sys.executable, "-m", "scalebook.grading.slurm_local", "--supervise", str(self.scratch)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env,
            preexec_fn=_die_with_parent, cwd=Path(__file__).resolve().parents[2])  # -m from tools/
        log.close()
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise SlurmError(f"LocalCluster: the daemons stopped (exit {self._process.returncode})"
                                 + self._logs())
            try:  # sinfo keeps retrying while slurmctld is not up yet
                state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True,
                                       text=True, stdin=subprocess.DEVNULL,
                                       timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                continue
            if state.returncode == 0 and state.stdout.strip() == "idle":
                return
            time.sleep(0.1)
        raise SlurmError(f"LocalCluster: the node was not idle after {self.start_seconds:g} s" + self._logs())

    def _logs(self) -> str:
        parts = []
        for name in ("daemons.out", "slurmctld.log", "slurmd.log"):
            path = self.scratch / "log" / name
            if path.exists():
                tail = path.read_text(errors="backslashreplace").splitlines()[-15:]
                parts.append(f"\n--- {path} (last lines)\n" + "\n".join(tail))
        return "".join(parts)

    def pids(self) -> list[int]:
        """The host's ids of every process the cluster runs (unshare and its descendants)."""
        if self._process is None or self._process.poll() is not None:
            return []
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
        found, todo = [], [self._process.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def stop(self) -> None:
        """Ends every process the cluster started (each by its id: unshare, the namespace's PID 1,
        the daemons, job steps and jobs) and returns once none of them is left."""
        if self._process is None:
            return
        pids = self.pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._process.wait()
        self._process = None
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.01)


def _alive(pid: int) -> bool:
    """True while the process runs (a zombie has ended: only its parent's wait is missing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _supervise(scratch: Path) -> int:
    """PID 1 of LocalCluster's namespace: starts munged, slurmctld and slurmd in the foreground,
    reaps every orphan, and ends (ending the namespace) when one of the three ends or on SIGTERM."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    conf = str(scratch / "slurm.conf")
    socket_path = scratch / "munge" / "munge.socket"
    daemons = {}
    munged = subprocess.Popen([_which("munged") or "munged", "--foreground",
                              f"--key-file={scratch / 'munge-key' / 'munge.key'}",
                              f"--socket={socket_path}", f"--pid-file={scratch / 'munge' / 'munged.pid'}",
                              f"--seed-file={scratch / 'munge' / 'munged.seed'}",
                              f"--log-file={scratch / 'log' / 'munged.log'}"])
    daemons[munged.pid] = "munged"
    deadline = time.monotonic() + START_SECONDS
    while not socket_path.exists():
        if munged.poll() is not None or time.monotonic() > deadline:
            print("munged did not create its socket", file=sys.stderr)
            return 1
        time.sleep(0.02)
    for name in ("slurmctld", "slurmd"):
        daemons[subprocess.Popen([_which(name) or name, "-D", "-f", conf]).pid] = name
    while True:
        pid, status = os.wait()
        if pid in daemons:
            print(f"{daemons[pid]} ended (status {status})", file=sys.stderr)
            return 1


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--supervise":
    sys.exit(_supervise(Path(sys.argv[2])))
