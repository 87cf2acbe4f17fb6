"""Runs a grading plan: here, several at once, or as Slurm tasks and a merge.

A grading run: its plan (kept in DIR/ctest/run.json), the submissions graded here at once or as
Slurm tasks, the merge after them, and the grades, CSV and pages written as each one finishes.
"""
from __future__ import annotations

import concurrent.futures
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from ..config import ROOT, TOOLS
from ..course import Chapter, all_chapters
from ..errors import SlurmError
from ..files import read_json, write_json
from ..verdicts import safe_text
from .export import write_requested
from .export.grades_csv import write_csv
from .hidden import DEFAULT_POLICY, student_view
from .report import grade, read_record, record_path, refused_report, summary_line, write_report
from .supervise import CHILDREN, log
from .tree import reports_folder


def pages_module():
    """grading/pages.py (the feedback and class pages), where this tree has it."""
    try:
        from . import pages
    except ImportError:
        return None
    return pages if hasattr(pages, "write_feedback") and hasattr(pages, "write_class_page") else None


def write_pages(reports: list[dict], out_dir: Path, chapters: list[Chapter], commit: str,
                feedback_for: list[dict], policy: str = DEFAULT_POLICY, analysis: dict | None = None) -> None:
    """For each record of FEEDBACK_FOR, DIR/students/NAME/feedback.html (the student's: the hidden
    checks by POLICY) and DIR/ctest/students/NAME/feedback.html (the instructor's: every check);
    DIR/index.html for the class (with ANALYSIS, its section on what the class got wrong)."""
    pages = pages_module()
    if pages is None:
        return
    try:  # the grades are written already: a page that cannot be made is said, never the run's end
        context = pages.make_context(ROOT, chapters, commit=commit)
        for report in feedback_for:
            if not report.get("refused"):
                pages.write_feedback(student_view(report, policy),
                                     reports_folder(out_dir, report["submission"]) / "feedback.html", context)
                pages.write_feedback(report, record_path(out_dir, report["submission"]).parent / "feedback.html",
                                     context)
        pages.write_class_page(reports, out_dir / "index.html", context, analysis)
    except Exception as error:
        log(f"grade: the pages were not written: {safe_text(str(error))}")


def write_analysis(plan: "Run", reports: list[dict]) -> dict | None:
    """DIR/analysis.json and DIR/similarity.html (grading/analysis.py), once the class is graded:
    what the class got wrong, for the instructor. A failure is said, never the run's end."""
    if pages_module() is None:
        return None
    try:
        from .analysis import analyse
        result = analyse(plan.out_dir, reports, plan.submissions, plan.chapters, plan.references, plan.commit,
                         similarity=plan.similarity)
    except Exception as error:
        log(f"grade: the class analysis was not written: {safe_text(str(error))}")
        return None
    similar = result["similarity"]
    log(f"analysed the class in {result['seconds']:.1f} s: {len(result['named_mistakes']['teach_again'])} mistake(s) "
        f"to teach again, {len(result['shared_wrong_answers'])} shared wrong answer(s), " +
        (f"{sum(e['pairs_above'] for e in similar['exercises'])} similar pair(s)" if not similar.get("skipped")
         else similar["skipped"]) + f"; {plan.out_dir / 'similarity.html'}")
    return result


class Run:
    """One grading run's plan, kept in DIR/ctest/run.json so that the Slurm jobs (tasks and the
    merge) grade and merge exactly what was planned: the chapters, the commit, each submission's
    files and refusals, and the reports of submissions refused outright."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.tree = out_dir / "ctest"
        data = read_json(self.tree / "run.json") or {}
        self.chapters = [c for c in all_chapters() if c.folder in data.get("chapters", [])]
        self.commit = data.get("commit", "unknown")
        self.submissions: dict[str, dict] = data.get("submissions", {})
        self.refused: list[str] = data.get("refused", [])
        self.hidden_policy: str = data.get("hidden_policy", DEFAULT_POLICY)
        self.compare: dict | None = data.get("compare")     # a regrade: the grading it is compared with
        self.references: list[str] = data.get("references", [])  # --similar-to: compared with the class
        self.similarity: bool = data.get("similarity", True)        # False: --no-similarity

    def save(self) -> None:
        write_json(self.tree / "run.json", {"chapters": [c.folder for c in self.chapters], "commit": self.commit,
                                            "submissions": self.submissions, "refused": self.refused,
                                            "hidden_policy": self.hidden_policy, "compare": self.compare,
                                            "references": self.references, "similarity": self.similarity})

    def earlier(self, name: str) -> dict | None:
        """In a regrade, NAME's record in the grading compared with (its verdicts may be reused)."""
        return read_record(Path(self.compare["dir"]), name) if self.compare else None

    def reports(self) -> list[dict]:
        """The records written (DIR/ctest/students/NAME/record.json), each submission's and each refusal's."""
        found = []
        for name in [*self.submissions, *self.refused]:
            report = read_record(self.out_dir, name)
            if report is not None:
                found.append(report)
        return found


