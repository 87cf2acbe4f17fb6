#!/usr/bin/env python3
"""The grader attacked, round three: each class of attack a motivated student found, tried again.

    python3 -m tests.grading.test_grading_attacks_3 [CLASS...]   (from tools/; all classes, or
        some of: objects intake names bounds slow slurm modes text)

1. objects  A grade depends on that student's files and the instructor's tree only: two students
            share a file that includes a sibling they do not share; graded in either order and
            after --resume into the same folder, each gets what their own files earn; and
            `./workbook check` gives that exercise the verdict grading gives it.
2. intake   A submission folder raced during intake (a chapter folder swapped for a symlink to a
            folder only the grader may read, an exercise file swapped for a FIFO, FIFOs in place
            of the sources) never makes the grader read elsewhere, and never holds the run.
3. names    Submissions named like the grader's own files (the tree's plan, the temporary files
            of grades.csv and the class page, the Slurm folder, the fallback check binary) are
            graded like any other, and no grader file lands in a student's folder.
4. bounds   A box that prints 600 MB: the trusted side holds its head and tail, not all of it.
5. slow     Correct code at 0.25 s of CPU per call, beside CPU hogs, keeps every mark under small
            check and submission limits; an endless loop is timed_out by the call's CPU limit and
            a call that sleeps by the call's wall limit, each named.
6. slurm    (in test_grading_slurm.py, on the Slurm it starts) a class of N runs as N array tasks;
            here: the tasks a class is cut into, for several MaxArraySize values.
7. modes    The output folder and all it holds are the grading user's alone (0700 folders, 0600
            files) whatever the umask, graded as root and as uid 65534.
8. text     One rule for a submission's text: grade_check.cpp, grading.py and the pages escape the
            same characters the same way; a message's line break forges no line in ctest's
            output; zero-width and bidirectional characters reach neither junit.xml nor CTest's
            output raw; boxes see no host path of the output folder or of a classmate's copy.

Every class failed on db67869 (SCALEBOOK_GRADER=OTHER/tools/grade.py, or OTHER/tools/workbook.py,
grades with another tree's grader, to show it)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.harness import ROOT, course_chapter, expect, finish
from tests.grading.test_grading_attacks import patch_body, processes_mentioning, throwing

# The course's chapter attacked here, by the functions the attacks patch (tests/harness.py says why),
# read from this tree's manifests before another grader's modules are imported.
SCORES = course_chapter("dot_scores", "scaled_scores", "softmax_rows", "row_entropy")
CH3 = SCORES.folder
DOT, SCALED = SCORES.file("dot_scores"), SCORES.file("scaled_scores")
SOFTMAX, ENTROPY = SCORES.file("softmax_rows"), SCORES.file("row_entropy")
DOT_ID, SCALED_ID = SCORES.id("dot_scores"), SCORES.id("scaled_scores")
SOFTMAX_ID, ENTROPY_ID = SCORES.id("softmax_rows"), SCORES.id("row_entropy")

# The grader attacked: this tree's (tools/workbook.py grade), or another's
# (SCALEBOOK_GRADER=OTHER/tools/workbook.py, or an older tree's tools/grade.py); its modules (the
# text rule, the sandbox, the steps) are the ones tested.
GRADER = Path(os.environ.get("SCALEBOOK_GRADER", ROOT / "tools" / "workbook.py"))
GRADE = [str(GRADER), "grade"] if GRADER.name == "workbook.py" else [str(GRADER)]
OTHER_TOOLS = str(GRADER.parent) if GRADER.parent != ROOT / "tools" else None
if OTHER_TOOLS:  # the other tree's modules (scalebook), this tree's tests
    sys.path.insert(0, OTHER_TOOLS)
    for module in [name for name in sys.modules if name.split(".")[0] == "scalebook"]:
        del sys.modules[module]  # this tree's, imported to read the manifests above
NOBODY = 65534
UID_BOX = os.environ.get("SCALEBOOK_SANDBOX") == "uid"  # the suite in the uid box (grading/sandbox.py)


def grade(out: Path, submissions: list[Path], *options: str, user: int | None = None, umask: int | None = None,
          timeout: float = 1500) -> tuple[int | None, str]:
    """Runs the grader; (exit status, output), the status None when it ran past TIMEOUT (it is then
    stopped with every process it started)."""
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] if user is not None else []

    def prepare() -> None:
        if umask is not None:
            os.umask(umask)

    process = subprocess.Popen([*prefix, "/usr/bin/python3", *GRADE, "--out", str(out), *options,
                                *map(str, submissions)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True, preexec_fn=prepare)
    try:
        output, _ = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        code = None
    text = output.decode(errors="replace")
    print(text[-4000:], flush=True)
    return code, text


def student_folder(out: Path, name: str) -> Path:
    """Where a submission's reports are: DIR/students/NAME (an older grader: DIR/NAME)."""
    return out / "students" / name if (out / "students" / name).is_dir() else out / name


