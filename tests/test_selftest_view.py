"""The lab's self-test cell in a real IPython shell: `k/7 passed` alone at 7/7, else what failed."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from headings import EXERCISE_1, EXERCISE_2
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from lab_class import RELEASE, kernel_env, solved

from course_agent.lab.labs import LABS
from course_agent.notebook import selftest_view
from course_agent.notebook.selftest_view import NOT_SHOWN, STALE

CELL = """\
from course_agent.notebook.selftest_view import show_selftest

report = show_selftest(ToolCallAccumulator, execute_call, truncate_result)"""


def run_lab(shell: InteractiveShell, exercises: dict[int, str]) -> list[str]:
    """Run the lab's setup and exercise cells, then the self-test; the texts it displayed."""
    cells = {cell.get("id"): cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    for source in [cells["setup"], *(exercises.get(n, cells[f"exercise-{n}"]) for n in (1, 2, 3))]:
        assert shell.run_cell(source, store_history=True).success  # as a kernel runs a cell
    return run_selftest(shell)


def run_selftest(shell: InteractiveShell) -> list[str]:
    with capture_output() as shown:
        assert shell.run_cell(CELL, store_history=True).success
    return [output.data["text/plain"] for output in shown.outputs]


# -- issue 33 item 3: a broken exercise cell is reported as broken, by its heading ---------------


def test_a_syntax_error_in_an_exercise_is_reported_not_the_starters_todo(shell) -> None:
    run_lab(shell, {})  # Run All on the starter: the kernel holds the starter's class
    broken = solved()[2].replace("def execute_call(", "def execute_call(,", 1)
    assert not shell.run_cell(broken, store_history=True).success
    line = broken.splitlines().index(next(x for x in broken.splitlines() if "execute_call(," in x))
    lines = run_selftest(shell)[0].splitlines()
    said = (
        f"{EXERCISE_2}, line {line + 1}: SyntaxError: invalid syntax; fix it and run the cell again"
    )
    assert lines[2] == f"x 4. bad-argument feedback: {said}"
    assert "write this part" not in "".join(x for x in lines if "bad-argument" in x)
    assert lines[4] == f"x 6. big file: {said}" and lines[5] == f"x 7. offline loop: {said}"


def test_a_solved_exercise_broken_afterwards_no_longer_passes(shell) -> None:
    assert run_lab(shell, solved()) == ["7/7 passed"]
    # The kernel still holds the solved accumulator; the cell as it stands cannot run.
    assert not shell.run_cell(solved()[1] + "\n    oops(", store_history=True).success
    lines = run_selftest(shell)[0].splitlines()
    assert lines[0] == "5/7 passed"  # checks 3 and 7 run exercise 1
    assert lines[1].startswith(f"x 3. fragment merging: {EXERCISE_1}, line 35: SyntaxError: ")
    assert lines[2].startswith(f"x 7. offline loop: {EXERCISE_1}, line 35: SyntaxError: ")


def test_an_exercise_cell_that_raised_before_defining_says_so(shell) -> None:
    assert run_lab(shell, solved()) == ["7/7 passed"]
    assert not shell.run_cell("1 / 0\n" + solved()[3], store_history=True).success
    lines = run_selftest(shell)[0].splitlines()
    assert lines[1] == (
        f'x 5. truncation: in "Exercise 3: truncate results from the middle (step 4)", {STALE}'
    )
    shell.run_cell(solved()[3], store_history=True)  # fixed and run again: it counts again
    assert run_selftest(shell) == ["7/7 passed"]


def test_the_points_cells_never_raise_before_the_selftest_showed_anything(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selftest_view, "_shown", [])  # a fresh kernel, or the self-test raised
    cells = {cell.get("id"): cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    with capture_output() as shown:
        runs = [shell.run_cell(cells[f"points-{n}"]) for n in range(1, 8)]
    assert [(run.success, run.result) for run in runs] == [(True, 0)] * 7
    printed = [line for line in shown.stdout.splitlines() if not line.startswith("Out[")]
    assert printed == [NOT_SHOWN] * 7


def test_a_solved_lab_shows_one_line_and_binds_the_report(shell: InteractiveShell) -> None:
    assert run_lab(shell, solved()) == ["7/7 passed"]
    assert shell.user_ns["report"].passed == 7


def test_an_unsolved_lab_shows_what_failed_in_the_same_output(shell: InteractiveShell) -> None:
    shown = run_lab(shell, {3: solved()[3]})
    assert len(shown) == 1  # one output: nbval's diff shows the failures beside the expectation
    lines = shown[0].splitlines()
    assert lines[0] == "3/7 passed"
    assert lines[1].startswith(f"x 3. fragment merging: {EXERCISE_1}: write this")
    assert [check.ok for check in shell.user_ns["report"].checks].count(True) == 3


def test_rebinding_the_selftest_in_a_cell_changes_nothing(shell: InteractiveShell) -> None:
    rebound = "\n\nrun_selftest = show_selftest = lambda *a, **k: None"
    assert run_lab(shell, {1: solved()[1] + rebound}) == [run_lab(shell, {1: solved()[1]})[0]]


def test_the_points_cells_grade_the_report_shown_whatever_report_is_bound_to(
    shell: InteractiveShell,
) -> None:
    # nbgrader keeps a cell the student adds between the self-test and the points cells.
    cells = {cell.get("id"): cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    assert run_lab(shell, {})[0].startswith("2/7 passed")
    rebound = "from types import SimpleNamespace as N\n\n"
    rebound += "report = N(checks=[N(ok=True, line='') for _ in range(7)], passed=7)"
    assert shell.run_cell(rebound).success
    runs = [shell.run_cell(cells[f"points-{n}"]) for n in range(1, 8)]
    # Each cell's value is its point for nbgrader; none raises, so Run All reaches the end.
    assert [run.success for run in runs] == [True] * 7
    assert [run.result for run in runs] == [1, 1, 0, 0, 0, 0, 0]


def test_every_labs_points_cells_read_the_shown_report() -> None:
    for lab in LABS.values():
        graded = [
            cell.source
            for cell in nbformat.read(lab.released, as_version=4).cells
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade")
            and cell.cell_type == "code"  # not an answer a person reads
        ]
        assert graded, lab.name
        for source in graded:
            assert "shown_report()" in source and not re.search(r"(?<!_)\breport\.", source), source


@pytest.mark.parametrize("lab", sorted(LABS))
def test_run_all_on_each_starter_reaches_the_end_without_a_traceback(
    lab: str, tmp_path: Path
) -> None:
    # As JupyterLab's Run All: the first error would stop it (nbclient raises CellExecutionError).
    from nbclient import NotebookClient

    nb = nbformat.read(LABS[lab].released, as_version=4)  # the starter, not a working copy
    # Nor does the kernel load nbformat (with jsonschema's IRI grammar, 2.8 s of the self-test).
    loaded = "import sys\nprint([m for m in ('nbformat', 'jsonschema') if m in sys.modules])"
    nb.cells.append(nbformat.v4.new_code_cell(loaded))
    NotebookClient(nb, timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute(
        env=kernel_env()
    )
    assert nb.cells.pop().outputs[0]["text"] == "[]\n"
    shown = [cell for cell in nb.cells if cell.cell_type == "code" and cell.outputs]
    assert not [o for c in shown for o in c.outputs if o.output_type == "error"]
    points = [c for c in shown if c.metadata.get("nbgrader", {}).get("grade")]
    values = [c.outputs[-1]["data"]["text/plain"] for c in points]
    assert values == (["1", "1"] + ["0"] * 5 if lab == "day03-lab" else ["0"] * 7)


def test_in_a_kernel_the_selftest_names_each_broken_exercise_cell(tmp_path: Path) -> None:
    # A real ipykernel, as JupyterLab's: cells compiled under ipykernel's own file names.
    from nbclient import NotebookClient

    nb = nbformat.read(RELEASE, as_version=4)
    where = {cell.get("id"): index for index, cell in enumerate(nb.cells)}
    raised = nbformat.v4.new_code_cell("1 / 0\n" + solved()[1])  # the solved one stays held
    cut = nb.cells[where["exercise-2"]].source.replace("def execute_call(", "def execute_call(,")
    nb.cells[where["exercise-1"]].source = solved()[1]
    nb.cells.insert(where["exercise-2"] + 1, nbformat.v4.new_code_cell(cut))
    nb.cells.insert(where["exercise-1"] + 1, raised)
    client = NotebookClient(nb, timeout=60, allow_errors=True)
    client.resources = {"metadata": {"path": str(tmp_path)}}
    client.execute(env=kernel_env())
    selftest = next(cell for cell in nb.cells if cell.get("id") == "selftest")
    lines = selftest.outputs[0]["data"]["text/plain"].splitlines()
    assert lines[1] == f"x 3. fragment merging: {EXERCISE_1}, {STALE}"
    assert lines[2].startswith(f"x 4. bad-argument feedback: {EXERCISE_2}, line 4: SyntaxError: ")
