"""The student lab is generated from the solution notebook, byte for byte, as nbgrader makes it."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from extension_lab import CELL as EXT_CELL
from extension_lab import RELEASE as EXT_RELEASE
from extension_lab import SOURCE as EXT_SOURCE
from extension_lab import solved as ext_solved
from hypothesis import given
from hypothesis import strategies as st
from lab_class import LABS, RELEASE, SOURCE, kernel_env, solved, submission
from starters import committed_starter, starter

from course_agent.lab.jail import sandbox_problem
from course_agent.lab.labs import SELFTEST_CELL
from course_agent.lab.release import (
    CODE_STUB,
    EXPECTED,
    NOTEBOOK_METADATA,
    main_lab,
    release,
    release_notebooks,
    stub_solutions,
)
from course_agent.lab.restore import released_path

REPO = LABS.parent
REFRESH = f"course-agent lab release {SOURCE.relative_to(REPO)} labs/{SOURCE.name}"


def run_stub(code: str) -> str:
    """Run `code` (defining f) and call f(); the NotImplementedError message it raises."""
    namespace: dict = {}
    exec(compile(code, "<stub>", "exec"), namespace)
    with pytest.raises(NotImplementedError) as raised:
        namespace["f"]()
    return str(raised.value)


def test_the_shipped_reference_is_what_the_source_generates(tmp_path: Path) -> None:
    release(SOURCE, tmp_path / "student.ipynb", tmp_path / "reference.ipynb")
    stale = f"stale: run `{REFRESH}`"
    assert (tmp_path / "student.ipynb").read_bytes() == RELEASE.read_bytes()
    assert (tmp_path / "reference.ipynb").read_bytes() == released_path().read_bytes(), stale


@pytest.mark.parametrize("source", [SOURCE, EXT_SOURCE], ids=lambda path: path.stem)
def test_the_released_starter_is_what_the_source_generates(source: Path) -> None:
    # Read from git, where the reference was last released: the clone's labs/ copy is the student's.
    committed = committed_starter(source.name)
    if committed is None:
        pytest.skip("not a git clone: the release is checked through the reference alone")
    where, text = committed
    refresh = REFRESH.replace(SOURCE.name, source.name)
    stale = f"labs/{source.name} in {where} is stale: run `{refresh}`"
    assert text == starter(source).read_bytes(), stale


def test_the_release_does_not_depend_on_how_the_source_is_formatted(tmp_path: Path) -> None:
    # Same notebook, other JSON layout (as another editor might save it): same release bytes.
    reformatted = tmp_path / "source.ipynb"
    reformatted.write_text(json.dumps(json.loads(SOURCE.read_text()), indent=4), encoding="utf-8")
    release(reformatted, tmp_path / "a.ipynb")
    release(SOURCE, tmp_path / "b.ipynb")
    assert (tmp_path / "a.ipynb").read_bytes() == (tmp_path / "b.ipynb").read_bytes()


def test_the_reference_is_the_release_plus_the_expected_self_test_output() -> None:
    student = nbformat.read(RELEASE, as_version=4)
    reference = nbformat.read(released_path(), as_version=4)
    code = [cell.id for cell in reference.cells if cell.cell_type == "code"]
    for ours, theirs in zip(student.cells, reference.cells, strict=True):
        if theirs.id != SELFTEST_CELL:
            assert ours == theirs
            continue
        # nbval compares only cells that ran: the count a fresh Run All gives this cell.
        assert theirs.execution_count == code.index(SELFTEST_CELL) + 1
        assert theirs.outputs == [
            {"output_type": "display_data", "data": {"text/plain": EXPECTED}, "metadata": {}}
        ]
        assert {**theirs, "outputs": [], "execution_count": None} == ours
    assert student.metadata == NOTEBOOK_METADATA
    left = [cell.id for cell in student.cells if "SOLUTION" in cell.source]
    assert not left, f"a solution marker was left in cells {left}"


def test_the_package_ships_its_reference() -> None:
    text = (REPO / "pyproject.toml").read_text()
    table = re.search(r"^\[tool\.setuptools\.package-data\]\ncourse_agent = \[(.*)\]$", text, re.M)
    assert table, "pyproject.toml has no package-data for course_agent"
    patterns = json.loads(f"[{table[1]}]")
    shipped = released_path().relative_to(released_path().parents[2]).as_posix()
    assert any(fnmatch.fnmatch(shipped, pattern) for pattern in patterns), shipped


# -- nbgrader: the same notebook from `nbgrader generate_assignment` ------------------------------


KEY = "sk-nbgrader-probe-0123456789"
PROBE = """\
import os

