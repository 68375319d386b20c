"""One short Markdown file per submission, to hand back as it is: the score, what failed, where.

Each file is made from its own row and its own notebook only, with the grader's keys cut out; what
came from the submission (its name, the self-test's lines) sits in code spans and fenced blocks, so
it shows as text in any Markdown or HTML viewer. Deliberately not handled: grading (grade.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from course_agent.lab.labs import detect_lab
from course_agent.lab.notebook_file import read_notebook
from course_agent.lab.output_file import write_below
from course_agent.lab.restore import LAB, released_path, restore
from course_agent.lab.rows import GradeRow, grader_keys, short_names
from course_agent.safety.redaction import redact

__all__ = ["RUNS", "feedback_text", "write_feedback"]

# The exercise cells each check of the day-three self-test runs (selftest._checks hands them
# over): a failed check points at the first of its cells whose own check failed too, else at all
# of them. Checks 1 and 2 test only the package; a check named here by no lab points nowhere.
RUNS: dict[str, tuple[str, ...]] = {
    "fragment merging": ("exercise-1",),
    "bad-argument feedback": ("exercise-2",),
    "truncation": ("exercise-3",),
    "big file": ("exercise-2", "exercise-3"),
    "offline loop": ("exercise-1", "exercise-2", "exercise-3"),
}
CELL_IN_NOTE = re.compile(r"\bcell (\d+)\b")  # kernel.py's "timeout: cell 11 ran over 60 s"
# ask.py's 'in "Exercise 1: ...": ' before what went wrong (', line 4: ...' stays).
PLACE = re.compile(r'^in "[^"]*"(?:(?:, | and )"[^"]*")*: ')


# What can start markup inside a line of Markdown: emphasis, code, links, HTML, entities, tables.
MARKUP = re.compile(r"([\\`*_\[\]<>&|~])")


def _escaped(text: str) -> str:
    """`text` as plain Markdown on one line: each character that could start markup escaped."""
    return MARKUP.sub(r"\\\1", " ".join(text.split()))


def _fence(text: str) -> str:
    """`text` in a fenced block whose fence no run of backticks inside it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _code(text: str) -> str:
    """`text` as an inline code span, whatever backticks it holds."""
    text = " ".join(text.split())
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # CommonMark drops it
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _heading(reference: Any, cell_id: str) -> str:
    """The first line of the last Markdown cell above `cell_id` in the release: its section."""
    heading = ""
    for cell in reference.cells:
        if cell.get("id") == cell_id:
            return heading
        if cell.cell_type == "markdown" and cell.source.strip():
            heading = cell.source.strip().splitlines()[0].lstrip("#").strip()
    return ""


def _title(reference: Any) -> str:
    """The lab's title: the first line of its first Markdown cell."""
    for cell in reference.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            return cell.source.strip().splitlines()[0].lstrip("#").strip()
    return "Lab"


class _Cells:
    """Where the cells of one submission are, for saying which one to look at."""

    def __init__(self, path: Path, reference: Any) -> None:
        self.reference = reference
        try:
            self.student: Any = read_notebook(path)
        except Exception:  # not a notebook: the row says so, and no cell can be named
            self.student = None

    def describe(self, cell_id: str) -> str:
        """ "cell 10 of your notebook, under *Exercise 1: ...*": what JupyterLab shows (a cell's id
        it does not)."""
        ids = [cell.get("id") for cell in self.student.cells] if self.student else []
        where = f"cell {ids.index(cell_id) + 1} of your notebook" if cell_id in ids else ""
        where = where or "a cell your notebook no longer has (the grader put the release's back)"
        heading = _heading(self.reference, cell_id)  # the release's Markdown: kept as written
        under = f", under *{heading}*" if heading else ""
        return f"{where}{under}"

    def stopped_at(self, note: str) -> str | None:
        """The id of the cell a "cell N" note names, counted as the grader ran the notebook."""
        match = CELL_IN_NOTE.search(note)
        if self.student is None or match is None:
            return None
        cells = restore(self.student, self.reference).cells
        index = int(match.group(1)) - 1
        return cells[index].get("id") if 0 <= index < len(cells) else None


def _look_at(name: str, failed_names: Sequence[str]) -> tuple[str, ...]:
    cells = RUNS.get(name, ())
    own = [cell for cell in cells if any(RUNS.get(other) == (cell,) for other in failed_names)]
    return tuple(own[:1]) or cells


