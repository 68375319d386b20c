"""Grade submitted lab notebooks: restore, run in a fresh kernel, then ask it and judge here.

Each submission gets the release's locked cells back (`restore`) and runs in its own kernel
without keys, importing a copy of the package whose graded functions have no body (strip.py).
Then the grader draws its own cases (its seed from `secrets`) and asks one question per check;
the kernel answers with plain data and the grader judges it in this process (ask.py): nothing the
notebook stored, displayed, defined or raised counts. A hung cell, a dead kernel or a file that
is not a notebook becomes a row saying so, and the grader's own keys are cut from every row. Each
notebook is graded as the lab its cells belong to (labs.py), or as the one `--lab` names.
Deliberately not handled: sandboxing the kernel (see kernel.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TextIO

from course_agent.lab.ask import answer_in, cell_problem, judge_answers, questions
from course_agent.lab.feedback import write_feedback
from course_agent.lab.gradebook import LMS_FORMATS, write_csv, write_lms
from course_agent.lab.jail import GB, Limits, sandbox_problem
from course_agent.lab.kernel import run_notebook
from course_agent.lab.labs import LABS, Lab, detect_lab, find_lab
from course_agent.lab.progress import GradeProgress
from course_agent.lab.report import ClassReport
from course_agent.lab.restore import restore
from course_agent.lab.reuse import keep_rows, kept_rows
from course_agent.lab.rows import GradeRow, grader_keys, one_line, row_from_report
from course_agent.lab.strip import PACKAGE, stripped_package
from course_agent.lab.written import written_answers
from course_agent.safety.redaction import redact

__all__ = [
    "GradeRow",
    "find_notebooks",
    "grade",
    "grade_class",
    "grade_one",
    "grader_keys",
    "main_grade",
    "one_line",
    "print_table",
    "row_from_report",
    "run_judged",
    "write_csv",
]

LARGEST_NOTEBOOK = 20_000_000  # bytes: the labs with every output are under 100 KB
NOT_DEFENDED = (
    "--no-sandbox: each kernel runs as this user, outside any sandbox: a notebook can read the "
    "grader's files and other submissions, write the installed package, see and kill other "
    "processes, use the network and any memory, and leave processes behind; only the per-cell "
    "timeout and --notebook-timeout still hold"
)


def run_judged(
    nb: Any,
    timeout: float,
    lab: Lab,
    cwd: Path | None = None,
    *,
    seed: int | None = None,
    stripped: bool = True,
    limits: Limits | None = None,
    sandbox: bool = True,
) -> tuple[str, dict[str, Any] | None]:
    """Run `nb` in place, then ask its kernel `lab`'s questions and judge the answers here.

    ("", {"seed", "checks": [{"number", "name", "ok", "line"}, ...]}), or (what stopped the
    notebook before any question, None). `seed` (default: a fresh one) draws the cases;
    `stripped` gives the kernel the package without the graded functions (False for the
    solution, whose self-test output the release stores). The kernel runs in a sandbox (unless
    not `sandbox`) under `limits` (default: `Limits()`), the stripped copy bound over the package.
    """
    import nbformat

    seed = secrets.randbits(31) if seed is None else seed
    package = stripped_package(lab) if stripped else None
    asked = questions(lab, seed)
    first = len(nb.cells)
    tag = secrets.token_hex(4)
    for question in asked:
        nb.cells.append(nbformat.v4.new_code_cell(question.source, id=f"q{question.number}-{tag}"))
    replies: dict[int, Any] = {}
    stopped_at: list[int] = []  # the cell the run stopped in, if it stopped

    def describe(index: int) -> str:
        stopped_at.append(index)
        return f"check {index - first + 1}'s question" if index >= first else f"cell {index + 1}"

    try:
        problem = run_notebook(
            nb,
            timeout,
            cwd,
            describe,
            on_reply=replies.__setitem__,
            limits=limits or Limits(),
            sandbox=sandbox,
            # In the sandbox the copy is bound over the package; outside, first on the path.
            binds=[(package / PACKAGE.name, PACKAGE)] if stripped and sandbox else (),
            pythonpath=package if stripped and not sandbox else None,
        )
        outputs = [list(cell.get("outputs", [])) for cell in nb.cells[first:]]
    finally:
        del nb.cells[first:]
    if problem and (not stopped_at or stopped_at[-1] < first):
        return problem, None
    answered = {}
    for question, outs in zip(asked, outputs, strict=True):
        index = first + question.number - 1
        if problem and stopped_at and stopped_at[-1] == index:
            answered[question.number] = (None, f"no answer: {problem}")
        elif index in replies or outs:
            answered[question.number] = answer_in(outs, replies.get(index))
    exercise_cells = {exercise.cell for exercise in lab.exercises}
    broken = {
        cell.get("id"): said
        for index, cell in enumerate(nb.cells)
        if cell.get("id") in exercise_cells and (said := cell_problem(replies.get(index)))
    }
    unasked = f"not asked: the run stopped before it ({problem})" if problem else ""
    report = judge_answers(lab, asked, answered, seed, broken, unasked)
    return "", {"seed": seed, "checks": [asdict(check) for check in report.checks]}


def grade_one(
    path: Path,
    timeout: float,
    lab: Lab | None = None,
    keys: Sequence[str] | None = None,
    limits: Limits | None = None,
    sandbox: bool = True,
) -> GradeRow:
    """Restore, run and score one submission as `lab` (None: the lab its cells belong to); never
    raises. `keys` (default: the grader's) are cut out of the row, should a notebook print one."""
    import nbformat

    started = time.perf_counter()
    hidden = grader_keys() if keys is None else keys

    def row(note: str, report: dict[str, Any] | None = None) -> GradeRow:
        return row_from_report(str(path), report, time.perf_counter() - started, note, hidden)

    if path.is_symlink():  # a link to the solution, say, in the instructor's course folder
        return row("a symbolic link, not a notebook: hand in the notebook itself")
    try:
        if (size := path.stat().st_size) > LARGEST_NOTEBOOK:
            return row(f"too large: {size:,} bytes, at most {LARGEST_NOTEBOOK:,} are read")
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # broken JSON, not UTF-8, not a notebook at all
        # nbformat's NotJSONError quotes the file; the JSON error behind it says where it broke.
        cause = exc.__cause__ or exc
        first_line = (str(cause).splitlines() or [""])[0][:100]
        return row(f"not a notebook: {type(cause).__name__}: {first_line}")
    lab = lab or detect_lab(nb)
    if lab is None:
        return row(f"not a lab: none of the cells of {' or '.join(LABS)}; give --lab")
    # The answers a person reads: listed for the instructor, never scored.
    written = tuple((title, redact(text, hidden)) for title, text in written_answers(nb, lab))
    try:
        reference = _reference(lab.name)
        problem, report = run_judged(
            restore(nb, reference), timeout, lab, limits=limits, sandbox=sandbox
        )
    except Exception as exc:  # the kernel would not start, or nbclient gave up on it
        return replace(row(f"could not run: {type(exc).__name__}: {exc}"[:160]), written=written)
    return replace(row(problem, report), written=written)


@functools.cache
def _reference(lab: str) -> Any:
    """The release `lab` is restored from (read once; restore copies what it takes)."""
    import nbformat

    return nbformat.read(LABS[lab].released, as_version=4)


def grade(
    paths: Sequence[Path],
    timeout: float,
    jobs: int,
    lab: str | None = None,
    on_row: Callable[[GradeRow], None] | None = None,
    limits: Limits | None = None,
    sandbox: bool = True,
) -> list[GradeRow]:
    """Grade every notebook, `jobs` at a time (each in its own kernel process), in input order;
    each as `lab`, or as the lab its cells belong to.

    `on_row` is called with each row as soon as it is done (in this thread): the progress bar.
    """
    chosen = None if lab is None else find_lab(lab)
    keys = grader_keys()
    rows: dict[int, GradeRow] = {}
    # Threads suffice: each one mostly waits on its kernel, which is a process of its own.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(grade_one, path, timeout, chosen, keys, limits, sandbox): index
            for index, path in enumerate(paths)
        }
        for future in as_completed(futures):
            rows[futures[future]] = row = future.result()
            if on_row is not None:
                on_row(row)
    return [rows[index] for index in range(len(paths))]


