"""One submission's grade as a row, and what every output of the grader shares about rows.

The grader makes rows (grade.py); the table, the CSV, the progress bar, the class report and the
feedback files read them. Here so that all of those import it and none imports the grader.
Deliberately not handled: making a row from a kernel (grade.py) or drawing it (report*.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from course_agent.app.environment import read_environment
from course_agent.lab.kernel import SHORTEST_KEY, is_key_name
from course_agent.render.terminal import printable
from course_agent.safety.redaction import redact

__all__ = [
    "NO_SCORE",
    "GradeRow",
    "grader_keys",
    "one_line",
    "row_from_report",
    "short_names",
    "spreadsheet_text",
]

NO_SCORE = "no score"
# What makes a spreadsheet read a cell as a formula (or a DDE call) when it starts the cell.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


@dataclass(frozen=True)
class GradeRow:
    """One submission's result. `passed` is None when it could not be scored."""

    submission: str
    passed: int | None
    total: int | None
    failed: tuple[int, ...]  # numbers of the checks that failed
    details: tuple[str, ...]  # their lines, "fragment merging: exercise 1 (cell ...): ..."
    seconds: float
    note: str = ""  # why it has no score; "" when it has one
    checks: tuple[str, ...] = ()  # the name of every check the report had, in order
    written: tuple[tuple[str, str], ...] = ()  # (what it answers, text): a person reads, no points
    student: str = ""  # who handed it in (students.py), from where it lies; "" when not told

    @property
    def score(self) -> str:
        return "-" if self.passed is None else f"{self.passed}/{self.total}"


def one_line(text: str) -> str:
    """`text` on one terminal line: controls escaped as the terminal module does (ESC as `\\x1b`,
    a right-to-left override as `\\u202e`), newline and tab too: a file name or an error cannot
    draw a row of its own."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def spreadsheet_text(text: str) -> str:
    """`text` as a spreadsheet shows it and never runs it: one that starts like a formula (`=`,
    `+`, `-`, `@`, their full-width forms, a tab, CR or LF, after any spaces) gets a `'` first,
    which Excel, LibreOffice and Google Sheets read as "text"."""
    return f"'{text}" if text.lstrip(" ").startswith(FORMULA_START) else text


def short_names(submissions: Sequence[str]) -> dict[str, str]:
    """Each submission's path below the folder all of them share: `alice/day03-lab.ipynb`."""
    if not submissions:
        return {}
    parents = [os.path.dirname(os.path.abspath(path)) for path in submissions]
    root = os.path.commonpath(parents)
    return {path: os.path.relpath(os.path.abspath(path), root) for path in submissions}


def grader_keys() -> list[str]:
    """The values of the grader's own keys (its environment and ./.env): no row may show them."""
    try:
        env: Any = read_environment()
    except ValueError:  # an unreadable .env: the shell's keys still count
        env = os.environ
    keys = [value for name, value in env.items() if is_key_name(name)]
    return [value for value in keys if len(value) >= SHORTEST_KEY]


def row_from_report(
    submission: str,
    report: dict[str, Any] | None,
    seconds: float,
    note: str = "",
    keys: Sequence[str] = (),
) -> GradeRow:
    """The row for a judged report (None: `note` says why there is no score), keys cut out.

    The report is {"checks": [{"number", "name", "ok", "line"}, ...]}.
    """
    if report is None:
        return GradeRow(submission, None, None, (), (), seconds, redact(note, keys))
    checks = report["checks"]
    failed = [check for check in checks if not check["ok"]]
    return GradeRow(
        submission,
        len(checks) - len(failed),
        len(checks),
        tuple(check["number"] for check in failed),
        tuple(redact(check["line"], keys) for check in failed),
        seconds,
        "",
        tuple(str(check.get("name", "")) for check in checks),
    )
