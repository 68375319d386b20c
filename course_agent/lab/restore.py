"""Put the release's locked cells back into a student's notebook before it is run or compared.

nbgrader's overwrite-cells idea, by cell id: every locked cell of the release (the instructions,
the setup, the checks, the self-test and its expected output, the points) comes back as released
and where the release has it, even if the student edited or deleted it; the student's own cells
(the exercises, Explore, any they added) keep their code and lose their stored outputs.
Deliberately not handled: a notebook without cell ids (before nbformat 4.5): all its cells count
as added ones, so its exercises run before the setup.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from pathlib import Path
from typing import Any

__all__ = ["LAB", "is_locked", "released_path", "restore"]

LAB = "day03-lab.ipynb"


def released_path(name: str = LAB) -> Path:
    """The release the package ships for the lab called `name` (it may not exist)."""
    return Path(__file__).resolve().parent / "released" / name


def is_locked(cell: Any) -> bool:
    """nbgrader's rule: a grade cell or a read-only one is locked; a solution cell never is."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return not meta.get("solution", False) and bool(meta.get("grade") or meta.get("locked"))


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
