"""The labs the package ships, by name: each one's release, self-test, exercise names and the
answers a person reads.

Release, restore, the hand-in, the grader and the notebook's self-test cell all look a lab up
here, so a second lab is one more entry, not a second copy of the machinery. A notebook's lab is
told by its cells: nbgrader keeps every cell's id, whatever the student calls the file.
Deliberately not handled: labs shipped outside the package (a course's own folder of releases).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_agent import paths
from course_agent.accumulator import ToolCallAccumulator
from course_agent.lab.restore import is_locked, released_path
from course_agent.registry import ToolRegistry, _explain_validation, default_registry, execute_call
from course_agent.selftest.extensions import run_extensions_selftest
from course_agent.selftest.lab import SelftestReport, run_selftest
from course_agent.selftest.turns import repaired
from course_agent.tools.glob_files import run_glob
from course_agent.tools.grep_files import run_grep
from course_agent.tools.list_dir import run_list_dir
from course_agent.tools.read_file import run_read_file
from course_agent.truncate import truncate_result

__all__ = ["LABS", "Exercise", "Lab", "WrittenAnswer", "detect_lab", "find_lab"]

Answers = tuple[tuple[object, str], ...]  # (the package's object, the name a refusal gives it)


@dataclass(frozen=True)
class Exercise:
    number: int  # as the lab's text counts its exercises
    name: str  # what the notebook binds: "ToolCallAccumulator", "is_inside"
    parameter: str  # the self-test's keyword for it
    answers: Answers = ()  # the package's code that would do this exercise's work for it


@dataclass(frozen=True)
class WrittenAnswer:
    """An answer a person reads and grades (nbgrader's manual grading): no automatic points."""

    cell: str  # the answer cell's id: "ext-exercise-4"
    title: str  # what it answers, as the instructor's list shows it
    points: int  # what nbgrader's manual grading may give it


@dataclass(frozen=True)
class Lab:
    name: str  # the notebook's file name without .ipynb: "day03-lab"
    exercises: tuple[Exercise, ...]
    selftest: Callable[..., SelftestReport]  # called with one keyword per exercise
    written: tuple[WrittenAnswer, ...] = ()  # listed for the instructor, never scored

    @property
    def notebook(self) -> str:
        return f"{self.name}.ipynb"

    @property
    def released(self) -> Path:
        """The reference the package ships: the release, with the self-test's expected output."""
        return released_path(self.notebook)


# Day three's three exercises: the package's answers, and the registry that runs them.
REGISTRY: Answers = (
    (ToolRegistry, "ToolRegistry"),
    (default_registry, "default_registry"),
    (execute_call, "execute_call"),
    (_explain_validation, "the registry's _explain_validation"),  # exercise 2's messages
)
DAY03 = ((ToolCallAccumulator, "ToolCallAccumulator"), (truncate_result, "truncate_result"))
# The extension lab: what judges a path, and the tools that page and cut their results.
BOUNDARY: Answers = (
    (paths.is_inside, "paths.is_inside"),
    (paths.resolve_inside, "resolve_inside"),
    (paths.open_inside, "open_inside"),
    (run_list_dir, "run_list_dir"),
    (run_glob, "run_glob"),
    (run_grep, "run_grep"),
    (run_read_file, "run_read_file"),
)
PAGES: Answers = ((run_glob, "run_glob"), (run_grep, "run_grep"))

LABS = {
    "day03-lab": Lab(
        "day03-lab",
        (
            Exercise(1, "ToolCallAccumulator", "accumulator", (*DAY03, *REGISTRY)),
            Exercise(2, "execute_call", "run_call", (*DAY03, *REGISTRY)),
            Exercise(3, "truncate_result", "truncate", (*DAY03, *REGISTRY)),
        ),
        run_selftest,
    ),
    "day03-extensions": Lab(
        "day03-extensions",
        (
            Exercise(1, "list_dir_tool", "list_dir_tool"),
            Exercise(2, "is_inside", "is_inside", (*BOUNDARY, *REGISTRY)),
            Exercise(3, "page_paths", "page_paths", (*PAGES, *REGISTRY)),
            Exercise(3, "page_matches", "page_matches", (*PAGES, *REGISTRY)),
            Exercise(5, "is_tool_turn", "is_tool_turn"),
            Exercise(5, "repair_transcript", "repair_transcript", ((repaired, "repaired"),)),
        ),
        run_extensions_selftest,
        (WrittenAnswer("ext-exercise-4", "exercise 4: what merging must not assume", 1),),
    ),
}


def find_lab(name: str) -> Lab:
    """The lab called `name` ("day03-lab" or "day03-lab.ipynb"); ValueError naming the labs."""
    lab = LABS.get(name.removesuffix(".ipynb"))
    if lab is None:
        raise ValueError(f"no lab called {name!r}; the package ships {', '.join(LABS)}")
    return lab


@functools.cache
def _locked_ids(name: str) -> frozenset[str]:
    import nbformat

    reference = nbformat.read(LABS[name].released, as_version=4)
    return frozenset(cell.id for cell in reference.cells if is_locked(cell))


def detect_lab(nb: Any) -> Lab | None:
    """The lab whose released locked cells `nb` shares most of; None if it shares none."""
    ids = {cell.get("id") for cell in nb.cells}
    shared = {name: len(ids & _locked_ids(name)) for name in LABS if LABS[name].released.is_file()}
    best = max(shared, key=shared.__getitem__, default=None)
    return LABS[best] if best is not None and shared[best] else None
