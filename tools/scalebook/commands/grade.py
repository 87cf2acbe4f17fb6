"""./workbook grade [options] SUBMISSION...: grade submissions as a CTest run.

Grade scalebook submissions: ./workbook grade [options] SUBMISSION...

A submission is a folder: a student's whole copy of the workbook, or just its exercises/ folder.
Only the exercise files named by this (the instructor's) tree are taken from it, and only when they
are regular files. Grading is a CTest run: this command writes a CTest tree in DIR in which every
(submission, check) pair is one test (`alice/04-causal-masking/4.2 masked weights are exactly zero`,
labelled `alice`, `ch04` and `ex4.2`), each submission's compile and link steps are fixtures the
checks require, and then runs it with ctest, one submission after another (--jobs at once). The
verdict never comes from the submission's process: this tree's checks run in a trusted process
(chNN_checks_remote, never linked with student code) and call the student's functions in a worker
that is compiled, linked and run in bubblewrap boxes (tools/scalebook/grading/sandbox.py). From CTest's
results it writes DIR/students/NAME/report.json and junit.xml as each submission finishes, and
DIR/grades.csv after each one, so that a stopped run keeps what it graded and --resume goes on.
Afterwards `ctest --test-dir DIR -R 'alice/.*4\\.2' --output-on-failure` re-runs one check.
"""
from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from ..config import GRADING_BUILD, Settings, commit
from ..course import UsageError, resolve_chapter, term_chapters
from ..files import private, write_json
from ..grading import sandbox
from ..grading.collect import absent_students, collection_record
from ..grading.export import (AUTOGRADER_FORMATS, FORMATS, NEEDS_ROSTER, check_request, options_of,
                              request_problems, save_request, write_requested)
from ..grading.intake import Refused, fingerprint, refusal, refused_name, take_sources
from ..grading.kit import assemble_kit, build_kit
from ..grading import regrade
from ..grading.hidden import DEFAULT_POLICY, POLICIES
from ..grading.pages import CLASS_FACTS
from ..grading.report import read_record, refused_report, write_report
from ..grading.roster import read_roster
from ..grading.run import Run, run_local, run_merge, run_task, submit_to_slurm
from ..grading.supervise import CHILDREN, log
from ..grading.tree import tests_folder, write_submission_tests, write_tree
from ..loop import packages
from ..loop.setup import instructors_only
from ..verdicts import safe_text


LIMIT_OPTIONS = [  # option, Settings field, what it bounds
    ("--timeout", "call_seconds", "one call of a student's function"),
    ("--call-cpu", "call_cpu_seconds", "one call's CPU seconds"),
    ("--check-timeout", "check_seconds", "one check, all its calls together"),
    ("--submission-budget", "submission_seconds", "all checks of one submission"),
    ("--compile-timeout", "compile_seconds", "CPU seconds compiling one exercise file"),
    ("--compile-budget", "compile_budget_seconds", "CPU seconds compiling all files of one submission"),
]


def add_export_options(parser: argparse.ArgumentParser) -> None:
    """--export and what the gradebook files need: the roster, the assignment's name and ids, columns."""
    exports = parser.add_argument_group("gradebook files to import into an LMS, from this run's reports, into "
                                        "DIR/exports/ (tools/scalebook/grading/export/)")
    exports.add_argument("--export", metavar="FORMATS",
                         help=f"comma-separated: {', '.join(FORMATS)} (each needs --roster). The autograders' own "
                              f"results.json per submission ({', '.join(AUTOGRADER_FORMATS)}) are written where this "
                              "grader runs inside Gradescope or PrairieLearn; no LMS imports them from here")
    exports.add_argument("--roster", type=Path, metavar="ROSTER",
                         help="the class's roster (id,name,email,repository[,deadline,section,login,canvas_id]): "
                              "the gradebooks' rows, a submission named by its id; its students without a "
                              "submission are named")
    exports.add_argument("--assignment", default="scalebook", metavar="NAME",
                         help="the assignment's (or grade item's) name in the LMS (default: scalebook)")
    exports.add_argument("--assignment-id", metavar="ID[,ID...]",
                         help="Canvas's assignment id (the number its export shows in 'NAME (ID)'); one per chapter "
                              "with --per-chapter; without it Canvas makes a new assignment")
    exports.add_argument("--per-chapter", action="store_true",
                         help="one gradebook column per chapter graded (default: one column, the total)")
    exports.add_argument("--scale-to", type=float, metavar="MAX",
                         help="Canvas's and Moodle's grades as points scaled to MAX (e.g. 100), each column out of MAX "
                              "(default: the points; Moodle refuses a grade above 100 unless the site allows more)")
    exports.add_argument("--moodle-key", choices=("email", "idnumber"), default="email",
                         help="how Moodle finds each student: the roster's email (default) or its id as Moodle's "
                              "ID number")
    exports.add_argument("--prairielearn-qid", metavar="QID[,QID...]",
                         help="the PrairieLearn question that takes the grade (its folder under questions/); one per "
                              "chapter with --per-chapter")


