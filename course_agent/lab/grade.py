"""Grade submitted lab notebooks: restore, run in a fresh kernel, then score them ourselves.

Each submission gets the release's locked cells back (`restore`), runs in its own kernel without
keys, and is then scored by one more cell the grader appends: it imports the package's scoring
afresh and prints the report after a nonce drawn for that run, and only that line is read.
Nothing the notebook stored or displayed counts. A hung cell, a dead kernel or a file that is not
a notebook becomes a row saying so. Each notebook is graded as the lab its cells belong to
(labs.py), or as the one `--lab` names. Deliberately not handled: sandboxing (see kernel.py).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import os
import secrets
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .kernel import run_notebook
from .labs import LABS, Lab, detect_lab, find_lab
from .restore import restore

__all__ = [
    "GradeRow",
    "find_notebooks",
    "grade",
    "grade_one",
    "main_grade",
    "print_table",
    "run_scored",
    "write_csv",
]

# Appended after the notebook's last cell; only names it imports itself, so none the notebook bound.
SCORE_CELL = """\
# course-agent grade: the package scores the names this notebook defines (not the lab's cell).
from course_agent.lab.score import print_score

print_score({nonce!r}, {lab!r})"""


def _report(cell: Any, nonce: str) -> dict[str, Any] | None:
    """The report the score cell printed after `nonce`, or None; nothing else is believed."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            for line in output.get("text", "").splitlines():
                if line.startswith(f"{nonce} "):
                    return json.loads(line[len(nonce) + 1 :])
    return None


def _error(cell: Any) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f": {output.get('ename')}: {output.get('evalue')}"[:160]
    return ""


def run_scored(
    nb: Any, timeout: float, cwd: Path | None = None, lab: str = "day03-lab"
) -> tuple[str, dict | None]:
    """Run `nb` in place, then score it as `lab`; (what stopped the run or "", the report or None).

    The report is {"checks": [{"number", "ok", "line", ...}], "refused": [reason, ...]}.
    """
    import nbformat

    nonce = secrets.token_hex(16)
    source = SCORE_CELL.format(nonce=nonce, lab=find_lab(lab).name)
    nb.cells.append(nbformat.v4.new_code_cell(source, id=f"grader-{nonce[:8]}"))
    last = len(nb.cells) - 1

    def describe(index: int) -> str:
        return "the grader's self-test" if index == last else f"cell {index + 1}"

    try:
        problem = run_notebook(nb, timeout, cwd, describe)
    finally:
        scorer = nb.cells.pop()
    if problem:
        return problem, None
    report = _report(scorer, nonce)
    if report is None:
        return f"the grader's self-test gave no report{_error(scorer)}", None
    return "", report


@dataclass(frozen=True)
class GradeRow:
    """One submission's result. `passed` is None when it could not be scored."""

    submission: str
    passed: int | None
    total: int | None
    failed: tuple[int, ...]  # numbers of the checks that failed
    details: tuple[str, ...]  # their lines, "fragment merging: NotImplementedError: ..."
    seconds: float
    note: str = ""  # why it has no score, or why an exercise was refused; "" when all is fine

    @property
    def score(self) -> str:
        return "-" if self.passed is None else f"{self.passed}/{self.total}"