def report(out: Path, name: str) -> dict:
    try:
        return json.loads((student_folder(out, name) / "report.json").read_text())
    except (OSError, ValueError):
        return {"tests": [], "score": None}


def statuses(rep: dict, exercise: str) -> list[str]:
    return [t["status"] for t in rep["tests"] if t["exercise"] == exercise]


def from_tree(into: Path, tree: str, chapters: tuple[str, ...] = (CH3,)) -> Path:
    for chapter in chapters:
        shutil.copytree(ROOT / tree / chapter, into / chapter)
    return into


def give_to(path: Path, user: int) -> None:
    for item in [path, *path.rglob("*")]:
        os.chown(item, user, user, follow_symlinks=False)


def open_path(path: Path) -> None:
    """Every folder above PATH enterable by all (a temporary folder is its owner's alone)."""
    for folder in [path, *path.parents]:
        if folder != Path("/"):
            folder.chmod(folder.stat().st_mode | 0o111)


# --- 1. objects -----------------------------------------------------------------------------------

SIBLING_SETTING = """// A setting this file shares with its sibling """ + Path(SCALED).name + """, which includes this file for it.
#define SCALE_BY_SQRT {value}
#ifndef SIBLING_SETTING_ONLY
"""
SIBLING_USER = f"#define SIBLING_SETTING_ONLY\n#include \"{Path(ENTROPY).name}\"\n#undef SIBLING_SETTING_ONLY\n"


def sibling_submission(into: Path, value: int) -> Path:
    """The chapter solved, but scaled_scores divides by sqrt(d_k) only where its sibling row_entropy's
    file says so."""
    from_tree(into, "solutions")
    entropy = into / ENTROPY
    entropy.write_text(SIBLING_SETTING.format(value=value) + entropy.read_text() + "#endif\n")
    scaled = into / SCALED
    text = scaled.read_text().replace("  return dot_scores(q, k) / std::sqrt(d_k);",
                                      "#if SCALE_BY_SQRT\n  return dot_scores(q, k) / std::sqrt(d_k);\n#else\n"
                                      "  return dot_scores(q, k) / d_k;\n#endif")
    assert "#if SCALE_BY_SQRT" in text
    scaled.write_text(SIBLING_USER + text)
    return into


def objects(base: Path) -> None:
    """Two students whose scaled_scores files are identical and include their own row_entropy's for a setting: right
    (divides by sqrt(d_k)) and wrong (by d_k). The wrong one graded first, then the right one
    alone and --resume with the wrong one into the same folder: each keeps its own verdict."""
    folder = base / "objects"
    right = sibling_submission(folder / "subs" / "right", 1)
    wrong = sibling_submission(folder / "subs" / "wrong", 0)
    expect((right / SCALED).read_bytes() == (wrong / SCALED).read_bytes(),
           f"objects: the two {SCALED_ID} files are byte for byte the same")

    def verdicts(out: Path) -> dict[str, bool]:
        return {name: all(s == "passed" for s in statuses(report(out, name), SCALED_ID)) and
                bool(statuses(report(out, name), SCALED_ID)) for name in ("right", "wrong")}

    first = folder / "first"
    grade(first, [wrong, right], "--chapters", SCORES.number, "--jobs", "1")
    seen = verdicts(first)
    expect(seen == {"right": True, "wrong": False},
           f"objects: graded after the wrong one, the right {SCALED_ID} passes and the wrong one fails ({seen})")
    later = folder / "later"
    grade(later, [right], "--chapters", SCORES.number, "--jobs", "1")
    code, text = grade(later, [right, wrong], "--chapters", SCORES.number, "--jobs", "1", "--resume")
    seen = verdicts(later)
    expect("already graded" in text and seen == {"right": True, "wrong": False},
           f"objects: --resume into a folder holding the right one's objects grades the wrong one on its own "
           f"files ({seen})")
    agree_with_check(folder, verdicts(first))


