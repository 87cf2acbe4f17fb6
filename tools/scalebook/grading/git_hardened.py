"""git run so that nothing of a student's repository runs: hardened settings on the command line, a
clean environment, only plain transports, a session of its own and a time bound (for collect.py)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from ..verdicts import safe_text
from .roster import without_credentials
from .supervise import CHILDREN

PROTOCOLS = "file:git:http:https:ssh"    # GIT_ALLOW_PROTOCOL: ext::, fd:: and any helper refused
# Settings given on git's command line, which outrank the repository's and the user's own: nothing
# of a repository runs, nothing is fetched beyond its commits, nothing waits on a person.
HARDENED = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "submodule.recurse=false",
            "-c", "fetch.recurseSubmodules=false", "-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
            "-c", "filter.lfs.smudge=", "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false",
            "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "credential.interactive=false",
            "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=30"]
# Variables that would point git at another repository than the one named (set inside a hook, say).
REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_PREFIX")


class GitTimeout(Exception):
    pass


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_VARIABLES}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ALLOW_PROTOCOL=PROTOCOLS, GIT_LFS_SKIP_SMUDGE="1",
               GCM_INTERACTIVE="never", SSH_ASKPASS_REQUIRE="never", LC_ALL="C")
    return env


def git(args: list[str], timeout: float, env: dict[str, str], data: bytes | None = None) -> subprocess.CompletedProcess:
    """git ARGS with the hardened settings, in a session of its own (no terminal to prompt on),
    everything it started killed at TIMEOUT seconds (GitTimeout), or when the run is stopped
    (supervise.CHILDREN: a signal to collect ends every git at once)."""
    process = CHILDREN.popen(["git", *HARDENED, *args], dies_with_parent=False,
                             stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = process.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise GitTimeout() from None
    finally:
        CHILDREN.done(process)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def is_local(repository: str) -> bool:
    """A path, not a URL: no scheme and no ssh 'host:path' (a colon before the first slash)."""
    return "://" not in repository and not re.match(r"^[^/]*:", repository)


def address(repository: str, roster_folder: Path) -> str:
    """What git is given: a local path made absolute (relative to the roster's folder), a URL as is."""
    if is_local(repository):
        return str((roster_folder / repository).absolute())
    return repository


def last_error(stderr: bytes, repository: str) -> str:
    """git's last 'fatal:' or 'error:' line (or its last line), as text that is safe to show."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    chosen = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "no message")
    text = chosen.replace(repository, without_credentials(repository))
    return safe_text(text, 300)
