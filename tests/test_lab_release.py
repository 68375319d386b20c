"""The student lab is generated from the solution notebook, byte for byte, and says what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

import course_agent
from course_agent.lab_release import (
    EXPECTED,
    NOTEBOOK_METADATA,
    SELFTEST_CELL,
    main_lab,
    release,
    stub_solutions,
)

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "labs" / "source" / "day03-lab.ipynb"
RELEASE = REPO / "labs" / "day03-lab.ipynb"
REFRESH = f"course-agent lab release {SOURCE.relative_to(REPO)} {RELEASE.relative_to(REPO)}"


def run_stub(code: str) -> str:
    """Run `code` (defining f) and call f(); the NotImplementedError message it raises."""
    namespace: dict = {}
    exec(compile(code, "<stub>", "exec"), namespace)
    with pytest.raises(NotImplementedError) as raised:
        namespace["f"]()
    return str(raised.value)


def test_the_committed_release_is_what_the_source_generates(tmp_path: Path) -> None:
    release(SOURCE, tmp_path / "day03-lab.ipynb")
    fresh = (tmp_path / "day03-lab.ipynb").read_bytes()
    assert fresh == RELEASE.read_bytes(), f"labs/day03-lab.ipynb is stale: run `{REFRESH}`"


def test_the_release_does_not_depend_on_how_the_source_is_formatted(tmp_path: Path) -> None:
    # Same notebook, other JSON layout (as another editor might save it): same release bytes.
    reformatted = tmp_path / "source.ipynb"
    reformatted.write_text(json.dumps(json.loads(SOURCE.read_text()), indent=4), encoding="utf-8")
    release(reformatted, tmp_path / "a.ipynb")
    release(SOURCE, tmp_path / "b.ipynb")
    assert (tmp_path / "a.ipynb").read_bytes() == (tmp_path / "b.ipynb").read_bytes()


def test_the_release_keeps_only_the_expected_self_test_output() -> None:
    nb = nbformat.read(RELEASE, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    for position, cell in enumerate(code, 1):
        if cell.id == SELFTEST_CELL:
            # nbval compares only cells that ran: the count a fresh Run All gives this cell.
            assert cell.execution_count == position
            assert cell.outputs == [
                {"output_type": "display_data", "data": {"text/plain": EXPECTED}, "metadata": {}}
            ]
        else:
            assert (cell.execution_count, cell.outputs) == (None, [])
    assert nb.metadata == NOTEBOOK_METADATA
    left = [cell.id for cell in code if "### " in cell.source]
    assert not left, f"a solution marker, TODO or HINT was left in cells {left}"


def test_the_release_strips_counts_timings_and_widget_state(tmp_path: Path) -> None:
    v4 = nbformat.v4
    source = v4.new_notebook(
        metadata={
            "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}},
            "language_info": {"name": "python", "version": "3.11.7"},
        },
        cells=[
            v4.new_code_cell(
                "x = 1",
                id="a",
                execution_count=3,
                metadata={"execution": {"t": "now"}},
                outputs=[
                    v4.new_output(
                        "display_data",
                        data={"application/vnd.jupyter.widget-view+json": {"model_id": "f00"}},
                    )
                ],
            ),
            v4.new_code_cell(
                "show()",
                id=SELFTEST_CELL,
                execution_count=4,
                outputs=[
                    v4.new_output(
                        "display_data", data={"text/plain": EXPECTED}, metadata={"checks": [1]}
                    )
                ],
            ),
        ],
    )
    nbformat.write(source, tmp_path / "source.ipynb")
    release(tmp_path / "source.ipynb", tmp_path / "student.ipynb")
    student = nbformat.read(tmp_path / "student.ipynb", as_version=4)
    assert student.metadata == NOTEBOOK_METADATA
    first, selftest = student.cells
    assert (first.execution_count, first.outputs, first.metadata) == (None, [], {})
    assert selftest.execution_count == 2
    assert selftest.outputs[0].metadata == {}


SOLUTION = """\
def f():
    ### BEGIN SOLUTION
    ### TODO: exercise 9: return the answer
    ### HINT: it is 42
    return 42
    ### END SOLUTION
