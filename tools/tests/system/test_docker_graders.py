#!/usr/bin/env python3
"""Gradescope's and PrairieLearn's graders in real Docker containers with Docker's default security.

    python3 -m tests.system.test_docker_graders [RELEASE]   (from tools/, as root; RELEASE bookworm
                                                             (default) or trixie: the base image)

Debian's dockerd (tests/system/docker.py: overlay2 or vfs, no iptables, no bridge), a base image from
debootstrap (cached outside the clone) with setup.sh's apt-get lines run as a layer of its own
(with_packages: rebuilt from the bare base whenever those lines change), and two images made as
their hosts make them:
- Gradescope: the zip of `./workbook gradescope-autograder --chapters 4` unpacked in
  /autograder/source, setup.sh run while the image is built, run_autograder run per submission in
  a new container (`docker run`, default seccomp profile and capabilities, root inside) with the
  submission in /autograder/submission;
- PrairieLearn: `docker build` of `./workbook prairielearn-grader --chapters 4`'s context, its
  entrypoint run per submission with the submission in /grade/student.
Each image is built once per version of what it is made from (its key) and kept for the next run.

Graded in both, and on the host by `./workbook grade --export gradescope,prairielearn-results`
(bubblewrap there): the reference (full marks), the stubs (0), a submission that passes every visible check
and fails a hidden one (the hidden zoo's inline_sentinel), and a hostile submission: the reference
with attacks in 4.1's function, each of which, when it works, makes the function return a wrong
mask (so it costs the marks of 4.1's checks) or stops its compile:
  spy-run       reads the autograder's source and hidden checks, and the grader's config, when the check runs
  forge         writes results.json itself
  linger        starts a process that outlives its check (fork, and a shell through posix_spawn)
  fill          writes 300 files of 1 MB wherever it can (its folder, /tmp, /dev/shm, /var/tmp)
  network       connects to a port this test listens on (the container has the host's network)
A fifth submission, spy-compile, #includes the hidden checks by their path in the image: 4.1 must
not compile and nothing of them may reach the results. The container's results.json must equal the host's export (every field but the times), hidden
checks included, for all four, and the hostile one is graded once more in the uid box without
Landlock (SCALEBOOK_SANDBOX=uid-no-landlock: where the kernel or the container refuses Landlock, file
modes alone keep the grader's source out of reach); nothing the hostile submission does may show: no connection
arrives, no process of another uid is left, results.json is the grader's a while after grading.
The report names the sandbox that held, the image build times and the seconds per submission.
"""
from __future__ import annotations

import hashlib
import json
import re
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
#include <string>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
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
  // fill: 300 files of 1 MB in each place it can write (each file below the file size limit)
  static char block[1 << 20];
  for (const char* place : {".", "/tmp", "/dev/shm", "/var/tmp"}) {
    long written = 0;
    int made = 0;
    for (; made < 300; ++made) {
      const std::string name = std::string(place) + "/fill-" + std::to_string(made);
      const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0) break;
      const ssize_t n = write(fd, block, sizeof block);
      close(fd);
      if (n <= 0) break;
      written += n;
    }
    for (int i = 0; i <= made; ++i) unlink((std::string(place) + "/fill-" + std::to_string(i)).c_str());
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
    """The five submissions, each a folder of loose exercise files (as a student uploads them)."""
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
    # spy-compile: 4.1's file includes the hidden checks by their path in the image (a compile error
    # either way; the file must not be read: none of its checks' names may reach the results).
    spy = dict(reference)
    spy["ex1_causal_mask.cpp"] = "".join(f'#include "{root}/chapters/{CH4}/hidden_checks.cpp"\n'
                                         for root in ("/autograder/source", "/scalebook")) + reference["ex1_causal_mask.cpp"]
    for name, files in (("reference", reference), ("stubs", stubs), ("hidden-fail", hidden_fail), ("hostile", hostile),
                        ("spy-compile", spy)):
        folder = base / "submissions" / name
        folder.mkdir(parents=True)
        for file, content in files.items():
            (folder / file).write_text(content)
        made[name] = folder
    return made