def agree_with_check(folder: Path, graded: dict[str, bool]) -> None:
    """`./workbook check N` in a student's copy with each submission's chapter N gives scaled_scores's
    exercise the verdict grading gave it."""
    from tests.student.test_student_loop import student_tree
    (folder / "student").mkdir()
    tree = student_tree(str(folder / "student"))
    for name in ("right", "wrong"):
        shutil.rmtree(tree / "exercises" / CH3)
        # Saved now, as a student's editor would (copy2's old times would look older than the build).
        shutil.copytree(folder / "subs" / name / CH3, tree / "exercises" / CH3, copy_function=shutil.copyfile)
        result = subprocess.run([str(tree / "workbook"), "--timeout", "5", "check", SCORES.number], cwd=tree,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL, timeout=900, env=dict(os.environ, NO_COLOR="1"))
        print(result.stdout[-3000:], flush=True)
        line = next((l.strip() for l in result.stdout.splitlines() if re.match(rf"^\s*[✓✗] {re.escape(SCALED_ID)}\b", l)), "")
        expect(line.startswith("✓" if graded.get(name) else "✗"),
               f"objects: ./workbook check gives {name}'s {SCALED_ID} grading's verdict "
               f"({'passed' if graded.get(name) else 'failed'}): {line!r}")


# --- 2. intake ------------------------------------------------------------------------------------

RACER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE, AT_FDCWD = 2, -100
a, b, seconds = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])
until = time.monotonic() + seconds
while time.monotonic() < until:
    for _ in range(1000):
        libc.syscall(316, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)  # renameat2 on x86_64
"""
# Waits until the grader opens a file in WATCHED (inotify), then swaps A and B once.
SWAPPER = r"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20)  # IN_OPEN
print("watching", flush=True)
os.read(fd, 4096)
libc.syscall(316, -100, sys.argv[2].encode(), -100, sys.argv[3].encode(), 2)  # renameat2, RENAME_EXCHANGE
"""


