"""A grade kept for the later steps of one CI job: Classroom runs one command per check, and each
would otherwise run and judge the whole notebook again (seven grades for one).

`course-agent grade NB --check N --reuse FILE`: the first step grades and writes each row to FILE
with the SHA-256 of the notebook it graded; a later step on a notebook of the same bytes (and the
same `--lab`) takes that row instead of grading again, so every check of one push is judged on
one run and one seed. FILE is the grader's own: in Classroom's workflow it sits where the step
before the grade removed every untracked file, and no grading kernel can reach it (the sandbox).
Deliberately not handled: keeping grades between jobs or machines (a fresh job grades afresh).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from course_agent.lab.output_file import write_file
from course_agent.lab.rows import GradeRow

__all__ = ["KEPT_LIMIT", "keep_rows", "kept_rows", "notebook_digest"]

KEPT_LIMIT = 20_000_000  # characters of FILE read: a row is a few KB, a class of 120 under 1 MB


def notebook_digest(path: Path) -> str:
    """The SHA-256 of the file's bytes, read in pieces (a submission may be any size); "" for a
    link, a FIFO or anything but a regular file, which are opened without being followed or
    waited on (the grader refuses them, so no row is kept for them)."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return ""
        for piece in iter(lambda: file.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def _row(data: dict[str, Any]) -> GradeRow:
    """A row as `keep_rows` wrote it; TypeError or ValueError for anything else."""
    row = GradeRow(
        submission=str(data["submission"]),
        passed=data["passed"],
        total=data["total"],
        failed=tuple(int(n) for n in data["failed"]),
        details=tuple(str(line) for line in data["details"]),
        seconds=float(data["seconds"]),
        note=str(data["note"]),
        checks=tuple(str(name) for name in data["checks"]),
        written=tuple((str(title), str(text)) for title, text in data["written"]),
        student=str(data.get("student", "")),
    )
    if not all(value is None or type(value) is int for value in (row.passed, row.total)):
        raise ValueError("passed and total are whole numbers or null")
    if row.passed is not None and (
        row.total is None
        or row.passed != row.total - len(row.failed)
        or len(row.details) != len(row.failed)
        or not all(1 <= n <= row.total for n in row.failed)
    ):
        raise ValueError("a score that its failed checks do not add up to")
    return row


def kept_rows(file: Path, paths: Sequence[Path], lab: str | None) -> dict[Path, GradeRow]:
    """The rows FILE keeps for these notebooks as they are now (same bytes, same `lab`); none
    when FILE is missing, too long or not what `keep_rows` writes."""
    try:  # no link followed, no FIFO waited on: a planted one keeps nothing
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return {}
            text = stream.read(KEPT_LIMIT + 1)
        entries = json.loads(text)["rows"] if len(text) <= KEPT_LIMIT else []
        by_digest = {(e["digest"], e["lab"]): _row(e["row"]) for e in entries}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
    found = {}
    for path in paths:
        digest = notebook_digest(path)
        row = by_digest.get((digest, lab)) if digest else None
        if row is not None and row.submission == str(path):
            found[path] = row
    return found


def keep_rows(file: Path, paths: Sequence[Path], rows: Sequence[GradeRow], lab: str | None) -> None:
    """Write each notebook's row to FILE with its digest, for `kept_rows` in a later step."""
    entries = [
        {"digest": notebook_digest(path), "lab": lab, "row": asdict(row)}
        for path, row in zip(paths, rows, strict=True)
    ]
    write_file(file, json.dumps({"rows": entries}) + "\n")  # a new file: no link followed
