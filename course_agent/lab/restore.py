"""Put the release's locked cells back into a student's notebook before it is run or compared.

nbgrader's overwrite-cells idea, by cell id: every locked cell of the release (the instructions,
the setup, the checks, the self-test and its expected output, the points) comes back as released
and where the release has it, even if the student edited or deleted it; the student's own cells
(the exercises, Explore, any they added) keep their code and lose their stored outputs.
A notebook without cell ids (nbformat 4.4, before 4.5) gets the release's ids first
(`with_release_ids`): a locked cell by its content, an open one by its place between them.
Deliberately not handled: an id-less notebook whose locked cells were edited as well (those are
then added cells, as any cell the release does not know).
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

__all__ = ["LAB", "is_locked", "released_path", "restore", "same_source", "with_release_ids"]

LAB = "day03-lab.ipynb"


def released_path(name: str = LAB) -> Path:
    """The release the package ships for the lab called `name` (it may not exist)."""
    return Path(__file__).resolve().parent / "released" / name


def is_locked(cell: Any) -> bool:
    """nbgrader's rule: a grade cell or a read-only one is locked; a solution cell never is."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return not meta.get("solution", False) and bool(meta.get("grade") or meta.get("locked"))


def same_source(cell: Any) -> str:
    """A cell's source as content is compared: its type and its lines, blanks at the ends gone."""
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return f"{cell.get('cell_type')}\n{text.strip()}"


def with_release_ids(student: Any, reference: Any) -> Any:
    """`student` itself when its cells have ids; else a copy whose cells take the release's:
    each locked cell found by its content (in order), and between two found ones, the student's
    cells the release's open cells there, one for one, when their number is the same."""
    if all(cell.get("id") for cell in student.cells):
        return student
    student = copy.deepcopy(student)
    locked = [(same_source(cell), cell.id) for cell in reference.cells if is_locked(cell)]
    found: list[int] = []  # indexes of the student's cells matched to a locked one
    next_locked = 0
    for index, cell in enumerate(student.cells):
        for at in range(next_locked, len(locked)):
            if not cell.get("id") and locked[at][0] == same_source(cell):
                cell["id"], next_locked = locked[at][1], at + 1
                found.append(index)
                break
    ids = [cell.id for cell in reference.cells]
    place = {cell_id: number for number, cell_id in enumerate(ids)}
    for start, end in itertools.pairwise(found):
        between = student.cells[start + 1 : end]
        released = ids[place[student.cells[start].id] + 1 : place[student.cells[end].id]]
        if len(between) == len(released) and all(not cell.get("id") for cell in between):
            for cell, cell_id in zip(between, released, strict=True):
                cell["id"] = cell_id
    return student


def _own(cell: Any) -> Any:
    """A student's cell as it will run: its code, none of the outputs it stored."""
    cell = copy.deepcopy(cell)
    if cell.get("cell_type") == "code":
        cell["outputs"], cell["execution_count"] = [], None
    return cell


def restore(student: Any, reference: Any) -> Any:
    """The notebook to run: `reference`'s locked cells, with the student's own cells in between.

    An added cell stays after the cell it followed in the student's file; the release's open
    cells (exercises, Explore) keep the release's order; a deleted open cell stays deleted.
    """
    import nbformat

    student = with_release_ids(student, reference)
    locked = {cell.id for cell in reference.cells if is_locked(cell)}
    known = {cell.id for cell in reference.cells}
    own: dict[str, Any] = {}  # the student's version of each of the release's open cells
    added: dict[str | None, list[Any]] = defaultdict(list)  # by the known cell they follow
    anchor = None
    for cell in student.cells:
        cell_id = cell.get("id")
        if cell_id in locked:
            anchor = cell_id  # the student's copy goes: the release's comes back
        elif cell_id in known and cell_id not in own:
            own[cell_id], anchor = cell, cell_id
        else:
            added[anchor].append(cell)

    cells = [_own(cell) for cell in added[None]]
    for cell in reference.cells:
        if cell.id in locked:
            cells.append(copy.deepcopy(cell))
        elif cell.id in own:
            cells.append(_own(own[cell.id]))
        cells += [_own(extra) for extra in added[cell.id]]

    seen: set[str] = set()
    for number, cell in enumerate(cells):
        if not cell.get("id") or cell["id"] in seen:  # a pasted duplicate, or a pre-4.5 cell
            cell["id"] = f"added-{number}"
        seen.add(cell["id"])
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(reference.metadata))
    nb.cells = [nbformat.from_dict(cell) for cell in cells]
    return nb