pids = [pid for pid in os.listdir('/proc') if pid.isdigit()]
print(sorted(os.environ.items()), os.getppid(), pids)"""


@pytest.fixture(scope="module")
def nbgrader_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An nbgrader course made of both labs: generated, then two students autograded."""
    course = tmp_path_factory.mktemp("course")
    (course / "source" / "day03").mkdir(parents=True)
    shutil.copy(SOURCE, course / "source" / "day03" / "day03-lab.ipynb")
    shutil.copy(EXT_SOURCE, course / "source" / "day03" / EXT_SOURCE.name)
    shutil.copy(LABS / "nbgrader_config.py", course / "nbgrader_config.py")
    # nbgrader runs the `alembic` script beside this interpreter to set up its database.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

    def nbgrader(*args: str) -> None:
        command = [sys.executable, "-m", "nbgrader", *args]
        done = subprocess.run(
            command,
            cwd=course,
            env=kernel_env(PATH=path, OPENAI_API_KEY=KEY, GITHUB_TOKEN=KEY),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]

    nbgrader("generate_assignment", "day03")
    released = course / "release" / "day03" / "day03-lab.ipynb"
    alice = {**ext_solved(), 4: "The index is a label: it may start anywhere, calls interleave."}
    for student, exercises, extensions in [("alice", solved(), alice), ("bob", {}, {})]:
        submitted = course / "submitted" / student / "day03"
        submission(submitted / "day03-lab.ipynb", exercises)
        submission(submitted / EXT_SOURCE.name, extensions, release=EXT_RELEASE, cell_id=EXT_CELL)
    # mallory's extra cell prints what its kernel sees: the environment, its parent, the pids.
    submitted = course / "submitted" / "mallory" / "day03" / "day03-lab.ipynb"
    submission(submitted, extra=[PROBE])
    nbgrader("autograde", "day03")
    assert released.is_file()
    return course


@pytest.mark.parametrize("ours_path", [RELEASE, EXT_RELEASE], ids=lambda path: path.stem)
def test_nbgrader_generate_assignment_writes_the_same_student_notebook(
    nbgrader_course: Path, ours_path: Path
) -> None:
    released = nbgrader_course / "release" / "day03" / ours_path.name
    theirs = nbformat.read(released, as_version=4)
    ours = nbformat.read(ours_path, as_version=4)
    assert [cell.id for cell in theirs.cells] == [cell.id for cell in ours.cells]
    for mine, nbgraders in zip(ours.cells, theirs.cells, strict=True):
        assert mine == nbgraders, mine.id  # source, locks, checksums: every field
    assert theirs.metadata == ours.metadata


def test_nbgrader_autograde_gives_a_point_per_check(nbgrader_course: Path) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{nbgrader_course / 'gradebook.db'}") as gradebook:
        scores = {
            (lab, student): gradebook.find_submission_notebook(lab, "day03", student).score
            for lab in ("day03-lab", EXT_RELEASE.stem)
            for student in ("alice", "bob")
        }
        answered = gradebook.find_submission_notebook(EXT_RELEASE.stem, "day03", "alice")
        needs_reading = answered.needs_manual_grade
    # Solved, and the untouched starter, of each lab: 2/7 and, with nothing free, 0/7; the
    # extension lab's sentence waits for a reader (an unanswered one scores 0 by itself).
    assert scores == {
        ("day03-lab", "alice"): 7.0,
        ("day03-lab", "bob"): 2.0,
        ("day03-extensions", "alice"): 7.0,
        ("day03-extensions", "bob"): 0.0,
    }
    assert needs_reading


def test_nbgraders_kernels_get_no_key_and_run_in_the_sandbox(nbgrader_course: Path) -> None:
    # labs/nbgrader_config.py swaps nbgrader's Execute step for course_agent.lab.nbgrader_kernels'
    graded = nbgrader_course / "autograded" / "mallory" / "day03"
    outputs = nbformat.read(graded / "day03-lab.ipynb", as_version=4).cells[-1].outputs
    # One print, but the kernel may flush its writes in more than one stream output when busy.
    printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert KEY not in printed and "OPENAI_API_KEY" not in printed
    if not sandbox_problem():
        assert printed.rstrip().endswith("] 1 ['1', '2']"), printed  # parent: the sandbox's init
    assert sorted(path.name for path in graded.iterdir()) == ["day03-lab.ipynb"]


