"""The sandbox's view of Python (lab/python_view.py): every place the interpreter could import
course_agent from, as the interpreter itself finds them, gets the given copy."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from course_agent.lab import python_view
from course_agent.lab.python_view import package_places
from course_agent.lab.strip import PACKAGE


def test_a_folder_on_pythonpath_holding_the_package_is_one_of_its_places(tmp_path: Path) -> None:
    # A checkout on PYTHONPATH (or a .pth line) holds the whole package: the sandbox must cover it.
    (tmp_path / "course_agent").mkdir()
    (tmp_path / "course_agent" / "__init__.py").write_text("")
    places = package_places(str(tmp_path))
    assert (tmp_path / "course_agent") in places
    assert PACKAGE in places  # the one this process imported, too


def test_the_given_copy_is_bound_at_every_place(tmp_path: Path) -> None:
    (tmp_path / "course_agent").mkdir()
    (tmp_path / "course_agent" / "__init__.py").write_text("")
    copy = tmp_path / "copy"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    steps = python_view.python_view(copy, str(tmp_path)).steps
    bound = {step[2] for step in steps if step[0] == "--ro-bind" and step[1] == str(copy)}
    assert {str(place) for place in package_places(str(tmp_path))} <= bound


def test_a_package_inside_a_zip_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    archive = tmp_path / "course_agent.zip"
    with zipfile.ZipFile(archive, "w") as made:
        made.writestr("course_agent/__init__.py", "")
    with pytest.raises(ValueError, match="reinstall it with pip"):
        package_places(str(archive))
