"""A release writes into the instructor's checkout, never the installed package, and a Classroom
template built after it ships one release: starter and reference agree.

The package is copied to a site-packages folder of its own and run from there (as after
`pip install .`), in a copy of the checkout with its lab source edited.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lab_class import SOURCE

from course_agent.lab.checkout import checkout_of, installed, reference_for

REPO = Path(__file__).resolve().parent.parent
# `course-agent lab` from the installed package alone: `-c` puts the folder it runs in first on
# sys.path, which would import the checkout's copy instead.
INSTALLED_LAB = (
    "import sys; del sys.path[0]; from course_agent.lab.release import main_lab; "
    "sys.exit(main_lab(sys.argv[1:]))"
)
EDIT = "An instructor's edit, released: it must reach both the starter and the reference."


def a_checkout(root: Path) -> Path:
    """A copy of this repository's files a release and a template read, in `root`."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "course_agent", root / "course_agent", ignore=skip)
    shutil.copytree(REPO / "jupyter-config", root / "jupyter-config")
    for name in ("pyproject.toml", "README.md", "labs/conftest.py", "labs/nbval-sanitize.cfg"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    (root / "labs" / "source").mkdir()
    shutil.copy(SOURCE, root / "labs" / "source" / SOURCE.name)
    return root


def installed_lab(site: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-c", INSTALLED_LAB, *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_release_writes_into_the_checkout_and_the_template_ships_it_whole(tmp_path: Path) -> None:
    checkout = a_checkout(tmp_path / "checkout")
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"  # the package, as pip puts it
    shutil.copytree(
        REPO / "course_agent", site / "course_agent", ignore=shutil.ignore_patterns("__pycache__")
    )
    shipped = (site / "course_agent" / "lab" / "released" / SOURCE.name).read_bytes()
    source = nbformat.read(checkout / "labs" / "source" / SOURCE.name, as_version=4)
    source.cells[0].source += f"\n\n{EDIT}"
    nbformat.write(source, checkout / "labs" / "source" / SOURCE.name)

    released = installed_lab(
        site, checkout, "release", f"labs/source/{SOURCE.name}", f"labs/{SOURCE.name}"
    )
    assert released.returncode == 0, released.stderr
    reference = checkout / "course_agent" / "lab" / "released" / SOURCE.name
    assert f"reference {reference}" in released.stdout  # it says where
    assert EDIT in reference.read_text() and EDIT in (checkout / "labs" / SOURCE.name).read_text()
    assert (site / "course_agent" / "lab" / "released" / SOURCE.name).read_bytes() == shipped

    made = installed_lab(site, checkout, "classroom", str(tmp_path / "template"), "--from", ".")
    assert made.returncode == 0, made.stderr
    template = tmp_path / "template"
    starter_text = (template / "labs" / SOURCE.name).read_bytes()
    assert starter_text == (checkout / "labs" / SOURCE.name).read_bytes()  # the release's starter
    assert (
        template / "course_agent/lab/released" / SOURCE.name
    ).read_bytes() == reference.read_bytes()
    starter_nb, reference_nb = (
        nbformat.read(template / path, as_version=4)
        for path in (f"labs/{SOURCE.name}", f"course_agent/lab/released/{SOURCE.name}")
    )
    for ours, theirs in zip(starter_nb.cells, reference_nb.cells, strict=True):
        assert {**ours, "outputs": [], "execution_count": None} == {
            **theirs,
            "outputs": [],
            "execution_count": None,
        }
    assert EDIT in starter_nb.cells[0].source


def test_a_release_outside_a_checkout_refuses_in_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    shutil.copytree(
        REPO / "course_agent", site / "course_agent", ignore=shutil.ignore_patterns("__pycache__")
    )
    reference = site / "course_agent" / "lab" / "released" / SOURCE.name
    shipped = reference.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SOURCE, elsewhere / SOURCE.name)
    for extra in ([], ["--reference", str(reference)]):  # by default, or named: never installed
        refused = installed_lab(site, elsewhere, "release", SOURCE.name, "student.ipynb", *extra)
        assert refused.returncode == 1
        [line] = refused.stderr.splitlines()
        assert "--reference FILE" in line and "course-agent lab:" in line
        assert not (elsewhere / "student.ipynb").exists()
        assert reference.read_bytes() == shipped


def test_the_checkout_is_found_from_anywhere_inside_it_and_nowhere_else(tmp_path: Path) -> None:
    checkout = a_checkout(tmp_path / "checkout")
    assert checkout_of(checkout / "labs" / "source") == checkout.resolve()
    assert checkout_of(checkout) == checkout.resolve()
    assert checkout_of(tmp_path) is None
    other = tmp_path / "other"  # a project of another name with the same folders
    (other / "course_agent" / "lab").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "course-agent-fork"\n')
    assert checkout_of(other) is None


@given(st.lists(st.sampled_from(["lib", "python3.11", "site-packages", "dist-packages", "x"])))
def test_no_reference_lands_in_an_installed_package(parts: list[str]) -> None:
    # Wherever a checkout sits, a reference it would get inside site-packages is refused.
    root = Path("/nowhere", *parts)
    assert installed(root / "f") == bool({"site-packages", "dist-packages"} & set(parts))


def test_reference_for_prefers_the_checkout_it_runs_in(tmp_path: Path) -> None:
    here, there = a_checkout(tmp_path / "here"), a_checkout(tmp_path / "there")
    source = there / "labs" / "source" / SOURCE.name
    assert (
        reference_for("x.ipynb", source, here)
        == here.resolve() / "course_agent/lab/released/x.ipynb"
    )
    assert (
        reference_for("x.ipynb", source, tmp_path)
        == there.resolve() / "course_agent/lab/released/x.ipynb"
    )
    with pytest.raises(ValueError, match="--reference FILE"):
        reference_for("x.ipynb", tmp_path / "s.ipynb", tmp_path)
