#!/usr/bin/env python3
"""Gradescope's and PrairieLearn's graders in real Docker containers with Docker's default security.

    python3 -m tests.system.test_docker_graders [RELEASE]   (from tools/, as root; RELEASE bookworm
                                                             (default) or trixie: the base image)

Debian's dockerd (tests/system/docker.py: vfs, no iptables, no bridge), a base image from
debootstrap (cached outside the clone), and two images made as their hosts make them:
- Gradescope: the zip of `./workbook gradescope-autograder --chapters 4` unpacked in
  /autograder/source, setup.sh run while the image is built, run_autograder run per submission in
  a new container (`docker run`, default seccomp profile and capabilities, root inside) with the
  submission in /autograder/submission;
- PrairieLearn: `docker build` of `./workbook prairielearn-grader --chapters 4`'s context, its
  entrypoint run per submission with the submission in /grade/student.
Each image is built once per version of what it is made from (its key) and kept for the next run.

Graded in both, and on the host by `./workbook grade --export gradescope,prairielearn` (bubblewrap
there): the reference (full marks), the stubs (0), a submission that passes every visible check
and fails a hidden one (the hidden zoo's inline_sentinel), and a hostile submission: the reference
with attacks in 4.1's function, each of which, when it works, makes the function return a wrong
mask (so it costs the marks of 4.1's checks) or stops its compile:
  spy-compile   #includes the autograder's source and hidden checks (compile error when readable)
  spy-run       reads them, and the grader's config, when the check runs
  forge         writes results.json itself
  linger        starts a process that outlives its check (fork, and a shell through posix_spawn)
  fill          writes 300 MB wherever it can (the box's folder, /tmp, /dev/shm, /var/tmp)
  network       connects to a port this test listens on (the container has the host's network)
The container's results.json must equal the host's export (every field but the times), hidden
checks included, for all four; nothing the hostile submission does may show: no connection
arrives, no process of another uid is left, results.json is the grader's a while after grading.
The report names the sandbox that held, the image build times and the seconds per submission.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from tests.harness import ROOT, WORKBOOK, expect, finish
from tests.system import docker

CH4 = "04-causal-masking"
PORT = 47391  # the network attack's target, on the host's loopback

HOSTILE_INCLUDES = r'''
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#if __has_include("/autograder/source/chapters/04-causal-masking/hidden_checks.cpp") || \
    __has_include("/scalebook/chapters/04-causal-masking/hidden_checks.cpp") || \
    __has_include("/autograder/source/autograder.json") || __has_include("/scalebook/autograder.json")
#error "spy-compile: the grader's source is readable at compile time"
#endif
extern "C" char** environ;
'''
HOSTILE = r'''
namespace {
bool attacks_worked() {
  bool worked = false;
  // spy-run: the hidden checks, the grader's config
  for (const char* secret : {"/autograder/source/chapters/04-causal-masking/hidden_checks.cpp",
                             "/scalebook/chapters/04-causal-masking/hidden_checks.cpp",
                             "/autograder/source/autograder.json", "/scalebook/autograder.json"}) {
    if (FILE* f = std::fopen(secret, "r")) { std::fclose(f); worked = true; }
  }
  // forge: results.json written by the submission
  for (const char* results : {"/autograder/results/results.json", "/grade/results/results.json"}) {
    if (FILE* f = std::fopen(results, "w")) { std::fputs("{\"score\": 999}", f); std::fclose(f); worked = true; }
  }
  // linger: a process that outlives the check
  const pid_t child = fork();
  if (child == 0) { sleep(600); _exit(0); }
  if (child > 0) worked = true;
  pid_t spawned = -1;
  char sh[] = "/bin/sh", flag[] = "-c", script[] = "sleep 600 &";
  char* args[] = {sh, flag, script, nullptr};
  if (posix_spawn(&spawned, "/bin/sh", nullptr, nullptr, args, environ) == 0) worked = true;
  // fill: 300 MB wherever it can (past the file size limit a write fails instead of killing it)
  signal(SIGXFSZ, SIG_IGN);
  static char block[1 << 20];
  for (const char* place : {"fill", "/tmp/fill2", "/dev/shm/fill", "/var/tmp/fill"}) {
    const int fd = open(place, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) continue;
    long written = 0;
    for (int i = 0; i < 300; ++i) {
      const ssize_t n = write(fd, block, sizeof block);
      if (n <= 0) break;
      written += n;
    }
    close(fd);
    unlink(place);
    if (written > (100l << 20)) worked = true;
  }
  // network: the test's port on the loopback
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(PORT_NUMBER);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (connect(s, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) worked = true;
    close(s);
  }
  return worked;
}
}  // namespace
'''


def solutions() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((ROOT / "solutions" / CH4).glob("ex*.cpp"))}


def submissions(base: Path) -> dict[str, Path]:
    """The four submissions, each a folder of loose exercise files (as a student uploads them)."""
    made = {}
    reference = solutions()
    stubs = {p.name: p.read_text() for p in sorted((ROOT / "exercises" / CH4).glob("ex*.cpp"))}
    mutated = base / "mutated.cpp"
    mutant = ROOT / "chapters" / CH4 / "bugzoo" / "hidden" / "inline_sentinel.mutant"
    subprocess.run([sys.executable, str(ROOT / "cmake" / "apply_mutant.py"), str(mutant), str(ROOT / "solutions" / CH4),
                    str(mutated)], check=True)
    hidden_fail = dict(reference, **{"ex3_causal_attention.cpp": mutated.read_text()})
    hostile = dict(reference)
    text = hostile["ex1_causal_mask.cpp"]
    anchor = text.index("BoolMatrix causal_mask(")
    body = text.index("{", anchor) + 1
    hostile["ex1_causal_mask.cpp"] = (HOSTILE_INCLUDES + text[:anchor] + HOSTILE.replace("PORT_NUMBER", str(PORT))
                                      + text[anchor:body]
                                      + "\n  if (attacks_worked()) return BoolMatrix::Zero(1, 1);\n" + text[body:])
    for name, files in (("reference", reference), ("stubs", stubs), ("hidden-fail", hidden_fail), ("hostile", hostile)):
        folder = base / "submissions" / name
        folder.mkdir(parents=True)
        for file, content in files.items():
            (folder / file).write_text(content)
        made[name] = folder
    return made


def host_exports(base: Path, subs: dict[str, Path]) -> dict[str, dict[str, dict]]:
    """./workbook grade --export gradescope,prairielearn on the host: {submission: {export: results}}."""
    out = base / "host"
    staged = {}
    for name, folder in subs.items():
        target = base / "host-submissions" / name / "exercises" / CH4
        target.mkdir(parents=True)
        for file in folder.iterdir():
            shutil.copy(file, target / file.name)
        staged[name] = target.parents[1]
    done = subprocess.run(["/usr/bin/python3", str(WORKBOOK), "grade", "--out", str(out), "--chapters", "4",
                           "--show-hidden", "count", "--export", "gradescope,prairielearn", *map(str, staged.values())],
                          capture_output=True, text=True)
    expect(done.returncode in (0, 1), f"the host grades the four submissions ({done.returncode})")
    print(done.stdout[-1500:] + done.stderr[-1500:])
    return {name: {kind: json.loads((out / "exports" / kind / name / "results.json").read_text())
                   for kind in ("gradescope", "prairielearn")} for name in subs}


def comparable(results: dict) -> dict:
    """RESULTS less what differs between two gradings of the same files: times."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("execution_time", "seconds")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str):
            import re
            return re.sub(r"\d+(\.\d+)? s\b", "N s", value)
        return value
    return strip(results)


