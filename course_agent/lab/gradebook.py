"""Grades as files other tools import: the grader's CSV, keyed by student, and the gradebook
CSVs of Canvas and Moodle.

A submission's student is told by where it lies: nbgrader's `submitted/<student>/<assignment>/`,
else the folder right below the one given to the grader (`submissions/alice/day03-lab.ipynb`:
alice; a `gh classroom clone` folder `day03-lab-alice`, with `strip="day03-lab-"`: alice), else
the file's name without `.ipynb`. Canvas's file is the shape of its own Gradebook export (Student,
ID, SIS User ID, SIS Login ID, Section, then one column per assignment, and a Points Possible row);
Moodle's is a user column, a grade column and a feedback column, mapped at import.
Deliberately not handled: rosters (matching a folder name to an LMS account is the instructor's),
and the answers a person reads (their points are given in nbgrader or in the LMS).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

__all__ = [
    "CANVAS_HEADER",
    "LMS_FORMATS",
    "MOODLE_HEADER",
    "student_id",
    "write_csv",
    "write_lms",
]

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # then assignments
CANVAS_POINTS = "Points Possible"  # the row under the header, as Canvas exports it
MOODLE_HEADER = ["Username"]  # then the grade, then "Feedback": each mapped on Moodle's import page
LMS_FORMATS = ("canvas", "moodle")


class Row(Protocol):
    """What of a grade row (rows.GradeRow) the files read."""

    submission: str
    passed: int | None
    total: int | None
    failed: tuple[int, ...]
    details: tuple[str, ...]
    seconds: float
    note: str
    written: tuple[tuple[str, str], ...]


def student_id(submission: str, roots: Sequence[Path] = (), strip: str = "") -> str:
    """Who handed `submission` in, from its path (see the module's docstring); `strip` is cut off
    the front of a folder's name (Classroom's `<assignment>-<login>`)."""
    path = Path(submission).absolute()
    if len(path.parts) > 4 and path.parts[-4] == "submitted":  # nbgrader's layout
        return path.parts[-3]
    for root in (Path(root).absolute() for root in roots):
        if root in path.parents and len(below := path.relative_to(root).parts) > 1:
            return below[0].removeprefix(strip) or below[0]
    return path.stem


def _rows(rows: Iterable[Row], roots: Sequence[Path], strip: str) -> list[tuple[str, Row]]:
    return [(student_id(row.submission, roots, strip), row) for row in rows]


def write_csv(rows: Iterable[Row], path: Path, roots: Sequence[Path] = (), strip: str = "") -> None:
    """The table as CSV, a student column first, each failed check's line in `details` and each
    answer a person reads in `written` (each joined by " | "; the answers add no points)."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        header = ["student", "submission", "passed", "total", "failed", "seconds", "note"]
        writer.writerow([*header, "details", "written"])
        for student, row in _rows(rows, roots, strip):
            writer.writerow(
                [
                    student,
                    row.submission,
                    "" if row.passed is None else row.passed,
                    "" if row.total is None else row.total,
                    " ".join(map(str, row.failed)),
                    f"{row.seconds:.1f}",
                    row.note,
                    " | ".join(row.details),
                    " | ".join(f"{title}: {text or '(no answer)'}" for title, text in row.written),
                ]
            )


def _feedback(row: Row) -> str:
    if row.passed is None:
        return f"no score: {row.note}"
    failed = f"; failed checks {' '.join(map(str, row.failed))}" if row.failed else ""
    return f"{row.passed}/{row.total} checks passed{failed}"


def write_lms(
    rows: Iterable[Row],
    path: Path,
    lms: str,
    assignment: str,
    roots: Sequence[Path] = (),
    strip: str = "",
) -> None:
    """`lms`'s gradebook import file ("canvas" or "moodle"): one row per student, the checks
    passed as points; a row without a score is left blank (the LMS then changes nothing)."""
    if lms not in LMS_FORMATS:
        raise ValueError(f"no LMS format {lms!r}: give one of {', '.join(LMS_FORMATS)}")
    graded = _rows(rows, roots, strip)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        if lms == "canvas":
            writer.writerow([*CANVAS_HEADER, assignment])
            total = max((row.total or 0 for _, row in graded), default=0)
            writer.writerow([CANVAS_POINTS, "", "", "", "", total])
            for student, row in graded:
                score = "" if row.passed is None else row.passed
                writer.writerow([student, "", "", student, "", score])
        else:
            writer.writerow([*MOODLE_HEADER, assignment, "Feedback"])
            for student, row in graded:
                score = "" if row.passed is None else row.passed
                writer.writerow([student, score, _feedback(row)])
