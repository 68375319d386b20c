"""A class's figures from its grade rows: the scores, how many fail each check and with what.

`ClassReport.from_rows(rows)` counts; `to_dict()` is the JSON other tools read, `html()` the page
(report_html.py draws it), and `_repr_html_` shows it inline in a notebook. The checks' names and
count come from the rows, not from the day-three lab. Deliberately not handled: grading (grade.py).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from course_agent.lab.report_html import render_fragment, render_page
from course_agent.lab.rows import NO_SCORE, GradeRow

__all__ = ["CheckFigures", "ClassReport", "Failure", "normalise"]
TOP = 3  # the most common failures kept of each check
# What a message's generated details look like; each becomes one placeholder, so that the same
# mistake met on a different case (another stream, id, size or temporary folder) groups as one.
DETAILS = [
    # Which exercise and cell: the same for every row of one check, so no part of the pattern.
    (re.compile(r"^exercises? [\d, ]+ \(cells? [^)]*\): "), ""),
    (re.compile(r"\s*\(and \d+ more of \d+ \w+\)"), ""),  # "(and 9 more of 11 streams)"
    # A temporary folder's generated name: /tmp/course-agent-selftest-k2j4/src -> <tmp>/src.
    (re.compile(r"(?:/private)?(?:/tmp|/var/folders/[^/\s]+/[^/\s]+/T)/[^/\s'\",:;)]+"), "<tmp>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<address>"),
    # Quoted text, as repr() or shown() quotes it; not the apostrophe of "don't".
    (re.compile(r"(?<!\w)'(?:[^'\\\n]|\\.)*'(?!\w)"), "'…'"),
    (re.compile(r'(?<!\w)"(?:[^"\\\n]|\\.)*"(?!\w)'), "'…'"),  # either quote: repr picks one
    (re.compile(r"\d+"), "N"),
]


def normalise(message: str) -> str:
    """`message` with its generated details (ids, quoted values, numbers, paths) blanked."""
    for pattern, placeholder in DETAILS:
        message = pattern.sub(placeholder, message)
    return message


def _reason(note: str) -> str:
    """Why a row has no score, as a kind: "timeout", "not a notebook", "kernel died in cell N"."""
    return normalise(note).split(": ", 1)[0] or "unknown"


@dataclass(frozen=True)
class Failure:
    """One way a check was failed: its message normalised, how many, and one as a student got it."""

    pattern: str
    count: int
    example: str  # the first in the class with this pattern

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "count": self.count, "example": self.example}


@dataclass(frozen=True)
class CheckFigures:
    """One check across the class: how many failed it, and its most common failures."""

    number: int
    name: str
    failed: int  # submissions that failed it, of those scored
    top: tuple[Failure, ...] = ()  # the TOP most common, most common first

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "name": self.name,
            "failed": self.failed,
            "most_common": self.top[0].to_dict() if self.top else None,
            "top": [failure.to_dict() for failure in self.top],
        }


def _check_names(rows: Iterable[GradeRow]) -> list[tuple[int, str]]:
    """Every (number, name) the rows' reports had, by number; a name missing from a row is "?"."""
    seen: dict[tuple[int, str], None] = {}
    for row in rows:
        for number in range(1, (row.total or 0) + 1):
            name = row.checks[number - 1] if number <= len(row.checks) else "?"
            seen.setdefault((number, name), None)
    return sorted(seen)


def _figures(rows: Sequence[GradeRow], number: int, name: str) -> CheckFigures:
    lines = [
        line
        for row in rows
        for failed, line in zip(row.failed, row.details, strict=False)
        if failed == number and (row.checks[number - 1 : number] or ("?",))[0] == name
    ]
    if not lines:
        return CheckFigures(number, name, 0)
    prefix = f"{name}: "  # every failed line starts with its check's name
    bare = [line.removeprefix(prefix) for line in lines]
    patterns = Counter(normalise(line) for line in bare)
    top = tuple(
        Failure(pattern, count, next(line for line in bare if normalise(line) == pattern))
        for pattern, count in patterns.most_common(TOP)
    )
    return CheckFigures(number, name, len(lines), top)


def _score_key(score: str) -> tuple[int, int]:
    if score == NO_SCORE:
        return (1 << 30, 0)
    passed, total = map(int, score.split("/"))
    return (total, passed)


@dataclass(frozen=True)
class ClassReport:
    """The figures of one graded class, and its rows as graded."""

    rows: tuple[GradeRow, ...]
    checks: tuple[CheckFigures, ...]
    scores: tuple[tuple[str, int], ...]  # ("0/7", n) ... ("7/7", n), then ("no score", n)
    unscored: tuple[tuple[str, int], ...]  # why, most common first: ("timeout", 3), ...
    seconds: float | None = None  # the whole run, wall clock, when known

    @classmethod
    def from_rows(cls, rows: Iterable[GradeRow], seconds: float | None = None) -> ClassReport:
        rows = tuple(rows)
        scores: Counter[str] = Counter(
            NO_SCORE if row.passed is None else row.score for row in rows
        )
        for total in {row.total for row in rows if row.total}:  # every bar, the empty ones too
            for passed in range(total + 1):
                scores[f"{passed}/{total}"] += 0
        unscored = Counter(_reason(row.note) for row in rows if row.passed is None)
        return cls(
            rows=rows,
            checks=tuple(_figures(rows, number, name) for number, name in _check_names(rows)),
            scores=tuple(sorted(scores.items(), key=lambda item: _score_key(item[0]))),
            unscored=tuple(unscored.most_common()),
            seconds=seconds,
        )

    @property
    def scored(self) -> int:
        return sum(row.passed is not None for row in self.rows)

    @property
    def full_marks(self) -> int:
        return sum(row.passed is not None and row.passed == row.total for row in self.rows)

    @property
    def median(self) -> float | None:
        """The median share of checks passed, of the rows with a score."""
        scored = [row for row in self.rows if row.passed is not None and row.total]
        shares = [(row.passed or 0) / (row.total or 1) for row in scored]
        return statistics.median(shares) if shares else None

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON (see the README's lab section for each key)."""
        return {
            "submissions": len(self.rows),
            "scored": self.scored,
            "full_marks": self.full_marks,
            "seconds": self.seconds,
            "scores": [{"score": score, "count": count} for score, count in self.scores],
            "checks": [check.to_dict() for check in self.checks],
            "unscored": [{"reason": reason, "count": count} for reason, count in self.unscored],
            "rows": [
                {
                    "submission": row.submission,
                    "passed": row.passed,
                    "total": row.total,
                    "failed": list(row.failed),
                    "note": row.note,
                    "seconds": round(row.seconds, 2),
                    # Answers a person reads and grades: listed, never counted in the score.
                    "written": [{"title": title, "text": text} for title, text in row.written],
                }
                for row in self.rows
            ],
        }

    def html(self) -> str:
        """The whole page: one self-contained file, no scripts, nothing fetched."""
        return render_page(self)

    def _repr_html_(self) -> str:
        """What Jupyter shows when a cell's value is this report."""
        return render_fragment(self)
