"""The labs the package ships: found by name, and told apart by their cells whatever the file is
called."""

from __future__ import annotations

import nbformat
import pytest
from extension_lab import RELEASE as EXTENSIONS
from lab_class import RELEASE as MAIN

from course_agent.lab.labs import LABS, detect_lab, find_lab
from course_agent.selftest.extensions import EXTENSION_PARTS
from course_agent.selftest.lab import PARTS


def test_each_lab_has_its_release_self_test_and_exercises() -> None:
    assert list(LABS) == ["day03-lab", "day03-extensions"]
    assert find_lab("day03-lab").parts == tuple(PARTS)
    assert find_lab("day03-extensions.ipynb").parts == tuple(EXTENSION_PARTS)
    for lab in LABS.values():
        assert lab.released.is_file() and lab.released.name == lab.notebook
    names = [exercise.name for exercise in LABS["day03-extensions"].exercises]
    assert names == [
        "list_dir_tool",
        "is_inside",
        "page_paths",
        "page_matches",
        "is_tool_turn",
        "repair_transcript",
    ]


def test_an_unknown_lab_is_refused_naming_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match="no lab called 'day04'; the package ships day03-lab, "):
        find_lab("day04")


@pytest.mark.parametrize(
    ("release", "lab"), [(MAIN, "day03-lab"), (EXTENSIONS, "day03-extensions")]
)
def test_a_notebook_is_told_by_its_cells_even_with_half_of_them_gone(release, lab: str) -> None:
    nb = nbformat.read(release, as_version=4)
    assert detect_lab(nb).name == lab
    nb.cells = nb.cells[::2]  # a student who deleted every other cell, locked ones included
    assert detect_lab(nb).name == lab


def test_a_notebook_of_no_lab_is_told_so() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="mine")])
    assert detect_lab(nb) is None


@pytest.mark.parametrize(
    ("release", "lab"), [(MAIN, "day03-lab"), (EXTENSIONS, "day03-extensions")]
)
def test_a_notebook_without_cell_ids_is_told_by_its_locked_cells_content(release, lab) -> None:
    nb = nbformat.read(release, as_version=4)
    nb.nbformat_minor = 4  # as nbformat 4.4 saved it: no ids
    for cell in nb.cells:
        del cell["id"]
    assert detect_lab(nb).name == lab
