"""Real Docker for tests: Debian's dockerd started where none runs, Debian base images from debootstrap.

Any test may use it (from tools/, `from tests.system import docker`):

    docker.daemon()                       # Debian's dockerd answering (started once, kept running)
    image = docker.base_image("bookworm") # "scalebook-base:bookworm-HASH", made once and cached
    docker.build(tag, context_folder)     # docker build --network host (packages from Debian's mirror)
    docker.run(image, ["cmd", ...], volumes={host: inside})   # Docker's default security
    docker.cached_image(tag, key, make)   # an image rebuilt only when KEY (the test's inputs) changes

How it runs, as /work/shared/design/REAL-SYSTEMS.md found on these machines: Debian's docker.io
(config.json's "docker" packages), no iptables and no bridge (containers use the host's network),
its data under CACHE/docker, its socket CACHE/docker.sock, so that it never meets another dockerd of
the machine. Its storage driver is overlay2 where the kernel mounts an overlay in CACHE (tried
first: a container is made and removed in a second, where vfs copies the whole image each time,
about a minute for a grader's image), else vfs, which works everywhere;
SCALEBOOK_DOCKER_STORAGE=DRIVER chooses. A daemon already running keeps the driver it started with. A daemon started here is left running for the
next test (it is found again by its socket, and a test that finds it still starting waits for it);
two tests that start it at once take turns (a lock). Stop it by the pid in CACHE/dockerd.pid when
no test of anyone's needs it any more.
Base images: `debootstrap --variant=minbase RELEASE` from the mirror apt uses, imported as one
layer; the root file system is cached as CACHE/RELEASE-HASH.tar (HASH: the packages included), so
a new daemon imports it in seconds instead of minutes. CACHE is SCALEBOOK_TEST_CACHE or
/var/cache/scalebook-tests, outside every clone. Root only (dockerd, debootstrap).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CACHE = Path(os.environ.get("SCALEBOOK_TEST_CACHE", "/var/cache/scalebook-tests"))
SOCKET = CACHE / "docker.sock"
HOST = f"unix://{SOCKET}"
DOCKER, DOCKERD = "/usr/bin/docker", "/usr/sbin/dockerd"   # Debian's (a docker earlier on PATH may be another's)
BASE_PACKAGES = ("ca-certificates",)


class DockerUnavailable(RuntimeError):
    """Docker cannot be used here (not root, no docker.io, a daemon that does not start): the message says why."""


@contextlib.contextmanager
def locked(name: str):
    """CACHE/NAME.lock held for the block: one test at a time makes what others then reuse."""
    CACHE.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def docker(*args: str, check: bool = True, timeout: float | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`docker ARGS` against this module's daemon; output captured as text unless KWARGS say otherwise."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    done = subprocess.run([DOCKER, "-H", HOST, *args], timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise DockerUnavailable(f"docker {' '.join(args[:3])}... failed (exit status {done.returncode}): "
                                f"{(done.stderr or '')[-2000:]}")
    return done


def answering() -> bool:
    if not SOCKET.exists():
        return False
    try:
        return docker("info", "--format", "{{.ServerVersion}}", check=False, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:  # a daemon still starting (vfs loads every container first)
        return False


def running_pid() -> int | None:
    """The pid of this module's dockerd when one runs (answering or still starting), else None."""
    try:
        pid = int((CACHE / "dockerd.pid").read_text())
        return pid if "dockerd" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace") else None
    except (OSError, ValueError):
        return None


def daemon(wait: float = 300) -> None:
    """Debian's dockerd, answering on SOCKET: the one running, or one started now and left running."""
    if os.geteuid() != 0:
        raise DockerUnavailable("dockerd and debootstrap need root")
    for program in (DOCKER, DOCKERD):
        if not Path(program).exists():
            raise DockerUnavailable(f"{program} is missing: apt-get install docker.io (config.json's 'docker' packages)")
    if answering():
        return
    with locked("dockerd"):
        if answering():
            return
        if running_pid() is None:  # none started, or it died: start one (else wait for the one starting)
            start()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if answering():
                return
            time.sleep(1)
        tail = (CACHE / "dockerd.log").read_bytes()[-2000:].decode(errors="replace")
        raise DockerUnavailable(f"dockerd did not answer within {wait:.0f} s; its log ends:\n{tail}")


def storage_driver() -> str:
    """SCALEBOOK_DOCKER_STORAGE, else overlay2 where an overlay mounts in CACHE (not where CACHE is on
    an overlay or a file system the kernel cannot layer), else vfs."""
    chosen = os.environ.get("SCALEBOOK_DOCKER_STORAGE")
    if chosen:
        return chosen
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        parts = {name: Path(scratch) / name for name in ("lower", "upper", "work", "merged")}
        for folder in parts.values():
            folder.mkdir()
        options = f"lowerdir={parts['lower']},upperdir={parts['upper']},workdir={parts['work']}"
        mounted = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(parts["merged"])],
                                 capture_output=True).returncode == 0
        if mounted:
            subprocess.run(["umount", str(parts["merged"])], check=True)
    return "overlay2" if mounted else "vfs"