def grade_one(path: Path, timeout: float, lab: Lab | None = None) -> GradeRow:
    """Restore, run and score one submission as `lab` (None: the lab its cells belong to);
    never raises."""
    import nbformat

    started = time.perf_counter()

    def row(note: str, report: dict[str, Any] | None = None) -> GradeRow:
        seconds = time.perf_counter() - started
        if report is None:
            return GradeRow(str(path), None, None, (), (), seconds, note)
        checks = report["checks"]
        failed = [check for check in checks if not check["ok"]]
        return GradeRow(
            str(path),
            len(checks) - len(failed),
            len(checks),
            tuple(check["number"] for check in failed),
            tuple(check["line"] for check in failed),
            seconds,
            "; ".join(report.get("refused", [])),
        )

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # broken JSON, not UTF-8, not a notebook at all
        # nbformat's NotJSONError quotes the file; the JSON error behind it says where it broke.
        cause = exc.__cause__ or exc
        first_line = (str(cause).splitlines() or [""])[0][:100]
        return row(f"not a notebook: {type(cause).__name__}: {first_line}")
    lab = lab or detect_lab(nb)
    if lab is None:
        return row(f"not a lab: none of the cells of {' or '.join(LABS)}; give --lab")
    try:
        reference = _reference(lab.name)
        problem, report = run_scored(restore(nb, reference), timeout, lab=lab.name)
    except Exception as exc:  # the kernel would not start, or nbclient gave up on it
        return row(f"could not run: {type(exc).__name__}: {exc}"[:160])
    return row(problem, report)


@functools.cache
def _reference(lab: str) -> Any:
    """The release `lab` is restored from (read once; restore copies what it takes)."""
    import nbformat

    return nbformat.read(LABS[lab].released, as_version=4)


def grade(
    paths: Sequence[Path], timeout: float, jobs: int, lab: str | None = None
) -> list[GradeRow]:
    """Grade every notebook, `jobs` at a time (each in its own kernel process), in input order;
    each as `lab`, or as the lab its cells belong to."""
    chosen = None if lab is None else find_lab(lab)
    # Threads suffice: each one mostly waits on its kernel, which is a process of its own.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda path: grade_one(path, timeout, chosen), paths))


def _columns(row: GradeRow) -> list[str]:
    failed = " ".join(map(str, row.failed)) or ("-" if row.passed is not None else "?")
    return [row.submission, row.score, failed, f"{row.seconds:.1f}", row.note]


def print_table(rows: Iterable[GradeRow], out: TextIO) -> None:
    """submission, score, failed checks, seconds and a note, in aligned columns."""
    lines = [["submission", "score", "failed", "seconds", "note"]]
    lines += [_columns(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    for line in lines:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1]), line[2].ljust(widths[2])]
        cells.append(line[3].rjust(widths[3]))
        print("  ".join([*cells, line[4]]).rstrip(), file=out)


def write_csv(rows: Iterable[GradeRow], path: Path) -> None:
    """The table as CSV, plus each failed check's line in `details` (joined by " | ")."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["submission", "passed", "total", "failed", "seconds", "note", "details"])
        for row in rows:
            writer.writerow(
                [
                    row.submission,
                    "" if row.passed is None else row.passed,
                    "" if row.total is None else row.total,
                    " ".join(map(str, row.failed)),
                    f"{row.seconds:.1f}",
                    row.note,
                    " | ".join(row.details),
                ]
            )


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
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="notebooks run at once (default: the number of cores)",
    )
    parser.add_argument("--csv", type=Path, metavar="FILE", help="also write the table to FILE")
    parser.add_argument(
        "--lab",
        choices=sorted(LABS),
        help="grade every notebook as this lab (default: the lab each notebook's cells belong to)",
    )
    return parser


def main_grade(argv: Sequence[str] | None = None) -> int:
    """`course-agent grade ...`: 0 once every submission has a row, 2 for bad usage."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.jobs < 1:
        parser.error("--timeout must be above 0 and --jobs at least 1")
    try:
        paths = find_notebooks(args.submissions)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    if not paths:
        parser.error("no *.ipynb found in the folders given")
    started = time.perf_counter()
    rows = grade(paths, args.timeout, args.jobs, args.lab)
    print_table(rows, sys.stdout)
    print(
        f"{len(rows)} submissions graded in {time.perf_counter() - started:.1f} s "
        f"with {min(args.jobs, len(rows))} at a time"
    )
    if args.csv:
        write_csv(rows, args.csv)
        print(f"written to {args.csv}")
    return 0
