"""Read a submitted notebook within bounds: its size before a byte is parsed, its shape before JSON.

A file of 20 MB may hold 6.6 million empty lists, which Python's JSON and nbformat's copies turn
into a gigabyte (measured: 1,034 MB in 10 s): so the text is measured first (how deep its
brackets nest, how many values it holds, strings set aside) in time linear in its size, and
parsed only within both bounds. The file is opened without following a symbolic link and without
waiting on a FIFO.
Deliberately not handled: what the cells mean (restore.py, labs.py).
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "DEEPEST",
    "LARGEST_NOTEBOOK",
    "MOST_VALUES",
    "NotANotebook",
    "read_notebook",
    "shape_problem",
]

LARGEST_NOTEBOOK = 20_000_000  # bytes: the labs with every output are under 100 KB
DEEPEST = 64  # brackets nested: nbformat's own shape is 6 deep, a saved widget state about 12
MOST_VALUES = 1_000_000  # strings, numbers and brackets: the solved lab has about 3,000

# A JSON string, escapes included, in the unrolled form (linear: no two ways to match a char).
STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class NotANotebook(ValueError):
    """The file is refused before it is parsed; the text says why, for the student."""


def shape_problem(text: str) -> str:
    """Why `text`'s JSON is too deep or too large to parse here; "" when it is within bounds."""
    bare = STRING.sub('""', text)  # a bracket inside a string is text
    values = bare.count(",") + bare.count("[") + bare.count("{") + 1
    if values > MOST_VALUES:
        return f"it holds about {values:,} JSON values, over the {MOST_VALUES:,} read"
    brackets = NOT_BRACKET.sub("", bare)
    steps = (1 if bracket in "[{" else -1 for bracket in brackets)
    deepest = max(itertools.accumulate(steps), default=0)
    if deepest > DEEPEST:
        return f"its JSON nests {deepest:,} deep, over the {DEEPEST} read"
    return ""


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, at most LARGEST_NOTEBOOK of them; a link, a FIFO or a folder refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise NotANotebook(
                "a symbolic link, not a notebook: hand in the notebook itself"
            ) from exc
        raise NotANotebook(f"cannot be opened: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotANotebook("not a regular file: hand in the notebook itself")
        if info.st_size > LARGEST_NOTEBOOK:
            size = info.st_size
            raise NotANotebook(f"too large: {size:,} bytes, at most {LARGEST_NOTEBOOK:,} are read")
        data = file.read(LARGEST_NOTEBOOK + 1)
    if len(data) > LARGEST_NOTEBOOK:  # it grew while we looked
        raise NotANotebook(f"too large: over {LARGEST_NOTEBOOK:,} bytes")
    return data


def read_notebook(path: Path) -> Any:
    """The notebook at `path` (nbformat 4), read within the bounds above; NotANotebook says why
    not, ValueError (nbformat's, json's) for a file that is bounded but not a notebook."""
    import nbformat

    data = _read_bytes(Path(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotANotebook(f"not UTF-8 text (byte {exc.start:,})") from exc
    if problem := shape_problem(text):
        raise NotANotebook(f"not read: {problem}")
    return nbformat.reads(text, as_version=4)