def start() -> None:
    """Debian's dockerd, in a session of its own (it outlives the test that started it)."""
    SOCKET.unlink(missing_ok=True)
    driver = storage_driver()
    with open(CACHE / "dockerd.log", "ab") as log:
        subprocess.Popen([DOCKERD, "--iptables=false", "--ip6tables=false", "--bridge=none", f"--storage-driver={driver}",
                          "--data-root", str(CACHE / "docker"), "--exec-root", str(CACHE / "docker-exec"),
                          "--pidfile", str(CACHE / "dockerd.pid"), "-H", HOST],
                         stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)


def mirror() -> str:
    """The Debian mirror apt uses here (debootstrap takes the same)."""
    for source in sorted(Path("/etc/apt").rglob("*.sources")) + sorted(Path("/etc/apt").rglob("*.list")):
        for line in source.read_text(errors="replace").splitlines():
            words = line.split()
            if line.startswith("URIs:") and len(words) > 1 and "security" not in words[1]:
                return words[1]
            if line.startswith("deb ") and len(words) > 1 and "security" not in words[-3]:
                return words[1] if not words[1].startswith("[") else words[2]
    return "http://deb.debian.org/debian"


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, check=False).returncode == 0


def base_image(release: str, packages: tuple[str, ...] = BASE_PACKAGES) -> str:
    """A Debian RELEASE (bookworm, trixie) image made by debootstrap --variant=minbase with
    PACKAGES, as one layer; its root file system cached as CACHE/RELEASE-HASH.tar."""
    daemon()
    key = hashlib.sha256(json.dumps([release, sorted(packages)]).encode()).hexdigest()[:12]
    tag = f"scalebook-base:{release}-{key}"
    if image_exists(tag):
        return tag
    with locked(f"base-{release}-{key}"):
        if image_exists(tag):
            return tag
        archive = CACHE / f"{release}-{key}.tar"
        if not archive.exists():
            if shutil.which("debootstrap") is None:
                raise DockerUnavailable("debootstrap is missing: apt-get install debootstrap")
            with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
                root = Path(scratch) / "root"
                made = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
                                       release, str(root), mirror()], capture_output=True, text=True)
                if made.returncode != 0:
                    raise DockerUnavailable(f"debootstrap {release} failed: {made.stdout[-1500:]}{made.stderr[-1500:]}")
                shutil.rmtree(root / "var" / "cache" / "apt" / "archives", ignore_errors=True)
                partial = archive.with_suffix(".part")
                subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), "."], check=True)
                partial.replace(archive)
        with open(archive, "rb") as data:
            docker("import", "-", tag, stdin=data)
    return tag


def build(tag: str, context: Path, timeout: float = 3600) -> float:
    """docker build of CONTEXT (its Dockerfile) as TAG, with the host's network (apt reaches the
    mirror; containers have no network of their own here). Returns the seconds it took."""
    daemon()
    started = time.monotonic()
    done = docker("build", "--network", "host", "--force-rm", "-t", tag, str(context), check=False, timeout=timeout)
    if done.returncode != 0:
        raise DockerUnavailable(f"docker build {tag} failed:\n{done.stdout[-4000:]}{done.stderr[-3000:]}")
    return time.monotonic() - started


def cached_image(tag: str, key: str, make) -> tuple[str, float | None]:
    """TAG:KEY12 when an image of it exists (KEY: a digest of everything the image is made from),
    else MAKE(TAG:KEY12) builds it (one test at a time) and the old ones of TAG are removed. Returns
    the tag and the build's seconds (None: reused)."""
    daemon()
    full = f"{tag}:{key[:12]}"
    if image_exists(full):
        return full, None
    with locked(f"image-{tag.replace('/', '-')}"):
        if image_exists(full):
            return full, None
        seconds = make(full)
        for line in docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}", tag).stdout.split():
            if line != full:
                docker("image", "rm", "-f", line, check=False)
        docker("image", "prune", "-f", check=False)
    return full, seconds


def run(image: str, command: list[str], *, volumes: dict[Path, str] | None = None, user: str | None = None,
        network: str = "none", options: tuple[str, ...] = (), timeout: float = 1800) -> subprocess.CompletedProcess:
    """COMMAND in a new container of IMAGE with Docker's default security (its seccomp profile and
    capabilities, root inside unless USER), no network (NETWORK "host" gives the host's), VOLUMES
    bound ({host path: container path}); removed afterwards."""
    daemon()
    args = ["run", "--rm", "--network", network]
    for host, inside in (volumes or {}).items():
        args += ["-v", f"{host}:{inside}"]
    if user:
        args += ["--user", user]
    return docker(*args, *options, image, *command, check=False, timeout=timeout)
