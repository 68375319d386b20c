"""The extension lab, graded and handed in exactly like the main lab, in real kernels.

One made-up class is graded once through `course-agent grade` (no --lab: each notebook is told by
its cells), and two students are handed in with the README's command; every assert reads those
runs. nbgrader generates and autogrades it beside the main lab in tests/test_lab_release.py.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from extension_lab import CELL, HANDIN, RELEASE, SOURCE, WRONG, solved
from lab_class import LABS, hand_in, kernel_env, saved_output, submission

from course_agent.lab.release import release
from course_agent.lab.restore import released_path

# Each hand-in or grade here starts kernels (a hand-in two: nbval's and the judge's); on a
# shared, loaded machine a module's fixture takes minutes, far from the suite's 120 s default.
pytestmark = pytest.mark.timeout(600)

REPO = LABS.parent
TIMEOUT = 30  # per cell: far above the slowest, the self-test (about a second)

FAKE_REPORT = """\
from IPython.display import display

checks = [{"number": n, "ok": True, "line": "fine"} for n in range(1, 8)]
display({"text/plain": "7/7 passed"}, raw=True)"""

FALSE_SENTENCE = "The index always starts at 1, in arrival order."

REBIND = """

from course_agent.selftest.lab import Check, SelftestReport


def run_extensions_selftest(**kwargs):  # whatever is handed over, report seven passes
    return SelftestReport([Check(n, "x", True, "fine") for n in range(1, 8)])