def zip_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def gradescope_image(base_image: str, work: Path) -> tuple[str, float | None]:
    archive = work / "autograder.zip"
    subprocess.run(["/usr/bin/python3", str(WORKBOOK), "gradescope-autograder", str(archive), "--chapters", "4"],
                   check=True, capture_output=True)
    context = work / "gradescope-context"
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():  # as Gradescope unpacks it: the modes the zip gives
            target = context / "source" / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zipped.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)
    (context / "Dockerfile").write_text(
        f"FROM {base_image}\n"
        "COPY source /autograder/source\n"
        "RUN cp /autograder/source/run_autograder /autograder/run_autograder && "
        "/autograder/source/setup.sh && rm -rf /var/lib/apt/lists/*\n")
    key = hashlib.sha256(f"{base_image}\0{zip_digest(archive)}".encode()).hexdigest()
    return docker.cached_image("scalebook-test-gradescope", key, lambda tag: docker.build(tag, context))


def prairielearn_image(base_image: str, work: Path) -> tuple[str, float | None]:
    context = work / "prairielearn-context"
    subprocess.run(["/usr/bin/python3", str(WORKBOOK), "prairielearn-grader", str(context), "--chapters", "4",
                    "--base", base_image], check=True, capture_output=True)
    key = folder_digest(context)
    return docker.cached_image("scalebook-test-prairielearn", key, lambda tag: docker.build(tag, context))