def grade_class(
    submissions: Path | str | Sequence[Path | str], timeout: float = 60, jobs: int = 2
) -> ClassReport:
    """Grade notebooks (or folders of them) and return the class's report; in a notebook, the
    report shows itself. Progress goes to stderr as plain lines."""
    given = [submissions] if isinstance(submissions, (str, Path)) else submissions
    paths = find_notebooks(Path(path) for path in given)
    started = time.perf_counter()
    with GradeProgress(len(paths), sys.stderr, bar=False) as progress:
        rows = grade(paths, timeout, jobs, on_row=progress.update)
    return ClassReport.from_rows(rows, time.perf_counter() - started)


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


def find_notebooks(paths: Iterable[Path]) -> list[Path]:
    """Files as given; a folder stands for the notebooks below it (checkpoints skipped), sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path} does not exist: give notebook files or folders")
    return found


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
        help="also write the table to FILE, a student column first (the folder below the one "
        "given, or nbgrader's submitted/STUDENT/)",
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
        args.report.write_text(report.html(), encoding="utf-8")
        print(f"class report written to {args.report}")
    if args.json:
        args.json.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    if args.feedback:
        written = write_feedback(rows, args.feedback)
        print(f"{len(written)} feedback files written to {args.feedback}")


def main_grade(argv: Sequence[str] | None = None) -> int:
    """`course-agent grade ...`: 0 once every submission has a row (with `--check N`: 0 only if
    every one passed check N, else 1), 2 for bad usage."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
    rows = [kept.get(path) or fresh[path] for path in paths]
    if args.reuse and todo:
        keep_rows(args.reuse, paths, rows, args.lab)
    seconds = time.perf_counter() - started
    print_table(rows, sys.stdout)
    print(
        f"{len(todo)} submissions graded in {seconds:.1f} s "
        f"with {min(args.jobs, max(len(todo), 1))} at a time"
        + (f"; {len(kept)} taken from {args.reuse}, graded there earlier" if kept else "")
    )
    _write_outputs(rows, args, seconds)
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