def show_lab_selftest(*args, **kwargs):
    return run_extensions_selftest()"""


def ext_submission(path: Path, exercises=None, extra=(), edit=None) -> Path:
    return submission(path, exercises, extra, edit, release=RELEASE, cell_id=CELL)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("class")
    answers = solved()
    _, edit, _, _ = WRONG["a noun first"]
    ext_submission(folder / "01-solved.ipynb", {**answers, 4: FALSE_SENTENCE})
    ext_submission(folder / "02-starter.ipynb")
    ext_submission(folder / "03-fake-report.ipynb", extra=[FAKE_REPORT])
    ext_submission(folder / "04-rebound.ipynb", {5: answers[5] + REBIND})
    ext_submission(
        folder / "05-imports.ipynb",
        {**answers, 2: "from course_agent.paths import is_inside"},
    )
    ext_submission(folder / "06-noun-first.ipynb", {**answers, 1: edit(answers[1])})
    submission(folder / "07-main-lab-starter.ipynb")  # the other lab, in the same folder
    out = folder.parent / "grades.csv"
    command = [sys.executable, "-m", "course_agent", "grade", str(folder), "--jobs", "2"]
    command += ["--timeout", str(TIMEOUT), "--csv", str(out)]
    done = subprocess.run(command, env=kernel_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="", encoding="utf-8") as file:
        return {Path(row["submission"]).stem: row for row in csv.DictReader(file)}


@pytest.mark.parametrize(
    ("name", "score", "failed"),
    [
        ("01-solved", "7/7", ""),
        ("02-starter", "0/7", "1 2 3 4 5 6 7"),  # nothing is given for free
        ("03-fake-report", "0/7", "1 2 3 4 5 6 7"),  # what it displays does not count
        ("04-rebound", "2/7", "1 2 3 4 5"),  # graded on exercise 5, the one it solved
        ("07-main-lab-starter", "2/7", "3 4 5 6 7"),  # told apart by its cells
    ],
)
def test_each_submission_is_scored_on_its_own_code(
    graded: dict[str, Any], name: str, score: str, failed: str
) -> None:
    row = graded[name]
    assert (f"{row['passed']}/{row['total']}", row["failed"], row["note"]) == (score, failed, "")


def test_the_written_answer_is_listed_for_a_reader_and_earns_no_point(
    graded: dict[str, Any],
) -> None:
    # A false sentence with every keyword the old check wanted: the score is the checks' alone.
    solved_row, starter = graded["01-solved"], graded["02-starter"]
    assert (solved_row["passed"], solved_row["total"]) == ("7", "7")
    assert solved_row["written"] == f"exercise 4: what merging must not assume: {FALSE_SENTENCE}"
    assert starter["written"] == "exercise 4: what merging must not assume: (no answer)"


def test_an_imported_function_is_judged_by_what_it_answers(graded: dict[str, Any]) -> None:
    # paths.is_inside compares a resolved target; asked the exercise's question, it is wrong.
    row = graded["05-imports"]
    assert (row["passed"], row["failed"], row["note"]) == ("6", "3", "")
    assert row["details"].startswith('path boundary: in "Exercise 2: the path boundary": ')


def test_a_wrong_answer_fails_its_check_and_the_row_names_the_case(graded: dict[str, Any]) -> None:
    row = graded["06-noun-first"]
    assert (row["passed"], row["failed"]) == ("6", "1")
    assert row["details"].startswith(
        'tool design: in "Exercise 1: design a tool the model uses well": rule 1: name '
        "'dir_list' does not start with one of the 41 verbs this check knows "
        "(course_agent.selftest.tool_rules.VERBS: add,"
    )


# -- the hand-in ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("handin")
    at = "labs/day03-extensions.ipynb"
    notebooks = root / "notebooks"
    students = {
        # The starter, saved with a forged 7/7 as its self-test's output.
        "starter": ext_submission(notebooks / "starter.ipynb", edit=saved_output("7/7 passed")),
        # Solved, but saved while it still showed 0/7.
        "solved": ext_submission(
            notebooks / "solved.ipynb", solved(), edit=saved_output("0/7 passed")
        ),
    }

    def run(name: str) -> subprocess.CompletedProcess:
        if name == "source":  # beside the conftest, not a release: compared with its own outputs
            return hand_in(SOURCE, root / name, at="labs/source/day03-extensions.ipynb")
        return hand_in(students[name], root / name, at=at)

    names = [*students, "source"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(names, pool.map(run, names), strict=True))


def shown(run: subprocess.CompletedProcess) -> str:
    return run.stdout[-4000:] + run.stderr[-2000:]


def test_the_starter_fails_the_hand_in_whatever_it_stores(handed_in: dict) -> None:
    run = handed_in["starter"]
    assert run.returncode == 1, shown(run)
    assert re.search("'7/7 passed' == [\"']0/7 passed", run.stdout), shown(run)


def test_a_solved_lab_passes_the_hand_in_whatever_it_stores(handed_in: dict) -> None:
    run = handed_in["solved"]
    assert run.returncode == 0, shown(run)
    assert re.search(r"\b\d+ passed\b", run.stdout) and "failed" not in run.stdout, shown(run)


def test_the_solution_source_matches_its_own_stored_outputs(handed_in: dict) -> None:
    refresh = (
        "refresh it with `course-agent lab execute labs/source/day03-extensions.ipynb`, review "
        "the diff, then release it"
    )
    assert handed_in["source"].returncode == 0, f"{refresh}\n{shown(handed_in['source'])}"


def test_the_readmes_and_the_lab_doc_give_the_extension_hand_in_command_on_one_line() -> None:
    for readme in (REPO / "README.md", REPO / "docs" / "lab.md", LABS / "README.md"):
        lines = readme.read_text(encoding="utf-8").splitlines()
        assert any(line.strip().strip("`") == HANDIN for line in lines), readme


# -- release and nbgrader -------------------------------------------------------------------------


def test_the_shipped_reference_is_what_the_source_generates(tmp_path: Path) -> None:
    release(SOURCE, tmp_path / "student.ipynb", tmp_path / "reference.ipynb")
    paths = f"{SOURCE.relative_to(REPO)} labs/{SOURCE.name}"
    stale = f"stale: run `course-agent lab release {paths}`"
    assert (tmp_path / "student.ipynb").read_bytes() == RELEASE.read_bytes()
    reference = released_path(RELEASE.name)
    assert (tmp_path / "reference.ipynb").read_bytes() == reference.read_bytes(), stale
    expected = [c for c in nbformat.read(reference, 4).cells if c.get("outputs")]
    assert [c.outputs[0]["data"]["text/plain"] for c in expected] == ["7/7 passed"]


def test_nbgrader_accepts_the_source_seven_automatic_points_and_one_read() -> None:
    from nbgrader.nbgraderformat import MetadataValidator  # here: 1.3 s each worker would pay

    nb = nbformat.read(SOURCE, as_version=4)
    MetadataValidator().validate_nb(nb)
    graded = [cell for cell in nb.cells if "nbgrader" in cell.metadata]
    points = [
        (c.cell_type, c.metadata.nbgrader["solution"])
        for c in graded
        if c.metadata.nbgrader["grade"]
    ]
    # Exercise 4's sentence: a markdown answer cell nbgrader leaves to manual grading.
    assert points == [("markdown", True)] + [("code", False)] * 7
    assert [c.metadata.nbgrader["points"] for c in graded if c.metadata.nbgrader["grade"]] == [
        1
    ] * 8
    assert [c.id for c in graded if c.metadata.nbgrader["solution"]] == [
        CELL.format(number) for number in range(1, 6)
    ]