def _unscored(row: GradeRow, cells: _Cells) -> list[str]:
    lines = ["Your notebook could not be scored:", "", _fence(row.note), ""]
    if row.note.startswith("not graded"):  # students.py: several notebooks, none by name
        lines.append(
            "Look at: your folder. Hand in the lab's notebook under its own name, alone or "
            "beside your other files."
        )
    elif row.note.startswith("not a notebook"):
        lines.append(
            "Look at: the file itself. Open it in JupyterLab; if it does not open, download the "
            "lab again, paste your exercise cells into it and hand that in."
        )
    elif row.note.startswith("could not run"):
        lines.append(
            "Nothing in your notebook: the grader could not start Python for it. Your "
            "instructor will grade it again."
        )
    elif (cell_id := cells.stopped_at(row.note)) is not None:
        lines.append(
            f"Look at: {cells.describe(cell_id)}. It runs your code: look for a loop that never "
            "ends or a call that stops Python, then restart the kernel and run all cells."
        )
    else:
        lines.append(
            "Look at: your exercise cells: the self-test that runs them did not finish. Restart "
            "the kernel and run all cells to see where it stops."
        )
    return lines


def _failures(row: GradeRow, cells: _Cells) -> list[str]:
    names = [row.checks[n - 1] if n <= len(row.checks) else "" for n in row.failed]
    lines: list[str] = []
    for number, name, detail in zip(row.failed, names, row.details, strict=False):
        title = f"Check {number}, {name}" if name else f"Check {number}"
        # The line names the exercise's cell; "Look at" below says where that cell is.
        said = PLACE.sub("", detail.removeprefix(f"{name}: "), count=1)
        lines += [f"### {_escaped(title)}", "", _fence(said), ""]
        look = _look_at(name, names)
        if look:
            lines += ["Look at: " + "; and ".join(cells.describe(cell) for cell in look) + ".", ""]
    return lines


def feedback_text(row: GradeRow, reference: Any, keys: Sequence[str] = ()) -> str:
    """The feedback for one row, from it and its own notebook; `keys` are cut out of it."""
    cells = _Cells(Path(row.submission), reference)
    lines = [f"# {_title(reference)}: your feedback", ""]
    lines += [f"Submission: {_code(Path(row.submission).name)}", ""]
    if row.passed is None:
        lines += ["Score: **none**", "", *_unscored(row, cells)]
    elif row.passed == row.total:
        lines += [f"Score: **{row.score}**: every check passed. Nothing to fix."]
    else:
        lines += [f"Score: **{row.score}** checks passed.", "", "## What to fix", ""]
        lines += _failures(row, cells)
    if row.passed is not None and row.note:  # students.py: the other notebooks, not graded
        lines += ["", f"Note: {_code(row.note)}"]
    for title, text in row.written:  # read by your instructor, outside the score
        lines += ["", f"## Your written answer: {_escaped(title)}", ""]
        lines += [_fence(text) if text else "You left it empty.", ""]
        lines += ["Your instructor reads it and grades it; the score above does not count it."]
    return redact("\n".join(lines).rstrip() + "\n", keys)


def _lab_of(submission: Path) -> str:
    """The name of the lab `submission` is a copy of, told by its cells; the main lab's if the
    file cannot be read or shares no locked cell with any release."""
    try:
        lab = detect_lab(read_notebook(submission))
    except Exception:  # not a notebook: its row says so
        lab = None
    return lab.notebook if lab is not None else LAB


@functools.cache
def _release(name: str) -> Any:
    import nbformat

    return nbformat.read(released_path(name), as_version=4)


def write_feedback(
    rows: Iterable[GradeRow],
    folder: Path,
    reference: Any = None,
    keys: Sequence[str] | None = None,
) -> list[Path]:
    """`folder`/<submission>.md for each row, below `folder` as the submissions are below the
    folder they share; the grader's keys (default) cut out. Returns the files written.

    Without a `reference`, each row's is the release of the lab its notebook is (titled as that
    lab); the main lab's when the file cannot tell."""
    rows = list(rows)
    hidden = grader_keys() if keys is None else keys
    names = short_names([row.submission for row in rows])
    written = []
    for row in rows:
        # A new file, in folders opened without following a link (a student's, in a
        # submissions folder given as DIR, leads nowhere).
        name = Path(names[row.submission]).with_suffix(".md")
        own = reference or _release(_lab_of(Path(row.submission)))
        written.append(write_below(folder, name, feedback_text(row, own, hidden)))
    return written
