"""Grade submitted lab notebooks: restore, run in a fresh kernel, then ask it and judge here.

Each submission gets the release's locked cells back (`restore`) and runs in its own kernel
without keys, importing a copy of the package whose graded functions have no body (strip.py).
Then the grader draws its own cases (its seed from `secrets`) and asks one question per check;
the kernel answers with plain data and the grader judges it in this process (ask.py): nothing the
notebook stored, displayed, defined or raised counts. A hung cell, a dead kernel or a file that
is not a notebook becomes a row saying so, and the grader's own keys are cut from every row. Each
notebook is graded as the lab its cells belong to (labs.py), or as the one `--lab` names.
Deliberately not handled: sandboxing the kernel (jail.py), or the command and its outputs
(grade_command.py).
"""

from __future__ import annotations

import functools
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from course_agent.lab.ask import answer_in, cell_problem, judge_answers, questions
from course_agent.lab.gradebook import write_csv
from course_agent.lab.jail import Limits
from course_agent.lab.kernel import run_notebook
from course_agent.lab.labs import LABS, Lab, detect_lab, find_lab, lab_names
from course_agent.lab.notebook_file import NotANotebook, read_notebook
from course_agent.lab.progress import GradeProgress
from course_agent.lab.report import ClassReport
from course_agent.lab.restore import restore
from course_agent.lab.rows import GradeRow, grader_keys, one_line, row_from_report
from course_agent.lab.strip import PACKAGE, stripped_package
from course_agent.lab.students import one_per_student, student_rows
from course_agent.lab.written import written_answers
from course_agent.safety.redaction import redact

__all__ = [
    "GradeRow",
    "find_notebooks",
    "grade",
    "grade_class",
    "grade_one",
    "grader_keys",
    "one_line",
    "row_from_report",
    "run_judged",
    "write_csv",
]


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
            # In the sandbox the copy is wherever Python could find the package; outside, first
            # on the path.
            package=package / PACKAGE.name if stripped and sandbox else None,
            pythonpath=package if stripped and not sandbox else None,
        )
        outputs = [list(cell.get("outputs", [])) for cell in nb.cells[first:]]
    finally:
        del nb.cells[first:]
    if problem and (not stopped_at or stopped_at[-1] < first):
        return problem, None
    stopped = stopped_at[-1] if problem and stopped_at else None
    answered = _answered(asked, outputs, replies, first, stopped, problem)
    broken = _broken_exercises(nb, lab, replies)
    unasked = f"not asked: the run stopped before it ({problem})" if problem else ""
    report = judge_answers(lab, asked, answered, seed, broken, unasked)
    return "", {"seed": seed, "checks": [asdict(check) for check in report.checks]}


def _answered(
    asked: Sequence[Any],
    outputs: list[list[Any]],
    replies: dict[int, Any],
    first: int,
    stopped: int | None,
    problem: str,
) -> dict[int, Any]:
    """Each question's answer by its number: read from its cell, or why there is none (the run
    stopped in it); a question never reached has no entry."""
    answered = {}
    for question, outs in zip(asked, outputs, strict=True):
        index = first + question.number - 1
        if stopped == index:
            answered[question.number] = (None, f"no answer: {problem}")
        elif index in replies or outs:
            answered[question.number] = answer_in(outs, replies.get(index))
    return answered


def _broken_exercises(nb: Any, lab: Lab, replies: dict[int, Any]) -> dict[str, str]:
    """The exercise cells that failed to run, by cell id, with what their reply said."""
    exercise_cells = {exercise.cell for exercise in lab.exercises}
    return {
        cell.get("id"): said
        for index, cell in enumerate(nb.cells)
        if cell.get("id") in exercise_cells and (said := cell_problem(replies.get(index)))
    }


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

    started = time.perf_counter()
    hidden = grader_keys() if keys is None else keys

    def row(note: str, report: dict[str, Any] | None = None) -> GradeRow:
        return row_from_report(str(path), report, time.perf_counter() - started, note, hidden)

    try:  # a link (to the solution in the course folder, say), a FIFO, 20 MB or 64 deep: refused
        nb = read_notebook(path)
    except NotANotebook as exc:
        return row(str(exc))
    except Exception as exc:  # broken JSON, not a notebook at all
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
        # path.parent: its helper modules are copied into the kernel's own folder (private.py)
        problem, report = run_judged(
            restore(nb, reference), timeout, lab, path.parent, limits=limits, sandbox=sandbox
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
    given = [
        Path(path)
        for path in ([submissions] if isinstance(submissions, (str, Path)) else submissions)
    ]
    chosen = one_per_student(find_notebooks(given), given, lab_names())  # one per student
    paths = [submission.path for submission in chosen if submission.path is not None]
    started = time.perf_counter()
    with GradeProgress(len(paths), sys.stderr, bar=False) as progress:
        graded = grade(paths, timeout, jobs, on_row=progress.update)
    rows = student_rows(chosen, dict(zip(paths, graded, strict=True)))
    return ClassReport.from_rows(rows, time.perf_counter() - started)


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