def test_nbgrader_accepts_the_sources_metadata_and_grades_seven_points() -> None:
    from nbgrader.nbgraderformat import MetadataValidator  # here: 1.3 s each worker would pay

    nb = nbformat.read(SOURCE, as_version=4)
    MetadataValidator().validate_nb(nb)  # raises on a missing grade_id, points, duplicates...
    graded = [cell.metadata.nbgrader for cell in nb.cells if "nbgrader" in cell.metadata]
    points = [meta for meta in graded if meta["grade"]]
    assert [meta["points"] for meta in points] == [1] * 7
    solutions = [meta["grade_id"] for meta in graded if meta["solution"]]
    assert solutions == ["exercise-1", "exercise-2", "exercise-3"]


lines = st.lists(
    st.sampled_from(["x = 1", "    y = 2", "", "# note", "\tz = 3", "    # TODO: do it"]),
    max_size=4,
)


@given(st.lists(st.tuples(lines, lines), max_size=3), lines, st.sampled_from(["", "    ", "\t"]))
def test_any_region_is_stubbed_exactly_as_nbgrader_stubs_it(
    regions: list[tuple[list[str], list[str]]], tail: list[str], indent: str
) -> None:
    code: list[str] = []
    for before, inside in regions:
        code += [*before, f"{indent}### BEGIN SOLUTION", *inside, f"{indent}### END SOLUTION"]
    code = "\n".join(code + tail)
    from nbgrader.preprocessors import ClearSolutions  # here: 1.3 s each worker would pay

    clear = ClearSolutions(code_stub={"python": CODE_STUB})
    cell = nbformat.v4.new_code_cell(code)
    clear._replace_solution_region(cell, "python")
    assert stub_solutions(code) == cell.source


# -- the release's own rules ----------------------------------------------------------------------

SOLUTION = """\
def f():
    # TODO: exercise 9: return the answer
    ### BEGIN SOLUTION
    return 42
    ### END SOLUTION
"""


