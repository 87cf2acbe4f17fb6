#!/usr/bin/env python3
"""The grader attacked as its most motivated student would: each attack is a submission graded
beside an honest one. Afterwards the honest one has full marks, every attacker has only what it
earned, the instructor's tree and the reports are as they were (also a few seconds later), and no
process of any submission is left running. Grading also refuses to run without its sandbox.

Four runs: the class as root (cgroups), an honest student beside one who floods processes,
memory and CPU graded by an unprivileged user (no cgroups: seccomp and per-box user namespaces
must hold), a submission whose files take forever to compile (the compile budget), and tiled attention's
memory proof attacked by naive attention that hides its n x n matrix."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.harness import ROOT, course_chapter, expect, finish

# The course's chapters attacked here, by the functions the attacks patch (tests/harness.py says why).
SCORES = course_chapter("dot_scores", "scaled_scores", "softmax_rows", "dot_product_variance", "row_entropy")
MASKS, TILED = course_chapter("causal_mask"), course_chapter("tiled_attention")
CH3, CH4, CH7 = SCORES.folder, MASKS.folder, TILED.folder
DOT, SCALED, SOFTMAX = SCORES.file("dot_scores"), SCORES.file("scaled_scores"), SCORES.file("softmax_rows")
VARIANCE, CH3_ENTROPY = SCORES.file("dot_product_variance"), SCORES.file("row_entropy")
DOT_ID, SCALED_ID, SOFTMAX_ID, VARIANCE_ID, ENTROPY_ID = (
    SCORES.id(f) for f in ("dot_scores", "scaled_scores", "softmax_rows", "dot_product_variance", "row_entropy"))
BOTH = f"{SCORES.number},{MASKS.number}"  # --chapters


# SCALEBOOK_SANDBOX=uid: the suite in the uid box (grading/sandbox.py's second mode, for a root grader
# where bubblewrap cannot make namespaces); the runs that need bubblewrap or a non-root grader are skipped.
UID_BOX = os.environ.get("SCALEBOOK_SANDBOX") == "uid"

def tree_hash(folder: Path, files: list[str] | None = None) -> str:
    digest = hashlib.sha256()
    paths = [folder / f for f in files] if files is not None else sorted(folder.rglob("*"))
    for path in paths:
        digest.update(str(path).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    return sorted(f for f in listed.stdout.decode().split("\0") if f) if listed.returncode == 0 else []


def prepend(path: Path, text: str) -> None:
    path.write_text(text + "\n" + path.read_text())


def processes_mentioning(text: str) -> list[str]:
    """Processes whose command line holds TEXT (a grading run's steps name its output folder)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if text.encode() in (proc / "cmdline").read_bytes():
                    found.append(proc.name)
            except OSError:
                pass
    return found


def throwing(path: Path, function_line: str, message_code: str, includes: str = "") -> None:
    """Makes the function whose definition starts FUNCTION_LINE throw ValueError(MESSAGE_CODE)
    first thing (MESSAGE_CODE is a C++ std::string expression)."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(function_line))
    while not lines[at].rstrip().endswith("{"):
        at += 1
    lines.insert(at + 1, f"  throw scalebook::ValueError({message_code});")
    path.write_text(includes + "\n" + "\n".join(lines) + "\n")


# The grader attacked: this tree's, or another's (SCALEBOOK_GRADER=OTHER/tools/workbook.py, to show what
# an older grader let through; options it does not know are left out).
GRADER = Path(os.environ.get("SCALEBOOK_GRADER", ROOT / "tools" / "workbook.py"))


def grade(out: Path, submissions: list[Path], *options: str, user: int | None = None,
          env: dict | None = None, timeout: float = 1200) -> subprocess.CompletedProcess:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] if user is not None else []
    known = subprocess.run(["/usr/bin/python3", str(GRADER), "grade", "--help"], capture_output=True, text=True).stdout
    kept, skip = [], False
    for index, option in enumerate(options):
        if skip:
            skip = False
        elif option.startswith("--") and option.split("=")[0] not in known:
            skip = "=" not in option and index + 1 < len(options) and not options[index + 1].startswith("--")
        else:
            kept.append(option)
    return subprocess.run([*prefix, "/usr/bin/python3", str(GRADER), "grade", "--out", str(out), *kept,
                           *map(str, submissions)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=env, timeout=timeout)


def reports_in(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("ctest/students/*/record.json")}


def messages(report: dict, exercise: str) -> list[str]:
    return [t["message"] for t in report["tests"] if t["exercise"] == exercise]


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-attacks-"))
    try:
        return run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def patch_body(path: Path, function_line: str, statement: str, includes: str) -> None:
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(function_line))
    while not lines[at].rstrip().endswith("{"):
        at += 1
    lines.insert(at + 1, "  " + statement)
    path.write_text(includes + "\n" + "\n".join(lines) + "\n")


def run(base: Path) -> int:
    subs, out = base / "submissions", base / "grades"
    subs.mkdir()
    secret = base / "instructor-private.txt"
    secret.write_text("PRIVATE-INSTRUCTOR-NOTE\n")
    host_tmp = Path(tempfile.mkdtemp(prefix="scalebook-host-tmp-"))
    (host_tmp / "visible").write_text("host /tmp file\n")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_path = base / "host.sock"
    listener.bind(str(unix_path))
    listener.listen(1)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    port = tcp.getsockname()[1]

    made: dict[str, Path] = {}

    def from_tree(name: str, tree: str) -> Path:
        shutil.copytree(ROOT / tree, subs / name)
        made[name] = subs / name
        return subs / name

    honest = from_tree("honest", "solutions")
    honest_file = honest / DOT

    # Every place it should not reach, tried from inside the student's function (in the uid box, which
    # shares the host's file system, "reach" is open: Landlock and file modes refuse it, stat is not refused).
    probe = from_tree("probe", "solutions")
    prepend(probe / DOT, f'''#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <string>
static std::string probe_what_is_visible() {{
  std::string seen;
  for (const char* path : {{"{ROOT / 'CMakeLists.txt'}", "{honest_file}", "{secret}", "/etc/passwd",
                           "{host_tmp / 'visible'}", "{out}"}}) {{
    if ({"open(path, O_RDONLY | O_NONBLOCK) >= 0" if UID_BOX else "access(path, F_OK) == 0"}) seen += std::string(path) + " ";
  }}
  const int u = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{{}};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", "{unix_path}");
  if (u >= 0 && connect(u, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) seen += "unix-socket ";
  const int t = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in ip{{}};
  ip.sin_family = AF_INET;
  ip.sin_port = htons({port});
  ip.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (t >= 0 && connect(t, reinterpret_cast<sockaddr*>(&ip), sizeof ip) == 0) seen += "tcp ";
  if (DIR* d = opendir("/tmp")) {{
    while (dirent* e = readdir(d)) if (e->d_name[0] != '.') seen += std::string("/tmp/") + e->d_name + " ";
    closedir(d);
  }}
  return seen.empty() ? "none" : seen;
}}''')
    lines = (probe / DOT).read_text().replace(
        "  require_queries_keys(\"dot_scores\", q, k);",
        "  throw scalebook::ValueError(\"probe saw: \" + probe_what_is_visible());", 1)
    (probe / DOT).write_text(lines)

    # Forges a verdict from a constructor: results files of any process it can see, then _exit(0).
    forger = from_tree("forger", "exercises")
    prepend(forger / DOT, '''#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <cstdlib>
static void forge() {
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      const auto at = s.find("--scalebook-results=");
      if (at == std::string::npos) continue;
      std::ofstream out(s.substr(at + 20, s.find('\\0', at) - at - 20), std::ios::app);
      out << "passed\\t''' + SCORES.first_check("dot_scores") + '''\\t\\n";
    }
    closedir(d);
  }
}
static const int forged = (forge(), std::atexit(forge), 0);''')

    # A daemon that outlives its call and rewrites the class's grades and the instructor's tools.
    daemon = from_tree("daemon", "solutions")
    prepend(daemon / DOT, f'''#include <fstream>
#include <unistd.h>
static const int daemonised = [] {{
  if (fork() == 0) {{
    setsid();
    if (fork() == 0) {{
      sleep(3);
      std::ofstream("{out / 'grades.csv'}") << "daemon,99,99,99,99\\n";
      std::ofstream("{out / 'students' / 'honest' / 'report.json'}") << "{{}}";
      std::ofstream("{ROOT / 'tools' / 'run-check'}") << "#!/bin/sh\\nexit 0\\n";
      std::ofstream("{honest_file}") << "// overwritten\\n";
    }}
    _exit(0);
  }}
  return 0;
}}();''')

    # Kills everything it can see, and floods processes, memory and disk.
    killer = from_tree("killer", "solutions")
    prepend(killer / MASKS.file("causal_mask"), '''#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>
static const int flood = [] {
  for (int i = 0; i < 300; ++i) if (fork() == 0) { pause(); _exit(0); }
  for (int i = 0; i < 3; ++i) if (fork() == 0) {
    char* p = static_cast<char*>(std::malloc(std::size_t(2) << 30));
    if (p) std::memset(p, 1, std::size_t(2) << 30);
    pause();
  }
  std::ofstream big("/tmp/big");
  std::string chunk(1 << 20, 'x');
  for (int i = 0; i < 1024 && big; ++i) big << chunk;
  kill(-1, SIGKILL);
  return 0;
}();''')

    # Compile-time attacks: an endless include, and reading a private file into the object.
    zero = from_tree("dev-zero", "solutions")
    prepend(zero / SCALED, '#include "/dev/zero"')
    incbin = from_tree("incbin", "solutions")
    prepend(incbin / DOT, f'__asm__(".pushsection .rodata\\n.incbin \\"{secret}\\"\\n.popsection");\n'
                          f'__asm__(".pushsection .rodata\\n.incbin \\"{ROOT / "solutions" / DOT}\\"\\n.popsection");')

    # Intake: a symlink to the instructor's solution, a file where a folder should be, a bad name, a
    # folder named like a file the grader writes (its own namespace: graded like any other).
    linked = from_tree("symlinked", "exercises")
    (linked / DOT).unlink()
    (linked / DOT).symlink_to(ROOT / "solutions" / DOT)
    (subs / "notes.txt").write_text("not a submission\n")
    (subs / "grades.csv").mkdir()
    shutil.copytree(ROOT / "exercises", subs / "=HYPERLINK(1)")


    # The grader's environment and host paths, read from inside the box (pid 1's environ and
    # command line, its own) at run time and at compile time.
    environ = from_tree("environ", "solutions")
    throwing(environ / DOT, "Matrix dot_scores(",
             'std::string("leak: ") + slurp("/proc/1/environ") + " | " + slurp("/proc/1/cmdline") + " | " + '
             'slurp("/proc/self/environ") + " | " + slurp("/proc/self/cmdline")',
             includes='#include <fstream>\n#include <sstream>\n#include <string>\n#include "scalebook/core.hpp"\n'
                      '// The file\'s text, NULs as spaces, the test\'s secret variable first (messages are cut).\n'
                      'static std::string slurp(const char* path) { std::ifstream in(path); std::stringstream s; '
                      's << in.rdbuf(); std::string t = s.str(); const auto at = t.find("SCALEBOOK_TEST_SECRET="); '
                      'if (at != std::string::npos) t = t.substr(at, t.find(char(0), at) - at) + " " + t; '
                      'for (char& c : t) if (c == 0) c = 32; return t; }')
    prepend(environ / VARIANCE, '#include "/proc/1/cmdline"')

    # /dev as a memory store, and a fork from the worker.
    devfork = from_tree("dev-and-fork", "solutions")
    throwing(devfork / SOFTMAX, "Matrix softmax_rows(",
             'std::string("dev wrote ") + std::to_string(fill("/dev/fill")) + " shm wrote " + std::to_string(fill("/dev/shm/fill"))',
             includes='#include <cstdio>\n#include <string>\n#include <vector>\n#include "scalebook/core.hpp"\n'
                      '// Six files of 32 MiB each (each under the 64 MiB file size limit).\n'
                      'static long fill(const std::string& path) { std::vector<char> chunk(1 << 20, 7); long n = 0; '
                      'for (int k = 0; k < 6; ++k) { std::FILE* f = std::fopen((path + std::to_string(k)).c_str(), "w"); '
                      'if (!f) break; for (int i = 0; i < 32; ++i) n += static_cast<long>(std::fwrite(chunk.data(), 1, '
                      'chunk.size(), f)); std::fclose(f); } return n; }')
    throwing(devfork / VARIANCE, "double dot_product_variance(",
             'std::string(fork_probe() ? "fork worked" : "fork failed")',
             includes='#include <string>\n#include <unistd.h>\n#include <sys/wait.h>\n#include "scalebook/core.hpp"\n'
                      'static bool fork_probe() { const pid_t p = fork(); if (p == 0) _exit(0); '
                      'if (p > 0) waitpid(p, nullptr, 0); return p > 0; }')

    # State left for the next check: each of dot_scores's checks gets a fresh worker (in the chapter's one
    # box), which must find nothing an earlier one made: no file in /tmp (nor a /tmp it may not
    # write), no SysV shared memory, no key; and it may not kill or stop the box's first process.
    # A worker looks once, at its first call, and gives that answer to every later call: a check
    # may call dot_scores several times (the error-path checks try each of its input checks), and
    # what its own first call left is no leak between checks.
    leftovers = from_tree("leftovers", "solutions")
    throwing(leftovers / DOT, "Matrix dot_scores(", 'std::string("leftovers: ") + leave_and_find()',
             includes='#include <dirent.h>\n#include <csignal>\n#include <fstream>\n#include <string>\n'
                      '#include <sys/ipc.h>\n#include <sys/shm.h>\n#include <sys/stat.h>\n#include <sys/syscall.h>\n'
                      '#include <unistd.h>\n#include "scalebook/core.hpp"\n'
                      'static std::string leave_and_find() { static std::string first; if (!first.empty()) return first; '
                      'std::string seen; '
                      'if (DIR* d = opendir("/tmp")) { while (dirent* e = readdir(d)) if (e->d_name[0] != 46) '
                      'seen += std::string("/tmp/") + e->d_name + " "; closedir(d); } '
                      'if (shmget(0x5ca1e, 0, 0) >= 0) seen += "shm "; '
                      'if (syscall(SYS_request_key, "user", "scalebook-left", nullptr, 0) >= 0) seen += "key "; '
                      'if (access("/tmp", W_OK) != 0) seen += "/tmp-unwritable "; '
                      'std::ofstream("/tmp/left") << "x"; mkdir("/tmp/locked", 0700); '
                      'std::ofstream("/tmp/locked/inside") << "x"; chmod("/tmp/locked", 0); '
                      'shmget(0x5ca1e, 4096, IPC_CREAT | 0600); '
                      'syscall(SYS_add_key, "user", "scalebook-left", "x", 1, -4); '
                      'kill(1, SIGKILL); kill(getppid(), SIGSTOP); chmod("/tmp", 0500); '
                      'first = seen.empty() ? std::string("none") : seen; return first; }')

    # lib's compiled answer, reached by redeclaring its prototype by hand (no #include to refuse).
    redeclared = from_tree("redeclared", "solutions")
    source = redeclared / SOFTMAX
    text = source.read_text()
    opening = f"namespace {SCORES.namespace} {{"
    text = text.replace(opening, "namespace scalebook {\n"
                        "Matrix softmax_rows(const Eigen::Ref<const Matrix>& logits);\n}\n\n" + opening, 1)
    at = text.index("Matrix softmax_rows(const Matrix& scores) {")
    text = text[:at] + ("Matrix softmax_rows(const Matrix& scores) {\n  return scalebook::softmax_rows(scores);\n}\n"
                        "Matrix unused_original(const Matrix& scores) {") + text[at + len("Matrix softmax_rows(const Matrix& scores) {"):]
    source.write_text(text)

    # A status written in a message, and bytes no report format can hold as they are.
    relabel = from_tree("relabel", "solutions")
    throwing(relabel / CH3_ENTROPY, "Vector row_entropy(",
             '"did not return within 3 s: an endless loop? the student process ended (it died of SIGSEGV) crashed timed_out"',
             includes='#include "scalebook/core.hpp"')
    hostile = from_tree("hostile", "solutions")
    throwing(hostile / SCALED, "Matrix scaled_scores(",
             'std::string("</failure><testcase name=\\"x\\"> \\x1b[31mRED\\x1b[0m \\x1b]8;;http://x\\x07link\\x1b]8;;\\x07 "'
             '"\\x01\\x1f \\xff\\xfe \\xc2\\x9b" "[2J \\xe2\\x80\\xae =cmd| ]]> &amp; end")',
             includes='#include <string>\n#include "scalebook/core.hpp"')

    # Implementing nothing: the stubs, validating their input as the contract says (so every
    # error-path check passes) but computing nothing.
    nothing = from_tree("nothing", "exercises")
    for chapter in (CH3, CH4):
        for stub in sorted((nothing / chapter).glob("ex*.cpp")):
            solution = (ROOT / "solutions" / chapter / stub.name).read_text().splitlines()
            checks = [line for line in solution if line.strip().startswith("require_") and line.strip().endswith(");")]
            lines = stub.read_text().splitlines()
            at = next(i for i, line in enumerate(lines) if "scalebook::not_implemented(" in line)
            stub.write_text("\n".join(lines[:at] + checks + lines[at:]) + "\n")

    # Correct, but every call of every exercise sleeps past the per-call limit: the submission's
    # budget ends it.
    sleeper = from_tree("sleeper", "solutions")
    for source in [path for chapter in (CH3, CH4) for path in sorted((sleeper / chapter).glob("ex*.cpp"))]:
        text = source.read_text()
        body = re.search(r"^(?!namespace)\S[^\n;]*\([^;{]*\)\s*\{$", text, re.M)
        source.write_text("#include <chrono>\n#include <thread>\n" + text[:body.end()] +
                          "\n  std::this_thread::sleep_for(std::chrono::seconds(9));" + text[body.end():])
    # Correct and slow: 0.15 s of CPU per call, thirty times under the per-call limit (some fifty
    # calls: more than a whole chapter's CPU limit used to be).
    slow = from_tree("honest-slow", "solutions")
    patch_body(slow / DOT, "Matrix dot_scores(",
               "{ const auto until = std::clock() + CLOCKS_PER_SEC * 15 / 100; while (std::clock() < until) {} }",
               "#include <ctime>")

    everything = [*made.values(), subs / "notes.txt", subs / "grades.csv", subs / "=HYPERLINK(1)"]
    secret = f"token-{os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, SCALEBOOK_TEST_SECRET=secret)
    instructor_before = tree_hash(ROOT, tracked_files())
    honest_before = tree_hash(honest)
    start = time.monotonic()
    options = ["--chapters", BOTH, "--jobs", "2", "--timeout", "8", "--call-cpu", "4", "--submission-budget", "120"]
    result = grade(out, everything, *options, env=env)
    seconds = time.monotonic() - start
    terminal = result.stdout
    print(terminal.decode(errors="replace"))
    expect(result.returncode == 0, f"grading finishes (exit {result.returncode}) in {seconds:.0f} s")
    reports = reports_in(out)
    csv_before = (out / "grades.csv").read_bytes() if (out / "grades.csv").exists() else b""
    honest_report_before = (out / "students" / "honest" / "report.json").read_bytes()
    time.sleep(4)  # the daemon's moment

    maximum = reports["honest"]["max_score"]
    expect(reports["honest"]["score"] == maximum, "the honest submission keeps full marks")
    probe_messages = messages(reports["probe"], DOT_ID)
    expect(probe_messages and all("probe saw: none" in m for m in probe_messages[:1]),
           f"the box sees no instructor file, classmate, host /tmp, socket or network: {probe_messages[:1]}")
    leftover_messages = [m for m in messages(reports["leftovers"], DOT_ID) if "leftovers: " in m]
    expect(len(leftover_messages) >= 2 and all("leftovers: none" in m for m in leftover_messages),
           f"a check's worker finds nothing an earlier check's worker left: {leftover_messages[:2]}")
    expect(reports["forger"]["score"] == 0, f"a forged verdict earns nothing ({reports['forger']['score']})")
    daemon_ch3 = [t for t in reports["daemon"]["tests"] if t["chapter"] == CH3]
    expect(all(t["status"] == "passed" for t in daemon_ch3), "the daemon's own honest work counts")
    expect((out / "grades.csv").read_bytes() == csv_before, "grades.csv is unchanged seconds later")
    expect((out / "students" / "honest" / "report.json").read_bytes() == honest_report_before,
           "the honest report is unchanged seconds later")
    expect(tree_hash(ROOT, tracked_files()) == instructor_before, "the instructor's tree is byte-identical")
    expect(tree_hash(honest) == honest_before, "the honest submission's folder is untouched")
    left = processes_mentioning(str(out))
    expect(left == [], f"no process of the run is left running {left}")
    killer_ch3 = [t for t in reports["killer"]["tests"] if t["chapter"] == CH3]
    expect(all(t["status"] == "passed" for t in killer_ch3), "the flood in the second chapter costs the killer's first chapter nothing")
    if UID_BOX:  # its writes are refused (no SIGXFSZ) and kill(-1) ends its own box only: its answer stands
        print("skip: the flooding exercise's marks (in the uid box its flood costs it nothing and no one else anything)")
    else:
        expect(all(t["status"] != "passed" for t in reports["killer"]["tests"] if t["exercise"].startswith(f"{MASKS.number}.")),
               "the flooding exercise earns nothing")
    zero_t = reports["dev-zero"]["tests"]
    expect(all(t["status"] in ("compile_error", "timed_out") for t in zero_t if t["exercise"] == SCALED_ID) and
           all(t["status"] == "passed" for t in zero_t if t["exercise"] != SCALED_ID),
           f"#include \"/dev/zero\" costs {SCALED_ID} only, within the limits")
    inc = [t for t in reports["incbin"]["tests"] if t["exercise"] == DOT_ID]
    expect(all(t["status"] == "compile_error" for t in inc), ".incbin of a private file does not compile")
    expect(not any("PRIVATE-INSTRUCTOR-NOTE" in json.dumps(r) for r in reports.values()),
           "no private file's text reaches any report")
    sym = reports["symlinked"]
    expect(any("symlink" in f for f in sym.get("refused_files", [])) and
           all(t["status"] == "compile_error" for t in sym["tests"] if t["exercise"] == DOT_ID),
           "a symlinked exercise file is refused and reported")
    refused = {r["submission"]: r for r in reports.values() if r.get("refused")}
    expect(len(refused) == 2, f"a file and a formula name are one refused entry each ({sorted(refused)})")
    expect(reports.get("grades.csv", {}).get("score") == 0 and not reports.get("grades.csv", {}).get("refused"),
           "a folder named like a grader file (grades.csv) is graded like any other: its own name, its own folder")
    with open(out / "grades.csv") as f:
        rows = list(csv.reader(f))
    expect(len(rows) == 1 + len(everything), f"grades.csv has a row per submission ({len(rows) - 1})")
    expect(not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row),
           "no cell of grades.csv is a formula")

    # Nothing of the grader's environment or paths reaches a report.
    leak_messages = messages(reports["environ"], DOT_ID)
    expect(leak_messages and all("leak: " in m for m in leak_messages),
           f"the environ probe ran: {leak_messages[:1]}")
    written = [p for p in out.rglob("*") if p.is_file() and p.suffix in (".json", ".xml", ".csv", ".tsv")
               and "src" not in p.relative_to(out).parts and "kit" not in p.relative_to(out).parts]
    leaked = [str(p.relative_to(out)) for p in written if secret.encode() in p.read_bytes()]
    expect(leaked == [], f"no report holds the grader's environment (/proc/1/environ is empty): {leaked[:3]}")
    host = [str(p.relative_to(out)) for p in out.glob("*/*") if p.suffix in (".json", ".xml")
            if str(ROOT).encode() in p.read_bytes() or str(base).encode() in p.read_bytes()]
    expect(host == [], f"no report names a host path (pid 1 is bwrap --args N): {host[:3]}")
    expect(all("/usr/bin/bwrap" not in m or "--args" in m for m in leak_messages),
           f"pid 1's command line holds no host path: {leak_messages[:1]}")

    devfork_t = reports["dev-and-fork"]
    expect(all("dev wrote 0 shm wrote 0" in m for m in messages(devfork_t, SOFTMAX_ID)),
           f"/dev is read-only, no memory store beside /tmp: {messages(devfork_t, SOFTMAX_ID)[:1]}")
    expect(all("fork failed" in m for m in messages(devfork_t, VARIANCE_ID)),
           f"the worker cannot fork: {messages(devfork_t, VARIANCE_ID)[:1]}")

    borrowed = [t for t in reports["redeclared"]["tests"] if t["exercise"] == SOFTMAX_ID]
    expect(borrowed and not any(t["status"] == "passed" for t in borrowed),
           f"a redeclared prototype of lib's answer earns nothing: {[t['message'][:80] for t in borrowed[:1]]}")
    expect(borrowed and all(t["status"] == "compile_error" and "does not link: scalebook::softmax_rows() is an "
                            "exercise's answer in lib" in t["message"] for t in borrowed),
           f"and the report says why, in ./workbook check's words: {[t['message'][:160] for t in borrowed[:1]]}")
    others = [t for t in reports["redeclared"]["tests"] if t["chapter"] == CH3 and t["exercise"] != SOFTMAX_ID]
    expect(others and all(t["status"] == "passed" or SOFTMAX_ID in t["message"] for t in others),
           f"the chapter's other exercises keep their verdicts: {[(t['exercise'], t['status']) for t in others]}")

    relabelled = [t for t in reports["relabel"]["tests"] if t["exercise"] == ENTROPY_ID]
    expect(relabelled and all(t["status"] == "failed" for t in relabelled),
           f"a message cannot relabel its status: {[t['status'] for t in relabelled]}")

    hostile_report = (out / "students" / "hostile" / "report.json").read_text()
    hostile_messages = messages(json.loads(hostile_report), SCALED_ID)
    unsafe = [m for m in hostile_messages if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in m)]
    expect(hostile_messages and not unsafe and "\\x1b[31m" in hostile_messages[0],
           f"report.json's messages hold no control character, shown escaped: {hostile_messages[:1]}")
    try:
        ET.parse(out / "students" / "hostile" / "junit.xml")
        junit_ok = True
    except ET.ParseError as error:
        junit_ok = False
        print(error)
    expect(junit_ok, "junit.xml stays valid XML with </failure>, control bytes and invalid UTF-8 in a message")
    expect(b"\x1b" not in terminal and b"\x1b" not in (out / "grades.csv").read_bytes(),
           "no terminal escape reaches the terminal or grades.csv")
    rerun = subprocess.run(["ctest", "--test-dir", str(out), "-R", "hostile/.*3\\.2 scaled scores of the worked",
                            "--output-on-failure"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    expect(b"\\x1b[31m" in rerun.stdout and b"\x1b" not in rerun.stdout and b"\xe2\x80\xae" not in rerun.stdout,
           "ctest --output-on-failure shows the message, escapes visible and inert")

    nothing_report = reports["nothing"]
    throw_passed = [t for t in nothing_report["tests"] if "throw" in t["name"] and t["status"] == "passed"]
    expect(throw_passed and nothing_report["score"] == 0,
           f"implementing nothing scores 0 ({nothing_report['score']}; {len(throw_passed)} error-path checks passed)")

    budget = reports["sleeper"]
    named = [t["message"] for t in budget["tests"] if t["message"].startswith("timed_out: submission budget")]
    expect(named, "a submission that sleeps in every call is stopped by its budget, named as such")
    checking = sum(float(case.get("time", 0)) for case in ET.parse(out / "ctest" / "students" / "sleeper" / "ctest-junit.xml").iter(
        "testcase") if not case.get("name", "").endswith(("/build", "/start")))
    expect(checking < 120 + 30, f"... its checks took the budget and no more ({checking:.0f} s of 120)")
    expect(any(t["message"].startswith("timed_out: call wall") or "did not return within" in t["message"]
               for t in budget["tests"]), "a call past the per-call limit is timed_out by name")
    slow_report = reports["honest-slow"]
    expect(slow_report["score"] == maximum, f"honest code 10x under the per-call limit keeps every mark "
                                             f"({slow_report['score']}/{maximum}: "
                                             f"{[t['message'] for t in slow_report['tests'] if t['status'] != 'passed'][:1]})")

    again = grade(out, [honest, made["forger"]], "--resume", "--chapters", BOTH, "--timeout", "8", "--call-cpu", "4",
                  "--submission-budget", "120", timeout=600)
    expect(again.stdout.count(b"already graded") == 2, "--resume skips what was graded from the same inputs")
    other = grade(out, [honest], "--resume", "--chapters", BOTH, "--timeout", "8", "--call-cpu", "3",
                  "--submission-budget", "120",
                  timeout=600)
    expect(other.stdout.count(b"already graded") == 0, "--resume grades again when a limit changed")

    shim = base / "no-sandbox"
    shim.mkdir()
    (shim / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (shim / "bwrap").chmod(0o755)
    if UID_BOX:
        print("skip: a bubblewrap that cannot make namespaces (the uid box is asked for already)")
    elif os.geteuid() == 0:
        # Root where bubblewrap is refused (a container): the uid box holds; a non-root grader is
        # refused with the cause and the remedies (tests/system/test_no_sandbox.py).
        shimmed = grade(base / "x", [honest], env=dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}"))
        report = reports_in(base / "x").get("honest", {})
        expect(shimmed.returncode == 0 and report.get("sandbox", "").startswith("uid box") and
               report.get("score") == report.get("max_score"),
               f"where bubblewrap cannot make its namespaces, root grades in the uid box, the honest student keeping "
               f"every mark ({report.get('sandbox', '')[:40]}, {report.get('score')}/{report.get('max_score')})")
    else:
        refusal = grade(base / "x", [honest], env=dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}"))
        expect(refusal.returncode == 2 and b"refuses to run without a sandbox" in refusal.stdout,
               "without a working sandbox a non-root grader refuses to run")
    listener.close()
    tcp.close()
    shutil.rmtree(host_tmp, ignore_errors=True)

    call_cpu(base)
    memory_proof(base)
    if UID_BOX:  # a uid box needs a root grader: grading as uid 65534 is refused (tests/system/test_no_sandbox.py)
        print("skip: grading as uid 65534 (the uid box is asked for, and it needs root)")
    else:
        if os.geteuid() == 0:
            memory_proof(base, user=65534)
        unprivileged(base)
    compile_budget(base)
    return finish("every attack fails")


def unprivileged(base: Path) -> None:
    """Graded by an unprivileged user (no cgroups), honest students beside one that forks until
    fork fails, holds 256 MB and sleeps 1.5 s in every call to keep its processes alive: the
    classmates keep every mark, and the flood could not start one process."""
    if os.geteuid() != 0:
        print("skip: the unprivileged run needs root to switch to uid 65534 (run the test as root)")
        return
    folder = base / "unprivileged"
    (folder / "subs").mkdir(parents=True)
    base.chmod(0o755)  # a temporary folder is its owner's alone
    for name in ("classmate", "latecomer"):
        shutil.copytree(ROOT / "solutions" / CH3, folder / "subs" / name / CH3)
    flooder = folder / "subs" / "flooder"
    shutil.copytree(ROOT / "solutions" / CH3, flooder / CH3)
    patch_body(flooder / DOT, "Matrix dot_scores(", "flood();",
               "#include <chrono>\n#include <cstdlib>\n#include <cstring>\n#include <string>\n#include <thread>\n"
               "#include <unistd.h>\n#include \"scalebook/core.hpp\"\n"
               "static void flood() { int forks = 0; for (int i = 0; i < 3000; ++i) { const pid_t p = fork(); "
               "if (p == 0) { pause(); _exit(0); } if (p < 0) break; ++forks; } "
               "static char* hold = static_cast<char*>(std::malloc(std::size_t(256) << 20)); "
               "if (hold) std::memset(hold, 1, std::size_t(256) << 20); "
               "std::this_thread::sleep_for(std::chrono::milliseconds(1500)); "
               "throw scalebook::ValueError(\"forks=\" + std::to_string(forks)); }")
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534)
    out = folder / "grades"
    # The flooder first: the classmate is graded beside it, the latecomer while it floods.
    result = grade(out, [flooder, folder / "subs" / "classmate", folder / "subs" / "latecomer"], "--chapters", SCORES.number,
                   "--jobs", "2", "--submission-budget", "150", user=65534)
    print(result.stdout.decode(errors="replace"))
    reports = reports_in(out)
    classmate, flood = reports.get("classmate", {}), reports.get("flooder", {})
    for name in ("classmate", "latecomer"):
        report = reports.get(name, {})
        expect(report.get("score") == report.get("max_score", -1) > 0,
               f"unprivileged: the {name} keeps full marks beside a flood ({report.get('score')})")
    flood_messages = messages(flood, DOT_ID) if flood else []
    counted = [m for m in flood_messages if "forks=" in m]
    expect(counted and all("forks=0" in m for m in counted),
           f"unprivileged: the flooder could not start one process: {flood_messages[:1]}")
    print(f"unprivileged: the classmate took {classmate.get('seconds')} s beside the flood")
    left = processes_mentioning(str(out))
    expect(left == [], f"unprivileged: no process of the run is left running {left}")


def call_cpu(base: Path) -> None:
    """A call that spins 3 s of CPU, past a per-call CPU limit of 1 s, under a wall limit so long that
    even a crowded machine gives it the CPU first: it is timed_out by the call's CPU limit, by name."""
    folder = base / "call-cpu"
    spinner = folder / "subs" / "spinner"
    shutil.copytree(ROOT / "solutions" / CH3, spinner / CH3)
    patch_body(spinner / CH3_ENTROPY, "Vector row_entropy(",
               "{ const auto until = std::clock() + CLOCKS_PER_SEC * 3; while (std::clock() < until) {} }",
               "#include <ctime>")
    out = folder / "grades"
    result = grade(out, [spinner], "--chapters", SCORES.number, "--timeout", "60", "--call-cpu", "1")
    print(result.stdout.decode(errors="replace"))
    report = reports_in(out).get("spinner", {"tests": []})
    spun = messages(report, ENTROPY_ID)
    expect(spun and all(m.startswith("timed_out: call CPU") for m in spun if m),
           f"a call past its CPU limit is timed_out: call CPU: {spun[:1]}")
    others = [t for t in report["tests"] if t["exercise"] != ENTROPY_ID]
    expect(others and all(t["status"] == "passed" for t in others), "the other exercises keep their marks")


# Naive attention's scores, n_q x n_k doubles written into memory the allocation meter never sees
# (mmap, not malloc), in a function called first thing by the student's tiled_attention.
NAIVE_SCORES = """#include <sys/mman.h>
#include <sys/prctl.h>
#include <cstring>
#include <fstream>
#include "under_the_hood.hpp"
static double* scores_in(std::size_t bytes);
static void naive_scores(const scalebook::Matrix& q, const scalebook::Matrix& k) {
  const std::size_t bytes = std::size_t(q.rows()) * std::size_t(k.rows()) * sizeof(double);
  double* s = scores_in(bytes);
  if (s == nullptr) return;
  for (long i = 0; i < q.rows(); ++i)
    for (long j = 0; j < k.rows(); ++j) s[std::size_t(i) * std::size_t(k.rows()) + std::size_t(j)] = q.row(i).dot(k.row(j));
  volatile double sink = s[bytes / sizeof(double) - 1];
  (void)sink;
  forget(s, bytes);
}
"""
# Fresh memory, unmapped when done: seen by the meter on no count.
METER_OFF = """static void forget(double* s, std::size_t bytes) { munmap(s, bytes); }
static double* scores_in(std::size_t bytes) {
  return static_cast<double*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}
"""
# Memory made resident when the worker starts (before any measured call), reused by each call; after
# the call, every way of clearing the worker's own counters is tried.
HELD = """static const std::size_t kHeld = std::size_t(16) << 20;
static double* const held = [] {
  void* p = mmap(nullptr, kHeld, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::memset(p, 1, kHeld);
  return static_cast<double*>(p);
}();
static double* scores_in(std::size_t bytes) { return bytes <= kHeld ? held : nullptr; }
static void forget(double*, std::size_t) {
  prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
  for (int advice : {MADV_COLD, MADV_PAGEOUT, MADV_FREE, MADV_MERGEABLE, MADV_HUGEPAGE, 25 /* MADV_COLLAPSE */})
    madvise(held, kHeld, advice);
  for (const char* what : {"1", "5"}) { std::ofstream reset("/proc/self/clear_refs"); reset << what; }
}
"""


def memory_proof(base: Path, user: int | None = None) -> None:
    """tiled_attention's memory proof graded beside two attackers whose tiled_attention writes naive
    attention's n x n scores first: one in memory the allocation meter does not count, one in memory
    made resident before the call and then hidden from the counters every way the worker can try.
    Both fail the memory check (measured outside the worker); the honest solution passes it. As
    root, and, with USER, graded by that unprivileged user."""
    folder = base / ("memory-proof" if user is None else f"memory-proof-{user}")
    subs = folder / "subs"
    shutil.copytree(ROOT / "solutions" / CH7, subs / "honest" / CH7)
    for name, memory in (("meter-off", METER_OFF), ("held", HELD)):
        shutil.copytree(ROOT / "solutions" / CH7, subs / name / CH7)
        patch_body(subs / name / TILED.file("tiled_attention"), "TiledResult tiled_attention(",
                   "if (q.cols() == k.cols() && q.rows() * k.rows() >= 512 * 512) naive_scores(q, k);", NAIVE_SCORES.replace("static void naive_scores", memory + "static void naive_scores"))
    if user is not None:
        base.chmod(0o755)  # a temporary folder is its owner's alone
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, user, user)
    out = folder / "grades"
    result = grade(out, [subs / "honest", subs / "meter-off", subs / "held"], "--chapters", TILED.number, "--jobs", "1",
                   user=user)
    print(result.stdout.decode(errors="replace"))
    reports = reports_in(out)
    who = "memory proof" if user is None else "memory proof, unprivileged"

    def memory_check(name: str) -> dict:
        tests = reports.get(name, {}).get("tests", [])
        return next((t for t in tests if "never allocates an n by n matrix" in t.get("name", "")), {})

    honest = memory_check("honest")
    expect(honest.get("status") == "passed", f"{who}: the honest {TILED.id('tiled_attention')} passes it ({honest.get('message')})")
    for name in ("meter-off", "held"):
        check = memory_check(name)
        expect(check.get("status") == "failed" and "made the worker hold at least" in check.get("message", ""),
               f"{who}: naive scores in {name} memory fail it, measured outside the worker: "
               f"{check.get('status')} {check.get('message', '')[:160]}")
        # tiled_attention's other memory check (n = 4096, blocks of 16 and 256) gives the naive scores away too
        # when they fit in the attacker's memory (meter-off's do; held's 128 MiB do not fit its 16).
        blocks = next((t for t in reports.get(name, {}).get("tests", []) if "as long as a block" in t["name"]), {})
        expect(blocks.get("status") == "passed" or "made the worker hold" in blocks.get("message", ""),
               f"{who}: {name}'s blocks check passes or fails on memory measured outside the worker: "
               f"{blocks.get('status')} {blocks.get('message', '')[:160]}")
        # (its error-path check pays only with all of the exercise's results, so it is left out here.)
        others = [t for t in reports.get(name, {}).get("tests", [])
                  if t is not check and t is not blocks and "throw" not in t["name"]]
        expect(others and all(t["status"] == "passed" for t in others),
               f"{who}: the {name} attacker's other checks pass (only memory gives it away): "
               f"{[(t['name'][:40], t['status']) for t in others if t['status'] != 'passed']}")


