"""`course-agent lab handin`: the README's judged hand-in, found and run from where a student is.

From the repository's root, labs/, labs/source/ and a Classroom checkout it finds the lab and
builds the README's command word for word, run from above labs/; what is missing is one line.
One real hand-in runs from labs/, where the README's command used to say "file not found".
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lab_class import HANDIN, LABS, NOT_THE_STUDENTS, kernel_env
from starters import starter

from course_agent.lab.classroom import write_template
from course_agent.lab.handin_command import NoHandin, find_handin, handin_command
from course_agent.lab.labs import LABS as KNOWN
from course_agent.lab.release import main_lab

REPO = LABS.parent
README_WORDS = HANDIN.split()[1:]  # after "python"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone's labs/ (the hand-in's two files, both starters as released, source/) and its
    project file; never the working copy's notebooks, which a student may have solved."""
    root = tmp_path_factory.mktemp("clone")
    (root / "labs" / "source").mkdir(parents=True)
    for name in ("conftest.py", "nbval-sanitize.cfg"):
        shutil.copy(LABS / name, root / "labs" / name)
    for name in ("day03-lab.ipynb", "day03-extensions.ipynb"):
        shutil.copy(starter(LABS / "source" / name), root / "labs" / name)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("folder", [".", "labs", "labs/source"])
def test_from_the_root_labs_and_below_it_runs_the_readmes_command(clone: Path, folder: str) -> None:
    command, root = handin_command(find_handin(None, (clone / folder).resolve()))
    assert command[0] == sys.executable and command[1:] == README_WORDS
    assert root == clone.resolve()


def test_a_lab_named_or_given_as_a_path_is_the_one_handed_in(clone: Path) -> None:
    extensions = [*README_WORDS[:-1], "labs/day03-extensions.ipynb"]
    for given, cwd in [("day03-extensions", clone), ("day03-extensions.ipynb", clone / "labs")]:
        assert handin_command(find_handin(given, cwd))[0][1:] == extensions
    path = find_handin("labs/day03-extensions.ipynb", clone)
    assert path == (clone / "labs" / "day03-extensions.ipynb").resolve()


def test_from_a_classroom_checkout_it_runs_the_readmes_command(tmp_path: Path) -> None:
    checkout = tmp_path / "student-repo"
    write_template(REPO, checkout, KNOWN["day03-lab"])
    for folder in (checkout, checkout / "labs"):
        command, root = handin_command(find_handin(None, folder))
        assert command[1:] == README_WORDS and root == checkout.resolve()


def test_what_is_missing_is_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(NoHandin, match="run this from the repository's root, labs/ or your"):
        find_handin(None, tmp_path)
    lone = tmp_path / "labs" / "day03-lab.ipynb"
    lone.parent.mkdir()
    shutil.copy(starter(LABS / "source" / "day03-lab.ipynb"), lone)
    with pytest.raises(NoHandin, match=r"has no conftest\.py or nbval-sanitize\.cfg: hand in"):
        handin_command(lone)
    monkeypatch.chdir(tmp_path)
    assert main_lab(["handin"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith("course-agent lab handin: no day03-lab")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "nbval" else real(name)
    )
    assert main_lab(["handin"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "has no nbval: install the lab's extra" in said


def test_the_hand_in_from_labs_runs_and_judges_the_starter(clone: Path) -> None:
    # The README's command from labs/ said "file or directory not found: labs/day03-lab.ipynb".
    done = subprocess.run(
        [sys.executable, "-m", "course_agent", "lab", "handin"],
        cwd=clone / "labs",
        env=kernel_env(PYTEST_ADDOPTS=" ".join(NOT_THE_STUDENTS)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.startswith(f"in {clone.resolve()}: python {' '.join(README_WORDS)}\n")
    assert "FAILED labs/day03-lab.ipynb::check_3" in done.stdout
    assert re.search(r" 6 failed, \d+ passed", done.stdout)  # the self-test cell, checks 3-7