def test_a_region_becomes_the_stub_indented_like_its_marker() -> None:
    stubbed = stub_solutions(SOLUTION)
    assert stubbed == f"def f():\n    # TODO: exercise 9: return the answer\n    {CODE_STUB}\n"
    assert "TODO comment above" in run_stub(stubbed)


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "line 2: BEGIN"),
        ("x = 1\n### END SOLUTION", "line 2: END SOLUTION without"),
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
    ],
)
def test_unbalanced_markers_are_refused_with_the_line(code: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        stub_solutions(code)


def lab_cell(source: str, cell_id: str, nbgrader: dict | None = None, **fields) -> dict:
    meta = {"nbgrader": {"schema_version": 3, "grade_id": cell_id, **nbgrader}} if nbgrader else {}
    return nbformat.v4.new_code_cell(source, id=cell_id, metadata=meta, **fields)


READ_ONLY = {"grade": False, "solution": False, "locked": True}
SOLUTION_CELL = {"grade": False, "solution": True, "locked": False}


def write_source(path: Path, selftest_output: str | None, *cells: dict) -> Path:
    v4 = nbformat.v4
    selftest = lab_cell("show()", SELFTEST_CELL, READ_ONLY, execution_count=2)
    if selftest_output is not None:
        selftest.outputs = [v4.new_output("display_data", data={"text/plain": selftest_output})]
    work = lab_cell(SOLUTION, "work", SOLUTION_CELL)
    nbformat.write(v4.new_notebook(cells=[*(cells or [work]), selftest]), path)
    return path


def test_a_solution_region_outside_a_solution_cell_is_refused(tmp_path: Path) -> None:
    source = write_source(tmp_path / "s.ipynb", EXPECTED, lab_cell(SOLUTION, "work", READ_ONLY))
    with pytest.raises(ValueError, match="cell work has a solution region but no nbgrader"):
        release_notebooks(source)


def test_a_solution_cell_without_a_region_is_stubbed_whole(tmp_path: Path) -> None:
    source = write_source(tmp_path / "s.ipynb", EXPECTED, lab_cell("x = 1", "work", SOLUTION_CELL))
    student, _ = release_notebooks(source)
    assert student.cells[0].source == CODE_STUB


def test_the_release_strips_counts_timings_and_widget_state(tmp_path: Path) -> None:
    v4 = nbformat.v4
    noisy = lab_cell(
        "x = 1",
        "a",
        execution_count=3,
        outputs=[
            v4.new_output(
                "display_data",
                data={"application/vnd.jupyter.widget-view+json": {"model_id": "f00"}},
            )
        ],
    )
    noisy.metadata["execution"] = {"t": "now"}
    source = write_source(tmp_path / "source.ipynb", EXPECTED, noisy)
    nb = nbformat.read(source, as_version=4)
    nb.metadata = {"widgets": {"state": {}}, "language_info": {"name": "python", "version": "3"}}
    nbformat.write(nb, source)
    student, reference = release_notebooks(source)
    assert student.metadata == NOTEBOOK_METADATA
    first, selftest = student.cells
    assert (first.execution_count, first.outputs, first.metadata) == (None, [], {})
    assert (selftest.execution_count, selftest.outputs) == (None, [])
    assert reference.cells[1].execution_count == 2


@pytest.mark.parametrize(
    ("output", "problem"), [("2/7 passed", "shows 2/7 passed"), (None, "shows nothing")]
)
def test_a_source_that_does_not_show_seven_of_seven_is_refused(
    tmp_path: Path, output: str | None, problem: str
) -> None:
    source = write_source(tmp_path / "source.ipynb", output)
    with pytest.raises(ValueError, match=f"{problem}.*course-agent lab execute"):
        release(source, tmp_path / "student.ipynb")
    assert not (tmp_path / "student.ipynb").exists()


def test_main_lab_releases_both_files_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = write_source(tmp_path / "source.ipynb", EXPECTED)
    dest, reference = tmp_path / "out" / "student.ipynb", tmp_path / "ref" / "student.ipynb"
    argv = ["release", str(source), str(dest), "--reference", str(reference)]
    assert main_lab(argv) == 0
    assert "released" in capsys.readouterr().out
    assert dest.is_file() and reference.is_file()


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (None, 2, "is not a file"),
        ("{not json", 1, "course-agent lab:"),
        ("unclosed", 1, "cell work: a BEGIN SOLUTION is never closed"),
    ],
)
def test_main_lab_explains_a_bad_source(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str | None, code: int, message: str
) -> None:
    source = tmp_path / "source.ipynb"
    if content == "unclosed":
        write_source(source, EXPECTED, lab_cell("### BEGIN SOLUTION\nx = 1", "work", SOLUTION_CELL))
    elif content is not None:
        source.write_text(content)
    argv = ["release", str(source), str(tmp_path / "s.ipynb"), "--reference", str(tmp_path / "r")]
    assert main_lab(argv) == code
    assert message in capsys.readouterr().err


def test_execute_stores_fresh_outputs_that_a_release_then_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("PYTHONPATH", kernel_env()["PYTHONPATH"])  # the kernel runs in tmp_path
    source = tmp_path / "day03-lab.ipynb"
    source.write_bytes(SOURCE.read_bytes())
    assert main_lab(["execute", str(source)]) == 0
    assert capsys.readouterr().out.endswith(": 7/7 passed\n")
    executed = nbformat.read(source, as_version=4)
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert executed.metadata == NOTEBOOK_METADATA
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    assert all("execution" not in cell.metadata for cell in executed.cells)
    assert [cell.id for cell in executed.cells] == [
        cell.id for cell in nbformat.read(SOURCE, 4).cells
    ]
    release(source, tmp_path / "student.ipynb", tmp_path / "reference.ipynb")
    assert (tmp_path / "reference.ipynb").read_bytes() == released_path().read_bytes()


def test_execute_leaves_a_source_whose_cell_hangs_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = write_source(
        tmp_path / "source.ipynb", EXPECTED, lab_cell("while True:\n    pass", "work")
    )
    before = source.read_bytes()
    assert main_lab(["execute", str(source), "--timeout", "2"]) == 1
    assert "timeout: cell 1 ran over 2 s" in capsys.readouterr().err
    assert source.read_bytes() == before