def intake(base: Path) -> None:
    """As root, grading students who own their folders (uid 65534) and race intake. One swaps its
    exercises folder for a symlink to a folder only root may read (the solutions, marked) the moment
    the grader opens its first file; one swaps its chapter folder with such a symlink, and one its
    dot_scores file with a FIFO, again and again; one hands in FIFOs for every file. The run ends in
    bounded time, no byte of the private folder is read, each racer is graded on what it holds
    (the stubs: 0), and every FIFO is refused."""
    if os.geteuid() != 0 or os.uname().machine != "x86_64":
        print("skip: the intake race needs root (a grader that can read more than the students) on x86_64")
        return
    folder = base / "intake"
    subs = folder / "subs"
    private = folder / "private"
    from_tree(private / "exercises", "solutions")
    for source in private.rglob("*.cpp"):
        source.write_text(source.read_text() + "// private: only the grader may read this file\n")
    private.chmod(0o700)
    secrets = {p.read_bytes() for p in private.rglob("*.cpp")}
    honest = from_tree(subs / "honest", "solutions")
    swapper = subs / "swapper"
    from_tree(swapper / "exercises", "exercises")
    # Each of its files just under 1 MiB (comments): reading them takes the grader milliseconds, time
    # enough for the swapper to wake up after the first open, even on a busy machine.
    for source in (swapper / "exercises" / CH3).glob("*.cpp"):
        text = source.read_text()
        source.write_text(text + ("// " + "x" * 76 + "\n") * ((1000000 - len(text)) // 80))
    (swapper / "decoy").symlink_to(private / "exercises")
    folder_racer = from_tree(subs / "folder-racer", "exercises")
    (folder_racer / "decoy").symlink_to(private / "exercises" / CH3)
    fifo_racer = from_tree(subs / "fifo-racer", "exercises")
    os.mkfifo(fifo_racer / CH3 / "fifo")
    fifos = subs / "fifos"
    (fifos / CH3).mkdir(parents=True)
    for source in (ROOT / "exercises" / CH3).glob("*.cpp"):
        os.mkfifo(fifos / CH3 / source.name)
    open_path(subs)
    for sub in (honest, swapper, folder_racer, fifo_racer, fifos):
        give_to(sub, NOBODY)
    as_student = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "/usr/bin/python3", "-c"]
    racers = [subprocess.Popen([*as_student, RACER, str(a), str(b), "900"])
              for a, b in ((folder_racer / CH3, folder_racer / "decoy"),
                           (fifo_racer / DOT, fifo_racer / CH3 / "fifo"))]
    racers.append(subprocess.Popen([*as_student, SWAPPER, str(swapper / "exercises" / CH3), str(swapper / "exercises"),
                                    str(swapper / "decoy")], stdout=subprocess.PIPE))
    racers[-1].stdout.readline()
    out = folder / "grades"
    try:
        started = time.monotonic()
        code, _ = grade(out, [honest, swapper, folder_racer, fifo_racer, fifos], "--chapters", SCORES.number, timeout=600)
        took = time.monotonic() - started
    finally:
        for racer in racers:
            racer.kill()
            racer.wait()
    expect(code == 0, f"intake: the raced run finishes (exit {code}, {took:.0f} s)")
    leaked = [str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.is_symlink()
              and p.stat().st_size < 1 << 20 and p.read_bytes() in secrets]
    expect(not leaked, f"intake: no file of the folder only root may read was taken ({leaked[:3]})")
    for name in ("swapper", "folder-racer", "fifo-racer", "fifos"):
        rep = report(out, name)
        expect(rep.get("score") == 0, f"intake: {name} is graded on what it holds (the stubs): {rep.get('score')}")
    expect(report(out, "honest").get("score") == report(out, "honest").get("max_score", -1),
           "intake: the honest classmate keeps full marks")
    fifo_refused = report(out, "fifos").get("refused_files", [])
    expect(len(fifo_refused) == 5 and all("not a regular file" in f for f in fifo_refused),
           f"intake: every FIFO is refused and listed ({fifo_refused[:2]})")


def intake_bound(base: Path) -> None:
    """Reading one submission's files has a time bound: a read that never returns (a hung network
    filesystem, which no test can make) costs that submission, refused within the bound, and a
    submission whose files take longer than the bound to read one after another is refused too."""
    try:
        from scalebook.course import resolve_chapter
        from scalebook.grading import intake as module
    except ImportError as error:
        expect(False, f"intake: the grader's intake has a time bound ({error})")
        return
    folder = from_tree(base / "bound" / "slow-disk", "exercises")
    chapters = [resolve_chapter(SCORES.number)]
    reader = module.read_sources
    module.read_sources = lambda *args: time.sleep(3600)
    started = time.monotonic()
    try:
        module.take_sources(folder, None, chapters, seconds=1)
        said = ""
    except module.Refused as error:
        said = str(error)
    finally:
        module.read_sources = reader
    took = time.monotonic() - started
    expect("could not be read within 1 s" in said and took < 10,
           f"intake: a read that never returns is refused after the bound ({said!r}, {took:.1f} s)")
    try:
        module.read_sources(folder, chapters, time.monotonic() - 1)
        said = ""
    except module.Refused as error:
        said = str(error)
    expect("could not be read within" in said, f"intake: reading past the bound is refused ({said!r})")


# --- 3. names and 7. modes --------------------------------------------------------------------------

def grader_names() -> list[str]:
    """Names of files and folders a grading run writes beside the students' (see test's doc)."""
    source = check_source()
    check = hashlib.sha256(source.read_bytes()).hexdigest()[:16] if source.is_file() else "0" * 16
    return ["run.json", "grades.csv.part", "index.html.part", "slurm", "kit", "students", f"grade_check-{check}"]


def names_and_modes(base: Path, user: int | None) -> None:
    """Submissions named like the grader's files beside an honest one, graded with umask 022 (as
    root, or as USER): every one is graded, its folder holds its own reports only, grades.csv and
    the class page list them all, and nothing in the output folder is open to another user."""
    who = "as root" if user is None else f"as uid {user}"
    folder = base / ("names" if user is None else f"names-{user}")
    subs = folder / "subs"
    names = grader_names()
    made = [from_tree(subs / name, "solutions") for name in ["honest", *names]]
    out = folder / "grades"
    if user is not None:
        open_path(folder)
        give_to(folder, user)
    code, _ = grade(out, made, "--chapters", SCORES.number, user=user, umask=0o022)
    expect(code == 0, f"names {who}: the run finishes (exit {code})")
    maximum = report(out, "honest").get("max_score")
    for name in ["honest", *names]:
        rep = report(out, name)
        expect(rep.get("score") == maximum and maximum, f"names {who}: {name} is graded like anyone ({rep.get('score')})")
        own = {p.name for p in (out / "students" / name).iterdir()} if (out / "students" / name).is_dir() else set()
        expect(own <= {"report.json", "junit.xml", "feedback.html"} and "report.json" in own,
               f"names {who}: DIR/students/{name} holds its reports and nothing of the grader's ({sorted(own)[:6]})")
    try:
        rows = (out / "grades.csv").read_text().splitlines()[1:]
    except OSError:
        rows = []
    expect(sorted(r.split(",")[0] for r in rows) == sorted(["honest", *names]),
           f"names {who}: grades.csv has one row per submission ({len(rows)})")
    expect((out / "index.html").is_file(), f"names {who}: the class page is written")
    open_to_others = [f"{oct(p.lstat().st_mode & 0o777)} {p.relative_to(out)}" for p in [out, *out.rglob("*")]
                      if not p.is_symlink() and p.lstat().st_mode & 0o077]
    expect(not open_to_others, f"modes {who}: everything in the output folder is the grading user's alone "
                               f"({len(open_to_others)} open to others: {open_to_others[:4]})")


# --- 4. bounds ------------------------------------------------------------------------------------

BOUNDED_PROBE = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
try:
    from scalebook.grading import sandbox
except ImportError:  # an older tree
    from scalebook import sandbox
folder = Path(sys.argv[2])
limits = sandbox.Limits(cpu_seconds=60)
command = sandbox.write_arguments(folder / "box", sandbox.box_arguments(
    [], ["/bin/sh", "-c", "echo FIRST; /usr/bin/yes 'a compiler error line' | /usr/bin/head -c 600000000; echo; echo LAST"],
    limits))
code, output = sandbox.run(folder / "box", command, limits, 300)
# This process's peak resident memory (VmHWM: since its exec; ru_maxrss would count its parent's).
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(code, len(output), output[:6] == b"FIRST\n", output.rstrip().endswith(b"LAST"), peak // 1024)
"""


def bounds(base: Path) -> None:
    """sandbox.run on a box that prints 600 MB: it keeps the head and the tail, within 100 MB."""
    folder = base / "bounds"
    folder.mkdir(parents=True)
    result = subprocess.run(["/usr/bin/python3", "-c", BOUNDED_PROBE, str(GRADER.parent), str(folder)],
                            capture_output=True, text=True, timeout=600)
    print(result.stdout, result.stderr[-2000:])
    words = result.stdout.split()
    ok = len(words) == 5 and words[0] == "0"
    expect(ok and words[2] == "True" and words[3] == "True",
           f"bounds: the box's first and last lines are kept ({words[:4]})")
    expect(ok and int(words[1]) < 1 << 20 and int(words[4]) < 100,
           f"bounds: 600 MB of output held within 100 MB ({words[1] if ok else '?'} bytes kept, "
           f"{words[4] if ok else '?'} MB resident)")


# --- 5. slow --------------------------------------------------------------------------------------

def spin_every_call(into: Path, seconds: float) -> None:
    for source in sorted(into.glob("0*/ex*.cpp")):
        text = source.read_text()
        body = re.search(r"^(?!namespace)\S[^\n;]*\([^;{]*\)\s*\{$", text, re.M)
        source.write_text("#include <ctime>\n" + text[:body.end()] +
                          f"\n  {{ const auto until = std::clock() + std::clock_t(CLOCKS_PER_SEC * {seconds}); "
                          "while (std::clock() < until) {} }" + text[body.end():])


def slow(base: Path) -> None:
    """Correct code at 0.25 s of CPU per call (eight times under --call-cpu 2), graded while a process
    per core spins beside it, with a check limit of 6 s and a submission budget of 30 s that its
    calls' CPU alone exceeds (the chapter's calls take about a minute of CPU): every mark kept.
    Beside it, an endless loop in softmax_rows is timed_out: call CPU, and a call of row_entropy that sleeps is
    timed_out: call wall (--timeout 4), each named, the other exercises passing."""
    folder = base / "slow"
    honest = from_tree(folder / "subs" / "honest-slow", "solutions")
    spin_every_call(honest, 0.25)
    looper = from_tree(folder / "subs" / "looper", "solutions")
    patch_body(looper / SOFTMAX, "Matrix softmax_rows(", "for (volatile int i = 0;; i = i + 1) {}", "")
    sleeper = from_tree(folder / "subs" / "sleeper", "solutions")
    patch_body(sleeper / ENTROPY, "Vector row_entropy(",
               "std::this_thread::sleep_for(std::chrono::hours(1));", "#include <chrono>\n#include <thread>")
    hogs = [subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        code, _ = grade(folder / "grades", [honest, looper, sleeper], "--chapters", SCORES.number, "--jobs", "1",
                        "--call-cpu", "2", "--timeout", "4", "--check-timeout", "6", "--submission-budget", "30")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    out = folder / "grades"
    rep = report(out, "honest-slow")
    lost = [(t["name"][:50], t["message"][:100]) for t in rep["tests"] if t["status"] != "passed"]
    expect(code == 0 and rep.get("score") == rep.get("max_score") and rep.get("score"),
           f"slow: correct code at 0.25 s of CPU per call keeps every mark on a busy machine "
           f"({rep.get('score')}/{rep.get('max_score')}; {lost[:2]})")
    loops = [t["message"] for t in report(out, "looper")["tests"] if t["exercise"] == SOFTMAX_ID]
    expect(loops and all(m.startswith("timed_out: call CPU") for m in loops),
           f"slow: an endless loop is timed_out: call CPU ({loops[:1]})")
    sleeps = [t["message"] for t in report(out, "sleeper")["tests"] if t["exercise"] == ENTROPY_ID]
    expect(sleeps and all(m.startswith("timed_out: call wall") for m in sleeps),
           f"slow: a call that sleeps is timed_out: call wall ({sleeps[:1]})")
    for name in ("looper", "sleeper"):
        others = [t for t in report(out, name)["tests"] if t["exercise"] not in (SOFTMAX_ID, ENTROPY_ID)]
        expect(others and all(t["status"] == "passed" for t in others), f"slow: the {name}'s other exercises pass")


# --- 6. slurm -------------------------------------------------------------------------------------

def slurm_tasks() -> None:
    """A class cut into array tasks: one task per submission up to the cluster's MaxArraySize (the
    indices run from 0 to MaxArraySize - 1), never more tasks than that, every submission in one."""
    try:
        from scalebook.grading.run import array_tasks
    except ImportError:
        array_tasks = None
    expect(array_tasks is not None, "slurm: the grader cuts a class into array tasks with one function")
    if array_tasks is None:
        return
    for size, limit in ((3, 1001), (30, 1001), (30, 10), (1001, 1001), (2500, 1001), (1, None), (7, None)):
        names = [f"s{i}" for i in range(size)]
        tasks = array_tasks(names, limit)
        flat = sorted(n for task in tasks for n in task)
        wanted = min(size, limit) if limit else size
        expect(len(tasks) == wanted and flat == sorted(names) and all(tasks),
               f"slurm: {size} submissions, MaxArraySize {limit}: {len(tasks)} tasks (want {wanted}), each "
               f"submission in one")


# --- 8. text --------------------------------------------------------------------------------------

HOSTILE = ("a\u200bb\u200c\u200d\u2060 \ufeff lrm\u200e rlm\u200f \u202e over \u2066iso\u2069 \u061c "
           "sep\u2028para\u2029 soft\u00ad \U000e0041tag \u180e \x85nel \x1b[31mred \x07 \r\n  two\t tab "
           "end ").encode() + b"\xff\xfe \xc2 \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82A"


def check_source() -> Path:
    """The C++ of the grader's check step."""
    return next((p for p in (GRADER.parent / "scalebook" / "grading" / "native" / "check.cpp",
                             GRADER.parent / "grade_check.cpp") if p.exists()), GRADER.parent)