def add_limit_and_slurm_options(parser: argparse.ArgumentParser, defaults: Settings) -> None:
    """grade's time limits and budgets (from Settings) and its Slurm options, as argument groups."""
    limits = parser.add_argument_group("time limits and budgets (wall-clock seconds unless CPU is said)")
    for option, field, what in LIMIT_OPTIONS:
        default = getattr(defaults, field)
        limits.add_argument(option, type=int, default=default, metavar="S", dest=field,
                            help=f"{what} (default {default})")
    cluster = parser.add_argument_group("Slurm (tools/scalebook/grading/slurm.py): DIR on a filesystem every node sees")
    cluster.add_argument("--slurm", nargs="?", const="", metavar="'SBATCH OPTIONS'",
                         help="grade as a Slurm job array, one task per submission, then a merge job; "
                              "the sbatch options in one quoted word, e.g. --slurm='--partition=short'")
    cluster.add_argument("--slurm-concurrency", type=int, default=16, metavar="N",
                         help="array tasks running at once (default 16)")
    cluster.add_argument("--wait", action="store_true", help="with --slurm: wait for the jobs to end")


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="./workbook grade", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="grades", help="output folder (default: grades/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once, at most the cores (default: the cores)")
    parser.add_argument("--chapters", metavar="LIST",
                        help="grade only these chapters, e.g. 3,4 (an assignment); default: the term's (term.json), "
                             "or every chapter")
    parser.add_argument("--resume", action="store_true",
                        help="skip submissions whose report was made from the same inputs (files, kit, limits)")
    parser.add_argument("--show-hidden", choices=POLICIES, default=DEFAULT_POLICY, dest="hidden_policy",
                        help="what a student's report, page and exports show of the hidden checks: a count per "
                             "chapter (count, the default) or each one's label (what it covers, never its input) and "
                             "whether it passed (names)")
    parser.add_argument("--compare", type=Path, metavar="OLD_DIR",
                        help="a regrade: grade into --out (a new folder), reusing OLD_DIR's verdicts whose inputs did "
                             "not change, and show every verdict that changed; OLD_DIR is not touched until "
                             "./workbook grade --accept NEW_DIR --into OLD_DIR. Given again after a stop, the same "
                             "command resumes the preview")
    add_limit_and_slurm_options(parser, defaults)
    add_export_options(parser)
    parser.add_argument("--similar-to", action="append", type=Path, default=[], metavar="FOLDER",
                        help="a reference folder (last year's class, public solutions: one submission or a folder "
                             "of them) whose files the similarity page compares with the class's, not with each "
                             "other (grading/similarity.py); may be given more than once")
    parser.add_argument("--no-similarity", action="store_false", dest="similarity",
                        help="leave the similarity page out (and its engine uninstalled): for a grader that sees "
                             "one submission at a time, as the Gradescope and PrairieLearn images do")
    parser.add_argument("submissions", nargs="+", type=Path)
    args = parser.parse_args(argv)
    numbers = {field: getattr(args, field) for _, field, _ in LIMIT_OPTIONS}
    if args.jobs < 1 or min(numbers.values()) < 1:
        parser.error("--jobs and every time limit must be at least 1")
    if args.slurm and not args.slurm.lstrip().startswith("-"):
        parser.error(f"--slurm takes sbatch's options in one word, e.g. --slurm='--partition=short', not "
                     f"'{args.slurm}' (give submissions after the options)")
    cores = len(os.sched_getaffinity(0))
    if args.jobs > cores:
        parser.error(f"--jobs {args.jobs} is more than the {cores} cores: each submission's box is given one "
                     "core, so that one submission cannot slow a classmate graded at the same time")
    absent = [str(f) for f in args.similar_to if not f.is_dir()]
    if absent:
        parser.error(f"--similar-to: not a folder: {', '.join(absent)}")
    args.chapter_list = term_chapters()
    if args.chapters:
        try:
            args.chapter_list = [resolve_chapter(c.strip()) for c in args.chapters.split(",")]
        except UsageError as error:
            parser.error(str(error))
    args.settings = Settings(**numbers)
    args.export_request = export_request(parser, args)
    if args.compare is not None:
        if args.slurm is not None:
            parser.error("--compare grades a new folder here: not with --slurm")
        why = regrade.compare_refusal(args.compare.resolve(), Path(args.out).resolve())
        if why:
            parser.error(f"--compare: {why}")
        # The same command again, after a stop: what was graded already is kept (--resume's rule).
        args.resume = args.resume or regrade.is_preview_of(Path(args.out).resolve(), args.compare.resolve())
    return args


