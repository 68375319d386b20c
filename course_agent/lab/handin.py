"""The hand-in's pytest plugin: nbval compares a fresh run with the release, not with the file.

labs/conftest.py hands `restore_collected` the notebooks nbval collects: a lab the package ships
a release of (labs.py: day03-lab, day03-extensions) is read through `restore` (the locked cells
and the self-test's expected `N/N passed` come from the release; the student's cells store nothing
to compare), and its kernel starts with `kernel_environment`. Deliberately not handled: a student
who edits labs/conftest.py itself.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

from course_agent.lab.kernel import kernel_environment
from course_agent.lab.restore import released_path, restore

__all__ = ["ReleasedLab", "restore_collected"]


class ReleasedLab(IPyNbFile):
    """nbval's notebook, read through `restore` and run in a kernel without keys."""

    def collect(self) -> Iterator[IPyNbCell]:
        student = nbformat.read(self.path, as_version=4)
        reference = nbformat.read(released_path(self.path.name), as_version=4)
        self.nb = restore(student, reference)
        # nbval's own collection, on the restored cells: one item per code cell, options from
        # the cell's tags and NBVAL_ comments (only the release's cells carry any that matter).
        code = [cell for cell in self.nb.cells if cell.cell_type == "code"]
        for number, cell in enumerate(code):
            options: defaultdict[str, Any] = defaultdict(bool, find_metadata_tags(cell.metadata))
            options.update(dict(find_comment_markers(cell.source)))
            options.setdefault("check", self.compare_outputs)
            yield IPyNbCell.from_parent(
                self, name=f"Cell {number}", cell_num=number, cell=cell, options=options
            )

    def setup(self) -> None:
        # nbval starts its kernel with this process's environment: hide the keys while it does.
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(kernel_environment(saved))
        try:
            super().setup()
        finally:
            os.environ.clear()
            os.environ.update(saved)


def restore_collected(collected: Sequence[Any], folder: Path) -> list[Any]:
    """nbval's collectors, those of a released lab directly in `folder` swapped for ReleasedLab.

    Other notebooks (the solution in labs/source/, say) are compared with their own outputs.
    """
    swapped = []
    for item in collected:
        path = Path(getattr(item, "path", "")).resolve()
        released = path.parent == folder and released_path(path.name).is_file()
        if isinstance(item, IPyNbFile) and not isinstance(item, ReleasedLab) and released:
            item = ReleasedLab.from_parent(item.parent, path=path)
        swapped.append(item)
    return swapped