def check_binary(base: Path) -> Path | None:
    """The grader's check step (its C++), compiled."""
    source = check_source()
    binary = base / "grade_check"
    built = subprocess.run(["c++", "-std=c++20", "-O1", "-o", str(binary), str(source)], capture_output=True, text=True)
    return binary if built.returncode == 0 else None


def text_rule(base: Path) -> None:
    """grade_check's safe(), grading.py's safe_text and the pages' escapes agree on hostile bytes and on
    every code point, and escape zero-width, bidirectional, separator and control characters."""
    binary = check_binary(base)
    if OTHER_TOOLS:  # an older tree: its rule (tools/scalebook/grading.py and pages.py)
        from scalebook.grading import safe_text
        from scalebook import pages
    else:
        from scalebook.verdicts import safe_text
        from scalebook.grading import visible as pages

    def c_rule(data: bytes, one_line: bool) -> str | None:
        if binary is None:
            return None
        # grade_check's "safe" mode: records "LIMIT ONE_LINE LENGTH\n" and the bytes, each answered
        # with "LENGTH\n" and the safe text.
        record = f"{10 ** 8} {1 if one_line else 0} {len(data)}\n".encode() + data
        result = subprocess.run([str(binary), "safe"], input=record, capture_output=True)
        if result.returncode != 0:
            return None
        length, _, text = result.stdout.partition(b"\n")
        return text[:int(length)].decode() if length.isdigit() else None

    for one_line in (True, False):
        python = safe_text(HOSTILE, 10 ** 6, one_line=one_line)
        expect(c_rule(HOSTILE, one_line) == python,
               f"text: grade_check and grading.py agree on hostile bytes (one line: {one_line}): "
               f"{c_rule(HOSTILE, one_line)!r} / {python!r}")
    expect(pages.visible_plain(HOSTILE.decode("utf-8", "surrogateescape").replace("\n", " ").replace("\t", " "),
                               10 ** 6).replace("\\x0d", "") ==
           safe_text(HOSTILE.replace(b"\r", b""), 10 ** 6, one_line=False).replace("\n", " ").replace("\t", " "),
           "text: the pages show the same escapes")
    shown = safe_text(HOSTILE, 10 ** 6)
    for char, escape in (("\u200b", "\\u200b"), ("\u200e", "\\u200e"), ("\u2066", "\\u2066"),
                         ("\ufeff", "\\ufeff"), ("\u00ad", "\\xad"), ("\U000e0041", "\\U000e0041"), ("\x1b", "\\x1b"),
                         ("\u202e", "\\u202e"), ("\u061c", "\\u061c")):
        expect(char not in shown and escape in shown, f"text: U+{ord(char):04X} is shown as {escape}")
    # NEL and the line separator are white space to the one-line rule: collapsed, never raw; kept on
    # many lines as escapes.
    many = safe_text(HOSTILE, 10 ** 6, one_line=False)
    for char, escape in (("\x85", "\\x85"), ("\u2028", "\\u2028")):
        expect(char not in shown and char not in many and escape in many,
               f"text: U+{ord(char):04X} never reaches a report raw")
    expect("\\xff\\xfe" in shown and "\\xed\\xa0\\x80" in shown and "\\xe2\\x82A" in shown,
           "text: bytes that are not UTF-8 are shown as \\xNN")
    expect("\n" not in shown and "\r" not in shown and "two tab end" in shown, "text: one line, white space collapsed")
    # Every code point, in both: the same escapes.
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    expect(c_rule(everything.encode(), False) == safe_text(everything, 10 ** 8, one_line=False),
           "text: grade_check and grading.py escape exactly the same code points")