def host_exports(base: Path, subs: dict[str, Path]) -> dict[str, dict[str, dict]]:
    """./workbook grade --export gradescope,prairielearn-results on the host: {submission: {layout: results}}."""
    out = base / "host"
    staged = {}
    for name, folder in subs.items():
        target = base / "host-submissions" / name / "exercises" / CH4
        target.mkdir(parents=True)
        for file in folder.iterdir():
            shutil.copy(file, target / file.name)
        staged[name] = target.parents[1]
    done = subprocess.run(["/usr/bin/python3", str(WORKBOOK), "grade", "--out", str(out), "--chapters", "4",
                           "--show-hidden", "count", "--export", "gradescope,prairielearn-results", *map(str, staged.values())],
                          capture_output=True, text=True)
    expect(done.returncode in (0, 1), f"the host grades the submissions ({done.returncode})")
    print(done.stdout[-1500:] + done.stderr[-1500:])
    return {name: {layout: json.loads((out / "exports" / kind / name / "results.json").read_text())
                   for layout, kind in (("gradescope", "gradescope"), ("prairielearn", "prairielearn-results"))}
            for name in subs}


def comparable(results: dict) -> dict:
    """RESULTS less what differs between two gradings of the same files: times, and the submission's
    name (the folder the host graded, "submission" in the container)."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("execution_time", "seconds", "submission")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str):  # a time, and the tree's "+changes" (the zip's commit and grade's differ in a dirty tree)
            return re.sub(r"\d+(\.\d+)? s\b", "N s", value).replace("+changes", "")
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


def with_packages(base_image: str, setup: str, work: Path) -> str:
    """BASE_IMAGE with SETUP's (setup.sh's) apt-get lines run, as one cached layer: the grader images
    are built from it and run setup.sh in full, whose apt-get then finds its packages installed (the
    package download was most of an image's build). Its key is the base and those lines, so a
    change of what setup.sh installs builds this layer again from the bare base: the install is
    proven from scratch whenever it changes."""
    lines = [line.strip() for line in setup.splitlines() if line.strip().startswith("apt-get ")]
    expect(len(lines) >= 2, f"setup.sh installs its packages with apt-get: {lines}")
    context = work / "packages-context"
    context.mkdir(exist_ok=True)
    (context / "Dockerfile").write_text(f"FROM {base_image}\nENV DEBIAN_FRONTEND=noninteractive\n"
                                        f"RUN {' && '.join(lines)} && rm -rf /var/lib/apt/lists/*\n")
    key = hashlib.sha256("\0".join([base_image, *lines]).encode()).hexdigest()
    tag, built = docker.cached_image("scalebook-test-grading-packages", key, lambda tag: docker.build(tag, context))
    print(f"the grading packages' layer {tag}: " + (f"built in {built:.0f} s" if built else "reused"), flush=True)
    return tag


def gradescope_image(base_image: str, work: Path) -> tuple[str, float | None]:
    archive = work / "autograder.zip"
    subprocess.run(["/usr/bin/python3", str(WORKBOOK), "gradescope-autograder", str(archive), "--chapters", "4"],
                   check=True, capture_output=True)
    context = work / "gradescope-context"
    with zipfile.ZipFile(archive) as zipped:
        base_image = with_packages(base_image, zipped.read("setup.sh").decode(), work)
        names = zipped.namelist()
        expect(not any(n.startswith("solutions/") or "/bugzoo/" in n for n in names) and
               f"chapters/{CH4}/hidden_checks.cpp" in names,
               "the zip ships the hidden checks and no solutions (nor the bug zoo)")
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
    packaged = with_packages(base_image, (context / "source" / "setup.sh").read_text(), work)
    subprocess.run(["/usr/bin/python3", str(WORKBOOK), "prairielearn-grader", str(context), "--chapters", "4",
                    "--base", packaged], check=True, capture_output=True)
    expect(not (context / "source" / "solutions").exists() and not list(context.rglob("bugzoo")) and
           (context / "source" / "chapters" / CH4 / "hidden_checks.cpp").is_file(),
           "PrairieLearn's build context ships the hidden checks and no solutions (nor the bug zoo)")
    key = folder_digest(context)
    return docker.cached_image("scalebook-test-prairielearn", key, lambda tag: docker.build(tag, context))


DRIVER = r"""
import json, os, shutil, subprocess, sys, time
layout = sys.argv[1]
if layout == "gradescope":
    inbox, results, run = "/autograder/submission", "/autograder/results/results.json", ["/autograder/run_autograder"]
else:
    inbox, results, run = "/grade/student", "/grade/results/results.json", ["/scalebook/prairielearn"]
for name in sorted(os.listdir("/subs")) + ["hostile-no-landlock"]:
    env = dict(os.environ)
    if name == "hostile-no-landlock":  # the uid box's weakest form: as where Landlock cannot be used
        env["SCALEBOOK_SANDBOX"] = "uid-no-landlock"
    shutil.rmtree(inbox, ignore_errors=True)
    shutil.copytree(os.path.join("/subs", name.replace("-no-landlock", "")), inbox)
    if os.path.exists(results):
        os.unlink(results)
    if layout == "prairielearn":
        os.makedirs(os.path.dirname(results), exist_ok=True)
    started = time.monotonic()
    done = subprocess.run(run, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    time.sleep(3)  # a process left by the submission would have rewritten results.json by now
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                status = open(f"/proc/{pid}/status").read()
                cmdline = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
            except OSError:
                continue
            uid = int(status.split("Uid:")[1].split()[0])
            if uid != 0 and "State:\tZ" not in status:
                left.append([pid, uid, cmdline])
    big = [os.path.join(r, f) for top in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/autograder/results",
                                          "/autograder/submission", "/grade/results", "/grade/student")
           for r, _, fs in os.walk(top) for f in fs
           if os.path.isfile(os.path.join(r, f)) and os.path.getsize(os.path.join(r, f)) > (50 << 20)]
    boxes = [b for b in os.listdir("/var/lib/scalebook/boxes") if b.startswith("box-")] \
        if os.path.isdir("/var/lib/scalebook/boxes") else []
    sandbox = ""
    for record in ("/autograder/work/grades/ctest/students/submission/record.json",
                   "/grade/work/grades/ctest/students/submission/record.json"):
        if os.path.exists(record):
            sandbox = json.load(open(record))["sandbox"]
    print("SUBMISSION " + json.dumps({
        "name": name, "seconds": seconds, "exit": done.returncode, "left": left, "big": big, "boxes": boxes,
        "sandbox": sandbox, "results": json.load(open(results)) if os.path.exists(results) else None,
        "output": (done.stdout + done.stderr)[-3000:]}), flush=True)
"""


def grade_in_container(image: str, layout: str, subs: dict[str, Path], work: Path) -> tuple[dict[str, dict], float]:
    """The submissions graded one after another in one new container of IMAGE (as many runs as
    submissions, in one container: a process one leaves behind would meet the next); returns
    {name: what the driver saw} and the container's whole seconds."""
    script = work / "driver.py"
    script.write_text(DRIVER)
    started = time.monotonic()
    done = docker.run(image, ["/usr/bin/python3", "/driver.py", layout],
                      volumes={subs["reference"].parent: "/subs", script: "/driver.py"}, network="host", timeout=1800)
    seconds = time.monotonic() - started
    seen = {}
    for line in done.stdout.splitlines():
        if line.startswith("SUBMISSION "):
            entry = json.loads(line[len("SUBMISSION "):])
            seen[entry["name"]] = entry
    if len(seen) != len(subs) + 1:
        print(done.stdout[-3000:], done.stderr[-3000:])
    return seen, seconds


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
            seen, whole = grade_in_container(image, layout, subs, work)
            times = []
            for name in [*subs, "hostile-no-landlock"]:
                entry = seen.get(name, {"results": None, "left": [], "big": [], "boxes": [], "sandbox": "",
                                        "seconds": 0.0, "output": "(not graded)"})
                results = entry["results"]
                times.append(entry["seconds"])
                want = expected[name.replace("-no-landlock", "")][layout]
                got_score = None if results is None else results.get("score")
                print(f"{layout} {name}: score {got_score} (host {want.get('score')}), run_autograder "
                      f"{entry['seconds']:.1f} s; sandbox: {entry['sandbox']}", flush=True)
                if results is None:
                    print(entry["output"])
                if name == "spy-compile":
                    hidden_names = re.findall(r'TEST_CASE\("([^"]+)"', (ROOT / "chapters" / CH4 / "hidden_checks.cpp").read_text())
                    tests = (results or {}).get("tests", [])
                    # What students read: the messages (Gradescope lists the hidden checks by name, hidden)
                    text = json.dumps([(results or {}).get(k) for k in ("output", "message")] +
                                      [[x.get("output"), x.get("message")] for x in tests])
                    def status(test: dict) -> str:  # Gradescope's status, or PrairieLearn's points
                        if "status" in test:
                            return test["status"]
                        return "passed" if test.get("points") == test.get("max_points") else "failed"
                    ex41 = [status(x) for x in tests if x["name"].startswith("4.1")]
                    ex42 = [status(x) for x in tests if x["name"].startswith("4.2")]
                    expect(results is not None and hidden_names and not any(h in text for h in hidden_names) and
                           not re.search(r"hidden_checks\.cpp:\d", text) and ex41 and set(ex41) == {"failed"} and
                           ex42 and set(ex42) == {"passed"},
                           f"{layout}: spy-compile: 4.1 does not compile, 4.2 keeps its marks, and no line or check "
                           f"name of the hidden checks reaches the results ({set(ex41)}, {set(ex42)})")
                    continue
                expect(results is not None and comparable(results) == comparable(want),
                       f"{layout}: {name}'s results.json equals ./workbook grade's export (hidden checks included)")
                if results is not None and comparable(results) != comparable(want):
                    print(json.dumps(comparable(results))[:3000], "\n---\n", json.dumps(comparable(want))[:3000])
                expect(not entry["left"], f"{layout}: {name} leaves no process of a box behind: {entry['left']}")
                expect(not entry["big"], f"{layout}: {name} leaves no large file behind: {entry['big']}")
                expect(not entry["boxes"], f"{layout}: {name} leaves no box folder behind: {entry['boxes']}")
                expect(entry["sandbox"].startswith("uid box") and
                       ("no Landlock" in entry["sandbox"]) == name.endswith("no-landlock"),
                       f"{layout}: {name} was graded in the uid box (bubblewrap is refused in Docker's default "
                       "security)" + (", without Landlock as asked" if name.endswith("no-landlock") else ""))
                if name.startswith("hostile"):
                    full = expected["reference"][layout]["score"]
                    expect(results is not None and results.get("score") == full,
                           f"{layout}: every attack of the hostile submission failed (spy-run, forge, linger, fill, "
                           f"network): it keeps full marks")
            scores = {name: (seen.get(name) or {}).get("results") or {} for name in ("reference", "hidden-fail")}
            expect(scores["hidden-fail"].get("score") is not None and
                   scores["hidden-fail"].get("score") < scores["reference"].get("score", 0),
                   f"{layout}: the submission that passes every visible check loses the hidden check's marks")
            expect(not connections, f"{layout}: no connection reached the host's port {PORT}")
            print(f"{layout}: {sum(times[:-1]) / (len(times) - 1):.1f} s per submission in the container (its "
                  f"grader's own run; {times[-1]:.1f} s for the hostile one without Landlock, a new kit mode), "
                  f"{whole:.0f} s for the container with all {len(times)}", flush=True)
    finally:
        listener.close()
        shutil.rmtree(work, ignore_errors=True)
    return finish("the Gradescope and PrairieLearn images grade as ./workbook grade does, in Docker's default security")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
