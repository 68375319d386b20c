"""Every path that reads a submitted notebook reads it through lab/notebook_file.py's bounds: the
grade, `--feedback`, the hand-in, `--reuse`'s digest and nbgrader's autograde (its exporter).
Each is given each shape the bounds refuse, and says so in the student's terms, never hangs and
never parses what it should refuse. (Classroom grades with `course-agent grade`: the grade's.)"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from lab_class import hand_in

from course_agent.lab.feedback import feedback_text
from course_agent.lab.grade import grade_one
from course_agent.lab.nbgrader_kernels import bounded_exporter
from course_agent.lab.notebook_file import DEEPEST, LARGEST_NOTEBOOK, MOST_VALUES, NotANotebook
from course_agent.lab.restore import released_path
from course_agent.lab.reuse import notebook_digest
from course_agent.lab.rows import GradeRow


def deep(path: Path) -> str:
    path.write_text('{"cells": ' + "[" * (DEEPEST * 4) + "]" * (DEEPEST * 4) + "}")
    return "nests"


def many(path: Path) -> str:
    path.write_text('{"cells": [' + "[]," * MOST_VALUES + "[]]}")
    return "JSON values"


def large(path: Path) -> str:
    with path.open("wb") as file:  # sparse: no 20 MB written
        file.truncate(LARGEST_NOTEBOOK + 1)
    return "too large"


def link(path: Path) -> str:
    (path.parent / "solution.ipynb").write_bytes(released_path().read_bytes())
    path.symlink_to(path.parent / "solution.ipynb")
    return "symbolic link"


def fifo(path: Path) -> str:
    os.mkfifo(path)
    return "not a regular file"


SHAPES: dict[str, Callable[[Path], str]] = {
    "deep": deep,
    "many": many,
    "large": large,
    "link": link,
    "fifo": fifo,
}


@pytest.fixture(params=sorted(SHAPES))
def refused(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """A notebook of a refused shape, and the words that say why."""
    path = tmp_path / "alice" / "day03-lab.ipynb"
    path.parent.mkdir()
    return path, SHAPES[request.param](path)


@pytest.mark.timeout(60)  # a FIFO waited on would stop here
def test_the_grade_refuses_it_in_the_row(refused: tuple[Path, str]) -> None:
    path, why = refused
    row = grade_one(path, 10, sandbox=False)
    assert row.passed is None and why in row.note


@pytest.mark.timeout(60)
def test_feedback_reads_it_within_the_same_bounds(refused: tuple[Path, str]) -> None:
    path, why = refused
    row = GradeRow(str(path), None, None, (), (), 0.0, f"not read: {why}")
    text = feedback_text(row, nbformat.read(released_path(), as_version=4))
    assert "could not be scored" in text


@pytest.mark.timeout(60)
def test_nbgrader_s_exporter_refuses_it(refused: tuple[Path, str]) -> None:
    path, why = refused
    with pytest.raises(NotANotebook, match=why):
        bounded_exporter()().from_filename(str(path))


@pytest.mark.timeout(60)
def test_the_kept_rows_digest_follows_no_link_and_waits_on_no_fifo(
    refused: tuple[Path, str],
) -> None:
    path, why = refused
    digest = notebook_digest(path)
    assert (digest == "") == (why in ("symbolic link", "not a regular file"))


@pytest.mark.parametrize("shape", ["deep", "large"])
def test_the_hand_in_refuses_it_saying_why(tmp_path: Path, shape: str) -> None:
    notebook = tmp_path / "given.ipynb"
    why = SHAPES[shape](notebook)
    done = hand_in(notebook, tmp_path / "clone", extra=["--collect-only"])
    assert done.returncode != 0
    assert why in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