CHECK_AFTER = r'''
import json, os, sys, time
time.sleep(3)
left = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            status = open(f"/proc/{pid}/status").read()
        except OSError:
            continue
        uid = int(status.split("Uid:")[1].split()[0])
        if uid != 0 and "State:\tZ" not in status:
            left.append((pid, uid, open(f"/proc/{pid}/cmdline").read().replace("\0", " ")))
print("LEFT " + json.dumps(left))
results = sys.argv[1]
print("RESULTS " + (open(results).read().replace("\n", " ") if os.path.exists(results) else "none"))
big = [os.path.join(r, f) for top in ("/tmp", "/var/tmp", "/dev/shm", "/autograder", "/grade")
       for r, _, fs in os.walk(top) for f in fs
       if os.path.isfile(os.path.join(r, f)) and os.path.getsize(os.path.join(r, f)) > (50 << 20)]
print("BIG " + json.dumps(big))
for record in ("/autograder/work/grades/ctest/students/submission/record.json",
               "/grade/work/grades/ctest/students/submission/record.json"):
    if os.path.exists(record):
        print("SANDBOX " + json.load(open(record))["sandbox"])
'''


def grade_in_container(image: str, layout: str, submission: Path, work: Path) -> tuple[dict | None, dict, float]:
    """One submission graded in a new container of IMAGE: (its results.json, what was left, seconds)."""
    script = work / "check_after.py"
    script.write_text(CHECK_AFTER)
    if layout == "gradescope":
        volumes = {submission: "/autograder/submission", script: "/check_after.py"}
        command = "/autograder/run_autograder; python3 /check_after.py /autograder/results/results.json"
    else:
        volumes = {submission: "/grade/student", script: "/check_after.py"}
        command = "mkdir -p /grade/results; /scalebook/prairielearn; python3 /check_after.py /grade/results/results.json"
    started = time.monotonic()
    done = docker.run(image, ["/bin/sh", "-c", command], volumes=volumes, network="host", timeout=900)
    seconds = time.monotonic() - started
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines()
             if line.split(" ", 1)[0] in ("LEFT", "RESULTS", "BIG", "SANDBOX") and " " in line}
    text = lines.get("RESULTS", "none")
    results = json.loads(text) if text != "none" else None
    if results is None:
        print(done.stdout[-3000:], done.stderr[-2000:])
    sandbox = lines.get("SANDBOX", "")
    return results, {"left": json.loads(lines.get("LEFT", "[]")), "big": json.loads(lines.get("BIG", "[]")),
                     "output": done.stdout, "sandbox": sandbox}, seconds


def main(argv: list[str]) -> int:
    release = argv[0] if argv else "bookworm"
    try:
        docker.daemon()
        base_image = docker.base_image(release)
    except docker.DockerUnavailable as error:
        print(f"SKIP: {error}")
        return 77
    connections = []
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(16)
    listener.settimeout(1)

    def accept() -> None:
        while listener.fileno() >= 0:
            try:
                connections.append(listener.accept())
            except (socket.timeout, OSError):
                if listener.fileno() < 0:
                    return
    threading.Thread(target=accept, daemon=True).start()
    work = Path(tempfile.mkdtemp(prefix="docker-graders-", dir=docker.CACHE))
    try:
        subs = submissions(work)
        expected = host_exports(work, subs)
        for layout, make in (("gradescope", gradescope_image), ("prairielearn", prairielearn_image)):
            image, built = make(base_image, work)
            print(f"{layout} image {image}: " + (f"built in {built:.0f} s" if built else "reused (built before)"),
                  flush=True)
            times = []
            for name, folder in subs.items():
                results, left, seconds = grade_in_container(image, layout, folder, work)
                times.append(seconds)
                want = expected[name][layout]
                got_score = None if results is None else results.get("score")
                print(f"{layout} {name}: score {got_score} (host {want.get('score')}), {seconds:.1f} s", flush=True)
                expect(results is not None and comparable(results) == comparable(want),
                       f"{layout}: {name}'s results.json equals ./workbook grade --export {layout}'s (hidden checks included)")
                if results is not None and comparable(results) != comparable(want):
                    print(json.dumps(comparable(results))[:3000], "\n---\n", json.dumps(comparable(want))[:3000])
                expect(not left["left"], f"{layout}: {name} leaves no process of a box behind: {left['left']}")
                expect(not left["big"], f"{layout}: {name} leaves no large file behind: {left['big']}")
                if left["sandbox"]:
                    print(f"{layout} {name}: the sandbox that held: {left['sandbox']}")
                if name == "hostile":
                    full = expected["reference"][layout]["score"]
                    expect(results is not None and results.get("score") == full,
                           f"{layout}: every attack of the hostile submission failed (spy-compile, spy-run, forge, "
                           f"linger, fill, network): it keeps full marks")
            expect(not connections, f"{layout}: no connection reached the host's port {PORT}")
            print(f"{layout}: {sum(times) / len(times):.1f} s per submission in a new container (4 submissions)")
    finally:
        listener.close()
        shutil.rmtree(work, ignore_errors=True)
    return finish("the Gradescope and PrairieLearn images grade as ./workbook grade does, in Docker's default security")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
