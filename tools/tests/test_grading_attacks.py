#!/usr/bin/env python3
"""The grader attacked as its most motivated student would: each attack is a submission graded
beside an honest one. Afterwards the honest one has full marks, every attacker has only what it
earned, the instructor's tree and the reports are as they were (also a few seconds later), and no
process of any submission is left running. Grading also refuses to run without its sandbox."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CH3, CH4 = "03-attention-scaling", "04-causal-masking"
DOT = f"{CH3}/ex1_dot_scores.cpp"
failures: list[str] = []


def expect(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


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


def workers_running(run: str) -> list[str]:
    """Processes of the grading run RUN (its workers are /worker-RUN in their boxes)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "cmdline").read_bytes().split(b"\0")[0] == f"/worker-{run}".encode():
                    found.append(proc.name)
            except OSError:
                pass
    return found


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="scalebook-attacks-"))
    try:
        return run(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


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

    # Every place it should not reach, tried from inside the student's function.
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
    if (access(path, F_OK) == 0) seen += std::string(path) + " ";
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
      out << "passed\\t3.1 dot scores of the worked example\\t\\n";
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
      std::ofstream("{out / 'honest' / 'report.json'}") << "{{}}";
      std::ofstream("{ROOT / 'tools' / 'run-check'}") << "#!/bin/sh\\nexit 0\\n";
      std::ofstream("{honest_file}") << "// overwritten\\n";
    }}
    _exit(0);
  }}
  return 0;
}}();''')

    # Kills everything it can see, and floods processes, memory and disk.
    killer = from_tree("killer", "solutions")
    prepend(killer / CH4 / "ex1_causal_mask.cpp", '''#include <csignal>
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
    prepend(zero / f"{CH3}/ex2_scaled_scores.cpp", '#include "/dev/zero"')
    incbin = from_tree("incbin", "solutions")
    prepend(incbin / DOT, f'__asm__(".pushsection .rodata\\n.incbin \\"{secret}\\"\\n.popsection");\n'
                          f'__asm__(".pushsection .rodata\\n.incbin \\"{ROOT / "solutions" / DOT}\\"\\n.popsection");')

    # Intake: a symlink to the instructor's solution, a file where a folder should be, reserved names.
    linked = from_tree("symlinked", "exercises")
    (linked / DOT).unlink()
    (linked / DOT).symlink_to(ROOT / "solutions" / DOT)
    (subs / "notes.txt").write_text("not a submission\n")
    (subs / "grades.csv").mkdir()
    shutil.copytree(ROOT / "exercises", subs / "=HYPERLINK(1)")

    everything = [*made.values(), subs / "notes.txt", subs / "grades.csv", subs / "=HYPERLINK(1)"]
    instructor_before = tree_hash(ROOT, tracked_files())
    honest_before = tree_hash(honest)
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), "--out", str(out),
                             "--jobs", "2", "--timeout", "2", *map(str, everything)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    seconds = time.monotonic() - start
    print(result.stdout)
    expect(result.returncode == 0, f"grading finishes (exit {result.returncode}) in {seconds:.0f} s")
    reports = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/report.json")}
    csv_before = (out / "grades.csv").read_bytes() if (out / "grades.csv").exists() else b""
    honest_report_before = (out / "honest" / "report.json").read_bytes()
    time.sleep(4)  # the daemon's moment

    maximum = reports["honest"]["max_score"]
    expect(reports["honest"]["score"] == maximum, "the honest submission keeps full marks")
    probe_messages = [t["message"] for t in reports["probe"]["tests"] if t["exercise"] == "3.1"]
    expect(probe_messages and all("probe saw: none" in m for m in probe_messages[:1]),
           f"the box sees no instructor file, classmate, host /tmp, socket or network: {probe_messages[:1]}")
    expect(reports["forger"]["score"] == 0, f"a forged verdict earns nothing ({reports['forger']['score']})")
    daemon_ch3 = [t for t in reports["daemon"]["tests"] if t["chapter"] == CH3]
    expect(all(t["status"] == "passed" for t in daemon_ch3), "the daemon's own honest work counts")
    expect((out / "grades.csv").read_bytes() == csv_before, "grades.csv is unchanged seconds later")
    expect((out / "honest" / "report.json").read_bytes() == honest_report_before,
           "the honest report is unchanged seconds later")
    expect(tree_hash(ROOT, tracked_files()) == instructor_before, "the instructor's tree is byte-identical")
    expect(tree_hash(honest) == honest_before, "the honest submission's folder is untouched")
    left = workers_running(reports["honest"]["run"])
    expect(left == [], f"no process of any submission is left running {left}")
    killer_ch3 = [t for t in reports["killer"]["tests"] if t["chapter"] == CH3]
    expect(all(t["status"] == "passed" for t in killer_ch3), "the flood in chapter 4 costs the killer's chapter 3 nothing")
    expect(all(t["status"] != "passed" for t in reports["killer"]["tests"] if t["exercise"].startswith("4.")),
           "the flooding exercise earns nothing")
    zero_t = reports["dev-zero"]["tests"]
    expect(all(t["status"] == "compile_error" for t in zero_t if t["exercise"] == "3.2") and
           all(t["status"] == "passed" for t in zero_t if t["exercise"] != "3.2"),
           "#include \"/dev/zero\" costs 3.2 only, within the limits")
    inc = [t for t in reports["incbin"]["tests"] if t["exercise"] == "3.1"]
    expect(all(t["status"] == "compile_error" for t in inc), ".incbin of a private file does not compile")
    expect(not any("PRIVATE-INSTRUCTOR-NOTE" in json.dumps(r) for r in reports.values()),
           "no private file's text reaches any report")
    sym = reports["symlinked"]
    expect(any("symlink" in f for f in sym.get("refused_files", [])) and
           all(t["status"] == "compile_error" for t in sym["tests"] if t["exercise"] == "3.1"),
           "a symlinked exercise file is refused and reported")
    refused = {r["submission"]: r for r in reports.values() if r.get("refused")}
    expect(len(refused) == 3, f"a file, a reserved name and a formula name are one refused entry each ({sorted(refused)})")
    with open(out / "grades.csv") as f:
        rows = list(csv.reader(f))
    expect(len(rows) == 1 + len(everything), f"grades.csv has a row per submission ({len(rows) - 1})")
    expect(not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row),
           "no cell of grades.csv is a formula")

    again = subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), "--out", str(out), "--resume",
                            str(honest), str(made["forger"])], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
    expect(again.stdout.count("already graded") == 2, "--resume skips what was graded for the same files")

    shim = base / "no-sandbox"
    shim.mkdir()
    (shim / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (shim / "bwrap").chmod(0o755)
    refusal = subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), "--out", str(base / "x"),
                              str(honest)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}"))
    expect(refusal.returncode == 2 and "refuses to run without a sandbox" in refusal.stdout,
           "without a working sandbox grading refuses to run")
    listener.close()
    tcp.close()
    shutil.rmtree(host_tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "every attack fails")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
