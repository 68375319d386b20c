"""Made-up students for the lab's tests: the released starter, some cells rewritten or added.

`submission(path, exercises={1: source}, extra=[source], edit=...)` writes one student's notebook;
`solution(n)` is exercise n solved as a student would write it (the source's, without markers).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
from starters import starter

import course_agent

__all__ = [
    "HANDIN",
    "LABS",
    "NOT_THE_STUDENTS",
    "RELEASE",
    "SOURCE",
    "hand_in",
    "kernel_env",
    "saved_output",
    "solution",
    "solved",
    "submission",
]

REPO = Path(__file__).resolve().parent.parent
LABS = REPO / "labs"
SOURCE = LABS / "source" / "day03-lab.ipynb"
RELEASE = starter(SOURCE)  # as `lab release` makes it; labs/day03-lab.ipynb is the student's
# The hand-in, word for word as both READMEs give it (tests/test_lab_handin.py checks that).
HANDIN = (
    "python -m pytest --nbval --nbval-current-env "
    "--nbval-sanitize-with labs/nbval-sanitize.cfg labs/day03-lab.ipynb"
)
# What a pytest started here loads that the student's doesn't: the `lab` extra has no hypothesis
# (its plugin costs 0.8 s a start), and a cache folder written into the copy is noise.
NOT_THE_STUDENTS = ["-p", "no:hypothesispytest", "-p", "no:cacheprovider"]
PACKAGE_ROOT = str(Path(course_agent.__file__).resolve().parent.parent)


@functools.cache
def solution(number: int) -> str:
    """Exercise `number` of the solution notebook, without the solution markers."""
    cell = next(
        cell
        for cell in nbformat.read(SOURCE, as_version=4).cells
        if cell.get("id") == f"exercise-{number}"
    )
    lines = cell.source.splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("###"))


def solved() -> dict[int, str]:
    return {number: solution(number) for number in (1, 2, 3)}


def saved_output(text: str) -> Callable[[Any], None]:
    """An edit storing `text` as the self-test's output, as JupyterLab saves a cell that ran."""

    def edit(nb: Any) -> None:
        cell = next(cell for cell in nb.cells if cell.get("id") == "selftest")
        cell.execution_count = sum(c.cell_type == "code" for c in nb.cells)
        cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": text})]

    return edit


def submission(
    path: Path,
    exercises: Mapping[int, str] | None = None,
    extra: Sequence[str] = (),
    edit: Callable[[Any], None] | None = None,
    release: Path = RELEASE,
    cell_id: str = "exercise-{}",
) -> Path:
    """The released starter with exercise cells replaced, `extra` cells appended, then `edit`.

    `release` is another lab's starter, whose exercise cells `cell_id` names by number.
    """
    nb = nbformat.read(release, as_version=4)
    for number, source in (exercises or {}).items():
        cell = next(cell for cell in nb.cells if cell.get("id") == cell_id.format(number))
        cell.source = source
    for index, source in enumerate(extra):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"student-extra-{index}"))
    if edit is not None:
        edit(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def kernel_env(**extra: str) -> dict[str, str]:
    """This process's environment, the package importable from anywhere (installed or not)."""
    path = os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def hand_in(
    notebook: Path,
    root: Path,
    env: Mapping[str, str] | None = None,
    at: str = "labs/day03-lab.ipynb",
    extra: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """The README's hand-in command, from `root`, on a copy of labs/ with `notebook` `at` there,
    and the clone's pyproject.toml (its pytest options) beside them.

    `extra` arguments are added (`--collect-only`, say); without them it is the command itself.
    """
    labs = root / "labs"
    labs.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    for name in ("conftest.py", "nbval-sanitize.cfg"):
        if (LABS / name).exists():
            (labs / name).write_bytes((LABS / name).read_bytes())
    (root / at).parent.mkdir(parents=True, exist_ok=True)
    (root / at).write_bytes(notebook.read_bytes())
    (root / "tmp").mkdir(exist_ok=True)
    words = HANDIN.split()[1:-1]
    command = [sys.executable, *words, at, *NOT_THE_STUDENTS, "--color=no", "-v", *extra]
    return subprocess.run(
        command,
        cwd=root,
        env={**kernel_env(TMPDIR=str(root / "tmp")), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