"""


def test_a_region_becomes_its_hints_and_a_stub_indented_like_its_marker() -> None:
    assert stub_solutions(SOLUTION) == (
        'def f():\n    # it is 42\n    raise NotImplementedError("exercise 9: return the answer")\n'
    )


def test_code_outside_regions_is_kept_and_every_region_is_stubbed() -> None:
    code = "x = 1\n" + SOLUTION + "\n\n" + SOLUTION.replace("def f", "def g") + "y = 2"
    stubbed = stub_solutions(code)
    assert stubbed.startswith("x = 1\n") and stubbed.endswith("y = 2")
    assert stubbed.count("raise NotImplementedError") == 2
    assert "return 42" not in stubbed


def test_a_region_without_todo_still_says_what_to_do() -> None:
    code = "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"
    message = run_stub(stub_solutions(code))
    assert "exercise text above" in message


def test_a_long_message_is_wrapped_within_100_columns() -> None:
    message = " ".join(["all work and no play makes a dull lab"] * 3)
    region = f"    ### BEGIN SOLUTION\n    ### TODO: {message}\n    ### END SOLUTION"
    stubbed = stub_solutions("def f():\n" + region)
    assert len(stubbed.splitlines()) > 3
    assert max(len(line) for line in stubbed.splitlines()) <= 100
    assert run_stub(stubbed) == message


words = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=30
)


@given(st.lists(words, min_size=1, max_size=40), st.sampled_from(["    ", "        "]))
def test_any_todo_text_becomes_the_exact_message_of_a_stub_that_compiles(
    todo: list[str], indent: str
) -> None:
    # Quotes, backslashes, non-ASCII, lines long enough to wrap: the message arrives intact.
    message = " ".join(todo)
    region = ["### BEGIN SOLUTION", f"### TODO: {message}", "### END SOLUTION"]
    code = "def f():\n" + "\n".join(indent + line for line in region)
    assert run_stub(stub_solutions(code)) == message


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "line 2: ### BEGIN"),
        ("x = 1\n### END SOLUTION", "line 2: ### END SOLUTION without"),
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
    ],
)
def test_unbalanced_markers_are_refused_with_the_line(code: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        stub_solutions(code)


def write_source(path: Path, selftest_output: str | None, code: str = "x = 1") -> Path:
    v4 = nbformat.v4
    selftest = v4.new_code_cell("show()", id=SELFTEST_CELL, execution_count=2)
    if selftest_output is not None:
        selftest.outputs = [v4.new_output("display_data", data={"text/plain": selftest_output})]
    nb = v4.new_notebook(cells=[v4.new_code_cell(code, id="work"), selftest])
    nbformat.write(nb, path)
    return path


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


def test_main_lab_releases_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = write_source(tmp_path / "source.ipynb", EXPECTED)
    assert main_lab(["release", str(source), str(tmp_path / "out" / "student.ipynb")]) == 0
    assert "released" in capsys.readouterr().out
    assert (tmp_path / "out" / "student.ipynb").is_file()


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (None, 2, "is not a file"),
        ("{not json", 1, "course-agent lab:"),
        ("unclosed", 1, "cell work: a ### BEGIN SOLUTION is never closed"),
    ],
)
def test_main_lab_explains_a_bad_source(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str | None, code: int, message: str
) -> None:
    source = tmp_path / "source.ipynb"
    if content == "unclosed":
        write_source(source, EXPECTED, code="### BEGIN SOLUTION\nx = 1")
    elif content is not None:
        source.write_text(content)
    assert main_lab(["release", str(source), str(tmp_path / "student.ipynb")]) == code
    assert message in capsys.readouterr().err


def test_execute_stores_fresh_outputs_that_a_release_then_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel runs in tmp_path: make the package importable there even when not installed.
    package_root = str(Path(course_agent.__file__).resolve().parent.parent)
    paths = [package_root, os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    v4 = nbformat.v4
    source = tmp_path / "source.ipynb"
    nbformat.write(
        v4.new_notebook(
            cells=[
                v4.new_code_cell(
                    "from course_agent import run_selftest\n"
                    "from course_agent.grading import show_report",
                    id="setup",
                ),
                v4.new_code_cell("show_report(run_selftest())", id=SELFTEST_CELL),
            ]
        ),
        source,
    )
    assert main_lab(["execute", str(source)]) == 0
    executed = nbformat.read(source, as_version=4)
    assert executed.metadata == NOTEBOOK_METADATA
    assert [cell.execution_count for cell in executed.cells] == [1, 2]
    assert all("execution" not in cell.metadata for cell in executed.cells)
    release(source, tmp_path / "student.ipynb")
    student = nbformat.read(tmp_path / "student.ipynb", as_version=4)
    assert student.cells[1].outputs[0].data == {"text/plain": EXPECTED}


def test_execute_leaves_a_source_whose_cell_hangs_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = write_source(tmp_path / "source.ipynb", EXPECTED, code="while True:\n    pass")
    before = source.read_bytes()
    assert main_lab(["execute", str(source), "--timeout", "2"]) == 1
    assert "timeout: cell 1 ran over 2 s" in capsys.readouterr().err
    assert source.read_bytes() == before
