"""The extension lab for its tests: its files, its solved cells, and wrong answers to paste in.

`WRONG` maps a name to (exercise, how the solved cell is edited, the check that must fail, words
its line must hold): each is one mistake a student makes, edited into the solution's cell, so it
differs from a right answer only where its name says. `namespace(...)` runs the lab's setup and
exercise cells in one dict, as a kernel does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import nbformat
from starters import starter

__all__ = [
    "ANSWER",
    "CELL",
    "CODE",
    "HANDIN",
    "RELEASE",
    "SOURCE",
    "WRONG",
    "namespace",
    "solution",
    "solved",
]

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "labs" / "source" / "day03-extensions.ipynb"
RELEASE = starter(SOURCE)  # never labs/day03-extensions.ipynb: a student works in it
CELL = "ext-exercise-{}"  # the id of exercise n's cell
HANDIN = (
    "python -m pytest --nbval --nbval-current-env "
    "--nbval-sanitize-with labs/nbval-sanitize.cfg labs/day03-extensions.ipynb"
)


@functools.cache
def solution(number: int) -> str:
    """Exercise `number`'s cell of the solution, without the solution markers."""
    cell = next(c for c in nbformat.read(SOURCE, as_version=4).cells if c.id == CELL.format(number))
    return "\n".join(line for line in cell.source.splitlines() if "### " not in line)


CODE = (1, 2, 3, 5)  # the exercises written as code; exercise 4 is a sentence a person reads
ANSWER = "ext-exercise-4"  # its markdown answer cell


def solved() -> dict[int, str]:
    return {number: solution(number) for number in CODE}


def namespace(exercises: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The released lab's namespace, its exercise cells replaced by `exercises` (the starter's
    where none is given)."""
    cells = {cell.id: cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    names: dict[str, Any] = {"__name__": "__main__"}
    sources = [cells["ext-setup"]]
    sources += [(exercises or {}).get(n, cells[CELL.format(n)]) for n in CODE]
    for source in sources:
        exec(compile(source, "<cell>", "exec"), names)
    return names


def _edit(old: str, new: str, *more: str) -> Callable[[str], str]:
    """An edit replacing `old` by `new` (then each further pair in `more`) in a solved cell."""
    pairs = [(old, new), *zip(more[::2], more[1::2], strict=True)]

    def edit(source: str) -> str:
        for before, after in pairs:
            assert before in source, f"the solution no longer holds {before!r}: update this file"
            source = source.replace(before, after)
        return source

    return edit


# name: (exercise, edit of its solved cell, the check that fails, what that check's line says)
WRONG: dict[str, tuple[int, Callable[[str], str], int, str]] = {
    "a camelCase name": (
        1,
        _edit('name="list_dir"', 'name="listDir"'),
        1,
        "rule 1: name 'listDir' is not lowercase snake_case",
    ),
    "a noun first": (
        1,
        _edit('name="list_dir"', 'name="dir_list"'),
        1,
        "rule 1: name 'dir_list' does not start with one of the 41 verbs",
    ),
    "no example": (
        1,
        _edit("For example, path src lists", "Path src lists"),
        1,
        "rule 2: the description has no example",
    ),
    "a default left unsaid": (
        1,
        _edit('description="most entries listed; default 100"', 'description="most entries"'),
        1,
        "rule 3: parameter 'limit' does not state its default (100)",
    ),
    "two jobs": (
        1,
        _edit("One level only:", "Or reads the file if path is a file. One level only:"),
        1,
        "rule 4: the description offers a second job ('Or reads')",
    ),
    "extra properties allowed": (
        1,
        _edit('model_config = ConfigDict(extra="forbid")', "pass"),
        1,
        "ListDirArgs accepts extra arguments and silently drops them",
    ),
    "no lower bound on limit": (
        1,
        _edit("Field(100, ge=1, le=1000,", "Field(100, le=1000,"),
        2,
        "the schema let a limit of 0 (add ge=1",
    ),
    "another default limit": (
        1,
        _edit("Field(100, ge=1", "Field(50, ge=1"),
        2,
        "parameter limit must be optional with default 100",
    ),
    "no separator": (
        2,
        _edit("str(base).rstrip(os.sep) + os.sep)", "str(base))"),
        3,
        "a string prefix is not a parent",
    ),
    "~ judged by the string": (
        2,
        _edit("    try:\n", '    if path.startswith("~"):\n        return False\n    try:\n'),
        3,
        "only the resolved path decides",
    ),
    "a loop left uncaught": (
        2,
        _edit(
            "except (OSError, RuntimeError):",
            "except OSError:",
            "if os.path.realpath(target) != str(target):",
            "if False:",
        ),
        3,
        "symlink loop",
    ),
    "the root not resolved": (
        2,
        _edit("base = root.resolve()", "base = root"),
        3,
        "the root was given through a symlink: resolve the root too",
    ),
    "1 files": (
        3,
        _edit('"file" if total_files == 1 else "files"', '"files"'),
        4,
        "say how many files the working directory holds (1 file, 2 files)",
    ),
    "files withheld, not matches": (
        3,
        _edit("({len(matches) - limit} more withheld", "({total_files - limit} more withheld"),
        4,
        "not how many files there are",
    ),
    "a withheld line at exactly the limit": (
        3,
        _edit(
            'if len(matches) > limit:\n        lines.append(f"({len(matches) - limit} more w',
            'if len(matches) >= limit:\n        lines.append(f"({len(matches) - limit} more w',
        ),
        4,
        "exactly the limit",
    ),
    "three dots for the cut": (
        3,
        _edit('text[:120] + "…"', 'text[:120] + "..."'),
        5,
        "keeps its first 120 and gets …",
    ),
    "cut one too late": (
        3,
        _edit("if len(text) > 120:", "if len(text) > 121:"),
        5,
        "lines around the 120-character cut",
    ),
    "the finish reason trusted": (
        5,
        _edit('return finish == "tool_calls" or len(calls) > 0', 'return finish == "tool_calls"'),
        6,
        "a merged call makes it a tool turn, whatever the finish reason says",
    ),
    "only the calls counted": (
        5,
        _edit('return finish == "tool_calls" or len(calls) > 0', "return len(calls) > 0"),
        6,
        "finish 'tool_calls' with 0 calls merged: you said not a tool turn",
    ),
    "orphans and repeats kept": (
        5,
        _edit(
            '["tool_call_id"])\n                repaired.append',
            '["tool_call_id"])\n            repaired.append',
        ),
        7,
        "check_transcript still says",
    ),
    "the list passed in changed": (
        5,
        _edit("    return repaired", "    messages[:] = repaired\n    return messages"),
        7,
        "you changed the list passed in: build a new one",
    ),
}
