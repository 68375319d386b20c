"""Grades as files other tools import: the grader's CSV, keyed by student, and the gradebook
CSVs of Canvas and Moodle.

A row's student is the one students.py told from where its notebook lies (the first folder below
the one given to the grader), never anything inside it. Every text cell is written as
`spreadsheet_text` makes it (no cell starts like a formula), and each file is made new
(output_file.py), never written through a link. Canvas's file is the shape of its own Gradebook
export (Student, ID, SIS User ID, SIS Login ID, Section, then one column per assignment, and a
Points Possible row); Moodle's is a user column, a grade column and a feedback column, mapped at
import.
Deliberately not handled: rosters (matching a folder name to an LMS account is the instructor's),
and the answers a person reads (their points are given in nbgrader or in the LMS).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from course_agent.lab.output_file import write_file
from course_agent.lab.rows import spreadsheet_text
from course_agent.lab.students import student_id

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
    student: str


def _rows(rows: Iterable[Row], roots: Sequence[Path], strip: str) -> list[tuple[str, Row]]:
    """Each row with its student: the one it was graded for, else told from its path."""
    return [(row.student or student_id(row.submission, roots, strip), row) for row in rows]


def _write_rows(path: Path, lines: Iterable[Sequence[object]]) -> None:
    """`lines` as CSV in a new file at `path`, each text cell as a spreadsheet shows it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for line in lines:
        writer.writerow([spreadsheet_text(v) if isinstance(v, str) else v for v in line])
    write_file(path, buffer.getvalue())


def write_csv(rows: Iterable[Row], path: Path, roots: Sequence[Path] = (), strip: str = "") -> None:
    """The table as CSV, a student column first, each failed check's line in `details` and each
    answer a person reads in `written` (each joined by " | "; the answers add no points)."""
    header = ["student", "submission", "passed", "total", "failed", "seconds", "note"]
    lines: list[list[object]] = [[*header, "details", "written"]]
    for student, row in _rows(rows, roots, strip):
        lines.append(
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
    _write_rows(path, lines)


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
    lines: list[list[object]] = []
    if lms == "canvas":
        lines.append([*CANVAS_HEADER, assignment])
        total = max((row.total or 0 for _, row in graded), default=0)
        lines.append([CANVAS_POINTS, "", "", "", "", total])
        for student, row in graded:
            score = "" if row.passed is None else row.passed
            lines.append([student, "", "", student, "", score])
    else:
        lines.append([*MOODLE_HEADER, assignment, "Feedback"])
        for student, row in graded:
            score = "" if row.passed is None else row.passed
            lines.append([student, score, _feedback(row)])
    _write_rows(path, lines)
