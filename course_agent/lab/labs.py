"""The labs the package ships, by name: each one's release, checks, exercise names and the
answers a person reads.

Release, restore, the hand-in, the grader and the notebook's self-test cell all look a lab up
here, so a second lab is one more entry, not a second copy of the machinery. A notebook's lab is
told by its cells: nbgrader keeps every cell's id, whatever the student calls the file; every
lab's notebook is written by `write_notebook`, the same bytes for the same cells.
Deliberately not handled: labs shipped outside the package (a course's own folder of releases).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_agent.lab.restore import is_locked, released_path, same_source
from course_agent.selftest.extensions import EXTENSION_PARTS
from course_agent.selftest.judge import Part
from course_agent.selftest.lab import PARTS

__all__ = [
    "LABS",
    "SELFTEST_CELL",
    "Exercise",
    "Lab",
    "WrittenAnswer",
    "detect_lab",
    "find_lab",
    "lab_names",
    "write_notebook",
]

SELFTEST_CELL = "selftest"  # the id of the one cell whose output nbval compares


@dataclass(frozen=True)
class Exercise:
    number: int  # as the lab's text counts its exercises
    name: str  # what the notebook binds: "ToolCallAccumulator", "is_inside"
    parameter: str  # the checks' key for it (Part.uses)
    cell: str  # the id of the cell the student writes it in: "exercise-1"


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
    parts: tuple[Part, ...]  # the checks, in order: check N is parts[N - 1]
    # The package's functions the grading kernel gets without their bodies (lab/strip.py):
    # (module, function or Class.method), each one this lab's exercises ask the student to write.
    stripped: tuple[tuple[str, str], ...] = ()
    written: tuple[WrittenAnswer, ...] = ()  # listed for the instructor, never scored

    @property
    def notebook(self) -> str:
        return f"{self.name}.ipynb"

    @property
    def released(self) -> Path:
        """The reference the package ships: the release, with the self-test's expected output."""
        return released_path(self.notebook)

    def used_by(self, part: Part) -> list[Exercise]:
        """The exercises whose functions check `part` calls, in the lab's order."""
        return [exercise for exercise in self.exercises if exercise.parameter in part.uses]

    def heading(self, exercise: Exercise) -> str:
        """The heading a student sees above the exercise's cell, as JupyterLab shows it:
        "Exercise 2: feed bad arguments back (step 3, INJECT=bad_args)" (cell ids are hidden)."""
        return _headings(self.name).get(exercise.cell) or f"Exercise {exercise.number}"


LABS = {
    "day03-lab": Lab(
        "day03-lab",
        (
            Exercise(1, "ToolCallAccumulator", "accumulator", "exercise-1"),
            Exercise(2, "execute_call", "run_call", "exercise-2"),
            Exercise(3, "truncate_result", "truncate", "exercise-3"),
        ),
        tuple(PARTS),
        (
            ("course_agent.accumulator", "ToolCallAccumulator.push"),
            ("course_agent.accumulator", "ToolCallAccumulator.drain"),
            ("course_agent.registry", "execute_call"),
            # execute_call's named steps and exercise 2's messages: composed, they are its answer
            ("course_agent.registry", "find_tool"),
            ("course_agent.registry", "parse_arguments"),
            ("course_agent.registry", "validate_arguments"),
            ("course_agent.registry", "_explain_validation"),
            ("course_agent.truncate", "truncate_result"),
        ),
    ),
    "day03-extensions": Lab(
        "day03-extensions",
        (
            Exercise(1, "list_dir_tool", "list_dir_tool", "ext-exercise-1"),
            Exercise(2, "is_inside", "is_inside", "ext-exercise-2"),
            Exercise(3, "page_paths", "page_paths", "ext-exercise-3"),
            Exercise(3, "page_matches", "page_matches", "ext-exercise-3"),
            Exercise(5, "is_tool_turn", "is_tool_turn", "ext-exercise-5"),
            Exercise(5, "repair_transcript", "repair_transcript", "ext-exercise-5"),
        ),
        tuple(EXTENSION_PARTS),
        (("course_agent.selftest.turns", "repaired"),),
        (WrittenAnswer("ext-exercise-4", "exercise 4: what merging must not assume", 1),),
    ),
}


@functools.cache
def _headings(name: str) -> dict[str, str]:
    """Each code cell's id -> the first line of the last Markdown heading above it, in the
    release, without its `#`s and backticks."""
    # Read as plain JSON, not with nbformat: the self-test cell calls this in the student's
    # kernel, where importing nbformat (and jsonschema's IRI grammar with it) took 2.8 s of a
    # 3.0 s cell. The release is the package's own file, written by write_notebook.
    headings, heading = {}, ""
    for cell in json.loads(LABS[name].released.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"]).strip()  # nbformat's JSON: a string or a list of lines
        first = source.splitlines()[0] if source else ""
        if cell["cell_type"] == "markdown" and first.startswith("#"):
            heading = first.lstrip("#").replace("`", "").strip()
        headings[cell.get("id")] = heading
    return headings


def find_lab(name: str) -> Lab:
    """The lab called `name` ("day03-lab" or "day03-lab.ipynb"); ValueError naming the labs."""
    lab = LABS.get(name.removesuffix(".ipynb"))
    if lab is None:
        raise ValueError(f"no lab called {name!r}; the package ships {', '.join(LABS)}")
    return lab


@functools.cache
def _locked(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """The ids of the release's locked cells, and their contents (restore.same_source)."""
    import nbformat

    reference = nbformat.read(LABS[name].released, as_version=4)
    cells = [cell for cell in reference.cells if is_locked(cell)]
    return frozenset(cell.id for cell in cells), frozenset(map(same_source, cells))


def detect_lab(nb: Any) -> Lab | None:
    """The lab whose released locked cells `nb` shares most of, by id, or by content where its
    cells have no id (nbformat 4.4); None if it shares none."""
    ids = {cell.get("id") for cell in nb.cells if cell.get("id")}
    sources = {same_source(cell) for cell in nb.cells if not cell.get("id")}

    def shared_with(name: str) -> int:
        locked_ids, locked_sources = _locked(name)
        return len(ids & locked_ids) + len(sources & locked_sources)

    shared = {name: shared_with(name) for name in LABS if LABS[name].released.is_file()}
    best = max(shared, key=shared.__getitem__, default=None)
    return LABS[best] if best is not None and shared[best] else None


def write_notebook(nb: Any, path: Path) -> None:
    """Validate and write `nb` as nbformat's stable JSON (sorted keys), one newline at the end."""
    import nbformat

    nbformat.validate(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((nbformat.writes(nb).rstrip("\n") + "\n").encode("utf-8"))


def lab_names(lab: str | None = None) -> list[str]:
    """The file names of the labs' notebooks (`day03-lab.ipynb`), `lab`'s alone when given: the
    name a student's folder is searched for when it holds several notebooks."""
    return [LABS[name].released.name for name in ([lab] if lab else LABS)]
