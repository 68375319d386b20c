"""`course-agent grade`: its options, the table it prints and the files it writes, around grade.py.

Checks every output before any kernel starts, picks one notebook per student (students.py), grades
(or takes a row `--reuse` kept), prints one row per student, writes the CSV, LMS file, report,
figures and feedback asked for (each a new file, output_file.py), and with `--check N` answers for
one check (Classroom's one test per check).
Deliberately not handled: grading itself (grade.py) or drawing the report (report*.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from course_agent.lab.feedback import write_feedback
from course_agent.lab.grade import find_notebooks, grade
from course_agent.lab.gradebook import LMS_FORMATS, write_csv, write_lms
from course_agent.lab.jail import GB, Limits, sandbox_problem
from course_agent.lab.labs import LABS, lab_names
from course_agent.lab.output_file import UnsafeOutput, write_file
from course_agent.lab.progress import GradeProgress
from course_agent.lab.report import ClassReport
from course_agent.lab.reuse import keep_rows, kept_rows
from course_agent.lab.rows import GradeRow, one_line
from course_agent.lab.students import one_per_student, student_rows

__all__ = ["NOT_DEFENDED", "build_parser", "main_grade", "print_table"]

NOT_DEFENDED = (
    "--no-sandbox: each kernel runs as this user, outside any sandbox: a notebook can read the "
    "grader's files and other submissions, write the installed package, see and kill other "
    "processes, use the network and any memory, and leave processes behind; only the per-cell "
    "timeout and --notebook-timeout still hold"
)


def _columns(row: GradeRow) -> list[str]:
    failed = " ".join(map(str, row.failed)) or ("-" if row.passed is not None else "?")
    seconds = f"{row.seconds:.1f}"
    return [one_line(row.submission), row.score, failed, seconds, one_line(row.note)]


def print_table(rows: Iterable[GradeRow], out: TextIO) -> None:
    """submission, score, failed checks, seconds and a note, in aligned columns."""
    lines = [["submission", "score", "failed", "seconds", "note"]]
    lines += [_columns(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    for line in lines:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1]), line[2].ljust(widths[2])]
        cells.append(line[3].rjust(widths[3]))
        print("  ".join([*cells, line[4]]).rstrip(), file=out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent grade",
        description="Run each submitted lab notebook in its own kernel, its locked cells "
        "restored from the release, and print its self-test score, the checks that failed and "
        "the time it took. Nothing the notebook stored counts.",
    )
    parser.add_argument(
        "submissions",
        nargs="+",
        type=Path,
        metavar="SUBMISSION",
        help="a notebook, or a folder searched for *.ipynb",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60,
        metavar="SECONDS",
        help="longest a single cell may run (default 60)",
    )
    parser.add_argument(
        "--notebook-timeout",
        type=float,
        default=Limits.wall_seconds,
        metavar="SECONDS",
        help=f"longest a whole notebook may run (default {Limits.wall_seconds:g})",
    )
    parser.add_argument(
        "--memory",
        type=float,
        default=Limits.memory / GB,
        metavar="GB",
        help=f"memory cap of each sandbox, in GB (default {Limits.memory / GB:g})",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run kernels without the sandbox (where bubblewrap cannot start): see what is then "
        "not defended in docs/sandbox.md",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="notebooks run at once (default: the number of cores)",
    )
    parser.add_argument(
        "--csv",
        type=Path,
        metavar="FILE",
        help="also write the table to FILE, a student column first (the first folder below the "
        "one given: give nbgrader's submitted/ for its student ids)",
    )
    parser.add_argument(
        "--lms",
        nargs=2,
        metavar=("LMS", "FILE"),
        help=f"also write FILE for a gradebook to import: {' or '.join(LMS_FORMATS)}",
    )
    parser.add_argument(
        "--assignment",
        default="day03-lab",
        metavar="NAME",
        help="the gradebook column --lms fills (default day03-lab)",
    )
    parser.add_argument(
        "--strip-prefix",
        default="",
        metavar="PREFIX",
        help="cut PREFIX off student folder names (GitHub Classroom's ASSIGNMENT-LOGIN: "
        "--strip-prefix day03-lab-)",
    )
    parser.add_argument(
        "--lab",
        choices=sorted(LABS),
        help="grade every notebook as this lab (default: the lab each notebook's cells belong to)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write the class report to FILE (one self-contained HTML page: the scores, "
        "the failures per check, the most common failure of each, every row)",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="also write the report's figures to FILE as JSON"
    )
    parser.add_argument(
        "--check",
        type=int,
        metavar="N",
        help="grade as usual, then print check N's line for each submission and exit 0 only if "
        "every submission passed check N (one autograding test per check)",
    )
    parser.add_argument(
        "--reuse",
        type=Path,
        metavar="FILE",
        help="keep each row in FILE, and take it from there when a later run grades the same "
        "notebook unchanged (Classroom's one step per check: one grade, not one per check)",
    )
    parser.add_argument(
        "--feedback",
        type=Path,
        metavar="DIR",
        help="also write one Markdown file per submission to DIR, to hand back as it is",
    )
    return parser


def _check_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any kernel starts, an output that could not be written at the end."""
    if args.lms is not None and args.lms[0] not in LMS_FORMATS:
        parser.error(f"--lms {args.lms[0]}: give one of {', '.join(LMS_FORMATS)}")
    lms = Path(args.lms[1]) if args.lms else None
    outputs = [
        ("--reuse", args.reuse),
        ("--csv", args.csv),
        ("--lms", lms),
        ("--report", args.report),
        ("--json", args.json),
    ]
    for flag, path in outputs:
        if path is not None and (path.is_dir() or not path.parent.is_dir()):
            parser.error(f"{flag} {path}: give a file in a folder that exists")
    if args.feedback is not None and args.feedback.exists() and not args.feedback.is_dir():
        parser.error(f"--feedback {args.feedback} is a file: give a folder")