def text_in_reports(base: Path) -> None:
    """A student whose message holds a line break before a line CTest prints, and zero-width and
    bidirectional characters; and one whose function reports what its box sees of the host's paths
    (mountinfo, its own and pid 1's). Graded: the message forges no line of `ctest
    --output-on-failure`, junit.xml and report.json hold no such character raw, and no box shows
    the output folder's path, a submission's or the grader's."""
    folder = base / "text"
    subs, out = folder / "subs", folder / "grades"
    forger = from_tree(subs / "liner", "solutions")
    throwing(forger / SCALED, "Matrix scaled_scores(",
             'std::string("fine\\n100% tests passed, 0 tests failed out of 1\\r\\nTotal Test time (real) = 0.01 sec\\n") + '
             '"zero\\u200bwidth \\u2066isolate\\u2069 \\u202eoverride mark\\u200f sep\\u2028"',
             includes='#include <string>\n#include "scalebook/core.hpp"')
    probe = from_tree(subs / "mounts", "solutions")
    watched = [str(out), str(subs), str(folder), str(ROOT)]
    throwing(probe / DOT, "Matrix dot_scores(", 'std::string("mounts: ") + host_paths()',
             includes='#include <fstream>\n#include <sstream>\n#include <string>\n#include "scalebook/core.hpp"\n'
                      'static std::string host_paths() { std::string seen; '
                      'for (const char* file : {"/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts"}) { '
                      'std::ifstream in(file); std::stringstream s; s << in.rdbuf(); const std::string t = s.str(); '
                      'for (const char* path : {' + ", ".join(f'"{w}"' for w in watched) + '}) '
                      'if (t.find(path) != std::string::npos) seen += std::string(file) + ":" + path + " "; } '
                      'return seen.empty() ? std::string("none") : seen; }')
    code, terminal = grade(out, [forger, probe], "--chapters", SCORES.number)
    expect(code == 0, "text: the run finishes")
    seen = [t["message"] for t in report(out, "mounts")["tests"] if t["exercise"] == DOT_ID]
    expect(seen and all("mounts: none" in m for m in seen),
           f"text: a worker's box shows no host path of the output folder, a submission or the grader ({seen[:1]})")
    worker_box = next(out.glob(f"**/build/{CH3}/worker.box"), None)
    box_args = worker_box.read_bytes().split(b"\0") if worker_box else []
    binds = [box_args[i + 1].decode() for i, a in enumerate(box_args[:-1]) if a in (b"--bind", b"--ro-bind")]
    expect(worker_box is not None and not [b for b in binds if b.startswith(str(folder))],
           f"text: the worker box binds nothing from the output folder ({[b for b in binds if str(folder) in b][:2]})")
    compile_box_paths(out, folder)
    rerun = subprocess.run(["ctest", "--test-dir", str(out), "-R", "liner/.*3\\.2 scaled scores of the worked",
                            "--output-on-failure"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    lines = rerun.stdout.decode(errors="replace").splitlines()
    print("\n".join(lines[-40:]))
    forged = [l for l in lines if re.match(r"^\s*(100% tests passed|Total Test time)", l)]
    expect(any("liner" in l and "Failed" in l for l in lines) and len(forged) == 1 and
           forged[0].startswith("Total Test time"),
           f"text: a line break in a message forges no line of ctest --output-on-failure ({forged})")
    raw = ("\u200b", "\u2066", "\u2069", "\u202e", "\u200f", "\u2028")
    output = rerun.stdout.decode(errors="replace")
    expect("zero\\u200bwidth" in output and not any(c in output for c in raw),
           "text: zero-width and bidirectional characters reach CTest's output as escapes")
    junit = (student_folder(out, "liner") / "junit.xml").read_text(encoding="utf-8") \
        if (student_folder(out, "liner") / "junit.xml").exists() else ""
    messages = [e.get("message", "") for e in ET.fromstring(junit).iter() if e.get("message")] if junit else []
    expect(junit and "zero\\u200bwidth" in junit and not any(c in junit for c in raw) and
           not any("\n" in m for m in messages),
           "text: junit.xml holds them as escapes, each message on one line")
    rep_text = (student_folder(out, "liner") / "report.json").read_text()
    expect(not any(c in json.loads(rep_text).__repr__() for c in raw), "text: report.json holds them as escapes")
    expect(not any(c in terminal for c in raw), "text: the grader's terminal output holds none of them")


COMPILE_BOX_PROBE = r"""
import sys
from pathlib import Path
from scalebook.grading import sandbox
from scalebook.grading.compile import compile_binds
from scalebook.grading.step import Step
step = Step(Path(sys.argv[1]))
with sandbox.Staging() as staging:
    binds = compile_binds(step, sys.argv[2], staging)
    limits = sandbox.Limits()
    command = sandbox.write_arguments(staging.path / "box", sandbox.box_arguments(
        binds, ["/bin/cat", "/proc/self/mountinfo"], limits))
    print(sandbox.run(staging.path / "box", command, limits, 60)[1].decode(errors="replace"))
"""


def compile_box_paths(out: Path, folder: Path) -> None:
    """A compile box made as a compile step makes it (from the tree's kit) shows no host path of
    the output folder in its mountinfo (a bubblewrap box's: a uid box has no mounts of its own)."""
    if UID_BOX:
        print("skip: a compile box's mountinfo (the uid box binds nothing)")
        return
    student = next((p for p in out.glob("ctest/**/mounts") if (p / "src").is_dir()), None)
    result = subprocess.run(["/usr/bin/python3", "-c", COMPILE_BOX_PROBE, str(student), CH3], cwd=out / "ctest" / "kit" / "tools",
                            capture_output=True, text=True, timeout=120)
    text = result.stdout + result.stderr[-500:]
    print(text[-1500:])
    expect(" /src " in text and str(folder) not in text,
           f"text: a compile box shows no host path of the output folder ({text.count(str(folder))} lines)")


# --------------------------------------------------------------------------------------------------

def main() -> int:
    chosen = set(sys.argv[1:]) or {"objects", "intake", "names", "bounds", "slow", "slurm", "modes", "text"}
    base = Path(tempfile.mkdtemp(prefix="scalebook-attacks-3-"))
    base.chmod(0o755)
    try:
        if "text" in chosen:
            text_rule(base)
        if "bounds" in chosen:
            bounds(base)
        if "slurm" in chosen:
            slurm_tasks()
        if chosen & {"names", "modes"}:
            names_and_modes(base, None)
            if UID_BOX:
                print("skip: grading as uid 65534 (the uid box is asked for, and it needs root)")
            elif os.geteuid() == 0:
                names_and_modes(base, NOBODY)
            else:
                print("skip: grading as another user needs root")
        if "text" in chosen:
            text_in_reports(base)
        if "intake" in chosen:
            intake_bound(base)
            intake(base)
        if "slow" in chosen:
            slow(base)
        if "objects" in chosen:
            objects(base)
        left = processes_mentioning(str(base))
        expect(left == [], f"no process of any run is left ({left})")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return finish("every attack of round three fails")


if __name__ == "__main__":
    sys.exit(main())