def run_task(out_dir: Path, names: list[str]) -> int:
    """A Slurm array task (or anyone): grades NAMES of the tree planned in OUT_DIR."""
    os.umask(0o077)  # what it writes is the grading user's alone (see commands/grade.py)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, CHILDREN.stop)
    plan = Run(out_dir)
    kit = read_json(plan.tree / "kit" / "kit.json")
    failures = 0
    for name in names:
        entry = plan.submissions[name]
        try:
            report = grade(name, plan.tree, out_dir, kit, plan.chapters, entry["sources"], entry["refused_files"],
                           plan.commit, {}, collected=entry.get("collected"), policy=plan.hidden_policy,
                           earlier=plan.earlier(name))
        except Exception as error:
            failures += 1
            report = refused_report(name, f"grading failed: {error}", sum(c["points"] for c in kit["checks"].values()),
                                    plan.commit)
            write_report(report, out_dir, plan.hidden_policy)
        write_pages([report], out_dir, plan.chapters, plan.commit, [report], plan.hidden_policy)
        log(summary_line(report, names.index(name) + 1, len(names)))
    return 1 if failures else 0


def run_merge(out_dir: Path) -> int:
    """The job after every Slurm task: grades.csv and the class page from the reports written."""
    os.umask(0o077)
    plan = Run(out_dir)
    reports = plan.reports()
    write_csv(reports, out_dir / "grades.csv", plan.chapters)
    write_pages(reports, out_dir, plan.chapters, plan.commit, [], plan.hidden_policy, write_analysis(plan, reports))
    for line in write_requested(out_dir, reports, plan.chapters):
        log(line)
    missing = [n for n in plan.submissions if read_record(out_dir, n) is None]
    log(f"merged {len(reports)} reports into {out_dir / 'grades.csv'}" +
        (f"; no report for {', '.join(missing)} (run again with --resume)" if missing else ""))
    return 1 if missing else 0


def array_tasks(names: list[str], max_array_size: int | None) -> list[list[str]]:
    """NAMES cut into a job array's tasks: one per submission, or, when the cluster's MaxArraySize
    (an array's indices run from 0 to MaxArraySize - 1) is smaller, MaxArraySize tasks of about
    equal shares."""
    tasks = min(len(names), max_array_size) if max_array_size else len(names)
    return [names[i::tasks] for i in range(tasks)] if tasks else []


def submit_to_slurm(args, out_dir: Path, todo: list[str]) -> int:
    """The class as a Slurm job array, one task per submission (or per shard of them when the
    cluster's MaxArraySize is smaller), at most --slurm-concurrency at once, and a merge job
    after all of them. DIR must be on a filesystem every node sees at the same path."""
    from . import slurm
    reason = slurm.available(cluster=False)
    if reason:
        raise SlurmError(f"--slurm: {reason}")
    env = dict(os.environ)
    python = [sys.executable, str(TOOLS / "workbook.py"), "grade"]
    if not todo:
        return run_merge(out_dir)
    commands = [[*python, "--task", str(out_dir), *group] for group in array_tasks(todo, slurm.max_array_size(env))]
    array, merge = slurm.submit_array(commands, env=env, workdir=out_dir, concurrency=args.slurm_concurrency,
                                      sbatch_options=shlex.split(args.slurm), then=[*python, "--merge", str(out_dir)])
    log(f"submitted {len(todo)} submissions as Slurm array job {array} ({len(commands)} tasks, at most "
        f"{args.slurm_concurrency} at once); job {merge} writes {out_dir / 'grades.csv'} after them")
    if not args.wait:
        return 0
    outcomes = slurm.wait([array, merge], env=env)
    failed = {job: o for job, o in outcomes.items() if getattr(o, "state", "") != "COMPLETED"}
    log(f"Slurm jobs ended: {len(outcomes) - len(failed)} completed" +
        (f", not completed: {', '.join(f'{j} {o.state}' for j, o in sorted(failed.items()))}" if failed else ""))
    return 1 if failed else 0


def run_local(plan: Run, kit: dict, reports: list[dict], todo: list[str], jobs: int) -> int:
    """Grades TODO here, JOBS at once, each with its share of the cores (a box uses one); writes the
    grades and pages as each one finishes."""
    out_dir, chapters, commit = plan.out_dir, plan.chapters, plan.commit
    maximum = sum(c["points"] for c in kit["checks"].values())
    started = time.monotonic()
    failures = 0
    hints: dict = {}
    parallel = max(1, len(os.sched_getaffinity(0)) // max(1, min(jobs, len(todo))))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(grade, name, plan.tree, out_dir, kit, chapters, plan.submissions[name]["sources"],
                               plan.submissions[name]["refused_files"], commit, hints, parallel,
                               collected=plan.submissions[name].get("collected"), policy=plan.hidden_policy,
                               earlier=plan.earlier(name)): name
                   for name in todo}
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            name = futures[future]
            try:
                report = future.result()
            except Exception as error:  # the grader failed for this one: one failed entry
                failures += 1
                report = refused_report(name, f"grading failed: {error}", maximum, commit)
                write_report(report, out_dir, plan.hidden_policy)
            reports.append(report)
            write_csv(reports, out_dir / "grades.csv", chapters)
            write_pages(reports, out_dir, chapters, commit, [report], plan.hidden_policy)
            log(summary_line(report, done, len(todo)))
    write_csv(reports, out_dir / "grades.csv", chapters)
    write_pages(reports, out_dir, chapters, commit, [] if todo else reports, plan.hidden_policy,
                write_analysis(plan, reports))
    log(f"graded {len(todo)} submissions in {time.monotonic() - started:.1f} s; {out_dir / 'grades.csv'}")
    log(f"re-run one check with: ctest --test-dir {out_dir} -R 'NAME/.*3\\.1' --output-on-failure")
    return 1 if failures else 0