def _write_outputs(rows: list[GradeRow], args: argparse.Namespace, seconds: float) -> None:
    roots, strip = args.submissions, args.strip_prefix
    if args.csv:
        write_csv(rows, args.csv, roots, strip)
        print(f"written to {args.csv}")
    if args.lms:
        lms, path = args.lms[0], Path(args.lms[1])
        write_lms(rows, path, lms, args.assignment, roots, strip)
        print(f"{lms} gradebook file written to {path}")
    report = ClassReport.from_rows(rows, seconds)
    if args.report:
        write_file(args.report, report.html())
        print(f"class report written to {args.report}")
    if args.json:
        write_file(args.json, json.dumps(report.to_dict(), indent=1) + "\n")
        print(f"figures written to {args.json}")
    if args.feedback:
        written = write_feedback(rows, args.feedback)
        print(f"{len(written)} feedback files written to {args.feedback}")


def _checked_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Path]:
    """The notebooks the arguments name, once each figure is in range; parser.error otherwise."""
    if args.timeout <= 0 or args.jobs < 1:
        parser.error("--timeout must be above 0 and --jobs at least 1")
    most = max(len(lab.parts) for lab in LABS.values())
    if args.check is not None and not 1 <= args.check <= most:
        parser.error(f"--check must be a check's number, 1 to {most}")
    if args.notebook_timeout <= 0 or args.memory <= 0:
        parser.error("--notebook-timeout and --memory must be above 0")
    _check_outputs(parser, args)
    try:
        paths = find_notebooks(args.submissions)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    if not paths:
        parser.error("no *.ipynb found in the folders given")
    return paths


def main_grade(argv: Sequence[str] | None = None) -> int:
    """`course-agent grade ...`: 0 once every submission has a row (with `--check N`: 0 only if
    every one passed check N, else 1), 2 for bad usage."""
    parser = build_parser()
    args = parser.parse_args(argv)
    paths = _checked_arguments(parser, args)
    # One per student, by where it lies below the folders given (students.py).
    chosen = one_per_student(paths, args.submissions, lab_names(args.lab), args.strip_prefix)
    paths = [submission.path for submission in chosen if submission.path is not None]
    if args.no_sandbox:
        print(NOT_DEFENDED, file=sys.stderr)
    elif problem := sandbox_problem():
        print(f"course-agent grade: no sandbox: {problem}; or pass --no-sandbox", file=sys.stderr)
        return 2
    limits = Limits(memory=int(args.memory * GB), wall_seconds=args.notebook_timeout)
    started = time.perf_counter()
    # On stderr: a bar on a terminal, a line per notebook in a CI log; stdout keeps the table.
    kept = kept_rows(args.reuse, paths, args.lab) if args.reuse else {}
    todo = [path for path in paths if path not in kept]
    with GradeProgress(len(todo), sys.stderr) as progress:
        graded = grade(
            todo,
            args.timeout,
            args.jobs,
            args.lab,
            on_row=progress.update,
            limits=limits,
            sandbox=not args.no_sandbox,
        )
    fresh = dict(zip(todo, graded, strict=True))
    by_path = {path: kept.get(path) or fresh[path] for path in paths}
    if args.reuse and todo:
        keep_rows(args.reuse, paths, [by_path[path] for path in paths], args.lab)
    rows = student_rows(chosen, by_path)
    seconds = time.perf_counter() - started
    print_table(rows, sys.stdout)
    print(
        f"{len(todo)} submissions graded in {seconds:.1f} s "
        f"with {min(args.jobs, max(len(todo), 1))} at a time"
        + (f"; {len(kept)} taken from {args.reuse}, graded there earlier" if kept else "")
    )
    try:
        _write_outputs(rows, args, seconds)
    except UnsafeOutput as exc:
        print(f"course-agent grade: {exc}", file=sys.stderr)
        return 2
    if args.check is not None:
        return _report_check(rows, args.check)
    return 0


def _report_check(rows: Sequence[GradeRow], number: int) -> int:
    """Check `number`'s verdict for each row, one line each; 0 iff every row passed it."""
    passed = True
    for row in rows:
        if row.passed is None:
            said, ok = f"no score: {row.note}", False
        elif number in row.failed:
            said, ok = row.details[row.failed.index(number)], False
        else:
            name = row.checks[number - 1] if number <= len(row.checks) else ""
            said, ok = f"{name}: passed", True
        passed = passed and ok
        print(one_line(f"{'v' if ok else 'x'} check {number} {row.submission}: {said}"))
    return 0 if passed else 1