def export_request(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict | None:
    """What --export asks for, checked now (before any grading): known formats, the roster a gradebook
    needs, as many Canvas ids as columns, names and question ids the importers would read as asked
    (export.request_problems). A roster given is read now too: its refused lines, its students
    without a submission and the submissions it does not name are said."""
    roster = None
    if args.roster is not None:
        try:
            students, refused = read_roster(args.roster, deadlines=False)
        except UsageError as error:
            parser.error(str(error))
        for line in refused:
            log(f"grade: roster line {line.line} left out of the gradebooks: {line.reason}")
        given = {s.name for s in args.submissions}
        absent = [s.id for s in students if s.id not in given]
        strangers = sorted(given - {s.id for s in students})
        if absent:
            log(f"grade: no submission for {len(absent)} roster student{'s' if len(absent) > 1 else ''}: "
                f"{', '.join(absent[:20])}{' ...' if len(absent) > 20 else ''}")
        if strangers:
            log(f"grade: not in the roster: {', '.join(safe_text(n, 70) for n in strangers[:20])}")
        roster = str(args.roster.resolve())
    if not args.export:
        return None
    formats = [f.strip() for f in args.export.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS + AUTOGRADER_FORMATS]
    if unknown or not formats:
        parser.error(f"--export: unknown format {', '.join(unknown) or '(none)'}; the formats are {', '.join(FORMATS)}"
                     + (" (prairielearn is PrairieLearn's scores upload; its external grader's results.json is "
                        "prairielearn-results)" if "prairielearn-results" in unknown else ""))
    if any(f in NEEDS_ROSTER for f in formats) and args.roster is None:
        parser.error(f"--export {','.join(f for f in formats if f in NEEDS_ROSTER)} needs --roster ROSTER "
                     "(a gradebook's rows are the roster's students)")
    ids = tuple(i.strip() for i in args.assignment_id.split(",")) if args.assignment_id else ()
    wanted = len(args.chapter_list) if args.per_chapter else 1
    if ids and len(ids) != wanted:
        parser.error(f"--assignment-id: {len(ids)} ids for {wanted} column{'s' if wanted > 1 else ''} "
                     f"({'one per chapter graded' if args.per_chapter else 'the total'})")
    if args.scale_to is not None and not 0 < args.scale_to <= 1e6:
        parser.error(f"--scale-to: {args.scale_to:g} is not a maximum grade (a number above 0)")
    if "prairielearn" in formats and not args.prairielearn_qid:
        parser.error("--export prairielearn needs --prairielearn-qid QID: the question (its folder under questions/) "
                     "whose score each row sets")
    qids = tuple(q.strip() for q in args.prairielearn_qid.split(",")) if args.prairielearn_qid else ()
    request = {"formats": formats, "roster": roster, "assignment": args.assignment, "assignment_ids": list(ids),
               "per_chapter": args.per_chapter, "moodle_key": args.moodle_key, "scale_to": args.scale_to,
               "qids": list(qids)}
    problems = request_problems(request, options_of(request, {}, [], args.chapter_list))
    if problems:
        parser.error("; ".join(problems))
    return request


def take_in(args, out_dir: Path, kit: dict, plan: Run) -> tuple[list[dict], list[str]]:
    """Every submission named on the command line: refused with a report saying why, already graded
    (--resume, same inputs), or copied into the tree to be graded. Returns the reports so far and
    the names to grade."""
    tree, chapters = out_dir / "ctest", plan.chapters
    maximum = sum(c["points"] for c in kit["checks"].values())
    reports, todo, seen = [], [], set()

    def refuse(submission: Path, reason: str) -> None:
        report = refused_report(refused_name(submission), reason, maximum, plan.commit)
        write_report(report, out_dir, plan.hidden_policy)
        reports.append(report)
        plan.refused.append(report["submission"])
        log(f"{safe_text(submission.name, 80)}: {reason}")

    for submission in args.submissions:
        name = submission.name
        reason = refusal(submission, seen, out_dir)
        seen.add(name)
        if reason:
            refuse(submission, reason)
            continue
        folder = tests_folder(tree, name)
        try:
            if args.resume:
                old = read_record(out_dir, name)
                sources, _ = take_sources(submission, None, chapters)
                if old and old.get("fingerprint") == fingerprint(sources, kit):
                    reports.append(old)
                    plan.submissions[name] = {"sources": sources, "refused_files": old.get("refused_files", [])}
                    if not (folder / "CTestTestfile.cmake").exists():
                        write_submission_tests(tree, name, kit, chapters)
                    log(f"{name}: already graded ({old['score']}/{old['max_score']})")
                    continue
            shutil.rmtree(folder / "src", ignore_errors=True)
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            sources, refused_files = take_sources(submission, folder / "src", chapters)
        except Refused as error:
            refuse(submission, str(error))
            continue
        write_submission_tests(tree, name, kit, chapters)
        plan.submissions[name] = {"sources": sources, "refused_files": refused_files}
        todo.append(name)
    return reports, todo


def with_collection(args, plan: Run, reports: list[dict], out_dir: Path) -> None:
    """What `collect` recorded of each submission taken in (grading/collect.py: the collection.json
    beside its folder), kept in the plan for its report: the commit graded. A report kept by --resume
    whose record changed (collected anew, the same files) is rewritten with the new one."""
    kept = {r["submission"]: r for r in reports if not r.get("refused")}
    seen = set()
    for submission in args.submissions:
        entry = plan.submissions.get(submission.name)
        if entry is None or submission.name in seen:  # a duplicate's name is the first one's
            continue
        seen.add(submission.name)
        entry["collected"] = collection_record(submission, entry["sources"], plan.chapters)
        old = kept.get(submission.name)
        if old is not None and old.get("collected") != entry["collected"]:
            old.pop("collected", None)
            old.update({"collected": entry["collected"]} if entry["collected"] else {})
            write_report(old, out_dir, plan.hidden_policy)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--task":  # a Slurm task: grade these names of DIR
        return run_task(Path(argv[1]), argv[2:])
    if len(argv) == 2 and argv[0] == "--merge":  # the Slurm merge job
        return run_merge(Path(argv[1]))
    instructors_only("grading")
    if argv[:1] == ["--accept"] or (argv and argv[0].startswith("--accept=")):
        return regrade.accept_command(argv)
    # The pages' python3-jinja2, and the similarity engine unless it is not wanted (the autograders),
    # installed first, as for every command (--help included: the fresh machine's test runs it)
    packages.ensure("autograder" if "--no-similarity" in argv else "grade")
    args = parse_arguments(argv)
    CHILDREN.install("grade")
    sandbox.check_available()  # or SandboxError: workbook.py says why, exit status 2
    sandbox.sweep_cgroups()
    out_dir = Path(args.out).resolve()
    (out_dir / "ctest").mkdir(mode=0o700, parents=True, exist_ok=True)
    private(out_dir)
    with regrade.grading_lock(out_dir):
        return grade_locked(args, out_dir)


def grade_locked(args, out_dir: Path) -> int:
    log("Building the grading kit (this tree's checks, once)...")
    built = build_kit(GRADING_BUILD, args.chapter_list)
    kit = assemble_kit(built, GRADING_BUILD, args.chapter_list, args.settings, out_dir / "ctest" / "kit")
    refusal_of_export, _ = check_request(args.export_request, kit, args.chapter_list)
    if refusal_of_export:  # before grading anything: the file asked for could not be imported
        raise UsageError(refusal_of_export)
    # From here on everything this run writes, and its steps and boxes, is the grading user's alone
    # (the kit's build folder above is the instructor's, made with the instructor's umask).
    os.umask(0o077)
    plan = Run(out_dir)
    plan.chapters = args.chapter_list
    plan.commit = commit(with_changes=True)  # the reports name the tree graded with, erratum or not
    plan.submissions, plan.refused = {}, []
    plan.hidden_policy = args.hidden_policy
    plan.compare = regrade.start(args.compare.resolve(), out_dir) if args.compare is not None else None
    plan.references = [str(folder.resolve()) for folder in args.similar_to]
    plan.similarity = args.similarity
    reports, todo = take_in(args, out_dir, kit, plan)
    with_collection(args, plan, reports, out_dir)
    roster = read_roster(args.roster, deadlines=False)[0] if args.roster is not None else None
    write_json(out_dir / CLASS_FACTS, {"absent": absent_students(args.submissions, roster)})  # the class page's
    write_tree(out_dir, list(plan.submissions))
    plan.save()
    private(out_dir)  # the kit's copies kept their sources' modes
    save_request(out_dir, args.export_request)
    if args.slurm is not None:
        return submit_to_slurm(args, out_dir, todo)  # the merge job writes the exports
    status = run_local(plan, kit, reports, todo, args.jobs)
    for line in write_requested(out_dir, plan.reports(), plan.chapters):
        log(line)
    if plan.compare is not None:
        status = max(status, regrade.preview(plan))
    return status