def compile_budget(base: Path) -> None:
    """Two files of endless constexpr work: the per-file compile limit stops the first, the
    submission's compile budget the second, and the rest are not compiled at all (CPU seconds)."""
    folder = base / "compile-budget"
    work = folder / "subs" / "constexpr"
    shutil.copytree(ROOT / "solutions" / CH3, work / CH3)
    # GCC stops a constant evaluation after -fconstexpr-ops-limit operations (2^25 in GCC 12: four to
    # six seconds of CPU here, close to the limit below), and after one such failure it evaluates no
    # more calls of that function: four functions of their own take four times as long.
    endless = "".join(f"constexpr long spin{k}(long n) {{ long x = {k}; for (long i = 0; i < n; ++i) "
                      f"for (long j = 0; j < n; ++j) x += i ^ j; return x; }}\nstatic_assert(spin{k}(200000) != 1);\n"
                      for k in range(4))
    prepend(work / DOT, endless)
    prepend(work / SCALED, endless)
    out = folder / "grades"
    start = time.monotonic()
    # Limits small enough that no machine finishes the endless work inside them: GCC gives up on
    # each evaluation on its own after -fconstexpr-ops-limit operations, and that error must not pass
    # for a compile the budget stopped.
    result = grade(out, [work], "--chapters", SCORES.number, "--compile-timeout", "6", "--compile-budget", "10")
    seconds = time.monotonic() - start
    print(result.stdout.decode(errors="replace"))
    report = reports_in(out).get("constexpr", {"tests": []})
    first, second = messages(report, DOT_ID), messages(report, SCALED_ID)
    rest = [m for e in SCORES.chapter.exercises if e not in (DOT_ID, SCALED_ID) for m in messages(report, e)]
    expect(first and all(m.startswith("timed_out: compile limit") for m in first),
           f"the first endless file is stopped at the per-file compile limit: {first[:1]}")
    expect(second and all(m.startswith("timed_out: compile budget") for m in second),
           f"the second at what is left of the compile budget: {second[:1]}")
    expect(rest and all(m.startswith("timed_out: compile budget") for m in rest),
           f"the other files wait for no compile once the budget is spent: {rest[:1]}")
    expect(seconds < 4 * 10 + 60, f"a submission's compiles cost at most its budget ({seconds:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
