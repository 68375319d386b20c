"""Restoring a student's notebook: the locked cells come back as released, the student's stay."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from course_agent.lab.restore import is_locked, released_path, restore

v4 = nbformat.v4
LOCKED = {"nbgrader": {"grade": False, "solution": False, "locked": True, "grade_id": "x"}}
SOLUTION = {"nbgrader": {"grade": False, "solution": True, "locked": False, "grade_id": "x"}}
GRADED = {"nbgrader": {"grade": True, "solution": False, "locked": False, "points": 1}}


def reference() -> Any:
    """A small release: text, setup, an exercise, a check, an Explore cell, the self-test."""
    expected = v4.new_output("display_data", data={"text/plain": "7/7 passed"})
    return v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Lab", id="intro", metadata=LOCKED),
            v4.new_code_cell("import lab", id="setup", metadata=LOCKED),
            v4.new_code_cell("raise NotImplementedError", id="exercise", metadata=SOLUTION),
            v4.new_code_cell("check()", id="check", metadata=LOCKED),
            v4.new_code_cell("# try things", id="explore"),
            v4.new_code_cell(
                "show()", id="selftest", metadata=LOCKED, execution_count=6, outputs=[expected]
            ),
        ]
    )


def student(*edits: Any) -> Any:
    nb = reference()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = 1
            cell.outputs = [v4.new_output("stream", text="saved output\n")]
    for edit in edits:
        edit(nb)
    return nb


def ids(nb: Any) -> list[str]:
    return [cell.id for cell in nb.cells]


def cell(nb: Any, cell_id: str) -> Any:
    return next(cell for cell in nb.cells if cell.id == cell_id)


def test_the_students_cells_keep_their_code_and_lose_their_outputs() -> None:
    def solve(nb: Any) -> None:
        cell(nb, "exercise").source = "def answer(): return 42"

    restored = restore(student(solve), reference())
    assert ids(restored) == ids(reference())
    assert cell(restored, "exercise").source == "def answer(): return 42"
    for cell_id in ("exercise", "explore"):
        assert (cell(restored, cell_id).outputs, cell(restored, cell_id).execution_count) == (
            [],
            None,
        )
    nbformat.validate(restored)


def test_locked_cells_come_back_as_released_with_the_expected_output() -> None:
    def tamper(nb: Any) -> None:
        cell(nb, "check").source = "pass"
        cell(nb, "selftest").source = "print('7/7 passed')"
        cell(nb, "selftest").metadata = {}
        cell(nb, "selftest").outputs = [v4.new_output("stream", text="3/7 passed\n")]

    restored = restore(student(tamper), reference())
    for cell_id in ("intro", "setup", "check", "selftest"):
        assert cell(restored, cell_id) == cell(reference(), cell_id)


def test_a_deleted_locked_cell_is_put_back_where_it_was() -> None:
    def delete(nb: Any) -> None:
        nb.cells = [cell for cell in nb.cells if cell.id not in ("setup", "selftest")]

    assert ids(restore(student(delete), reference())) == ids(reference())


def test_added_cells_stay_after_the_cell_they_followed() -> None:
    def add(nb: Any) -> None:
        nb.cells.insert(0, v4.new_code_cell("first", id="a0"))
        nb.cells.insert(4, v4.new_code_cell("after the exercise", id="a1"))
        nb.cells.append(v4.new_code_cell("fake report", id="a2"))

    restored = restore(student(add), reference())
    assert ids(restored) == [
        "a0",
        "intro",
        "setup",
        "exercise",
        "a1",
        "check",
        "explore",
        "selftest",
        "a2",
    ]


def test_moved_locked_cells_go_back_in_place_and_a_deleted_open_cell_stays_deleted() -> None:
    def shuffle(nb: Any) -> None:
        selftest = cell(nb, "selftest")
        nb.cells = [selftest] + [c for c in nb.cells if c.id not in ("selftest", "explore")]

    assert ids(restore(student(shuffle), reference())) == [
        "intro",
        "setup",
        "exercise",
        "check",
        "selftest",
    ]


def test_pasted_duplicates_and_cells_without_ids_get_ids_of_their_own() -> None:
    def paste(nb: Any) -> None:
        copy = v4.new_code_cell("again", id="exercise")  # a second cell with the exercise's id
        bare = v4.new_code_cell("old format")
        del bare["id"]
        nb.cells += [copy, bare]

    restored = restore(student(paste), reference())
    assert len(set(ids(restored))) == len(restored.cells) == 8
    assert [cell.source for cell in restored.cells[-2:]] == ["again", "old format"]


@pytest.mark.parametrize(
    ("metadata", "locked"),
    [({}, False), (LOCKED, True), (SOLUTION, False), (GRADED, True)],
)
def test_locked_means_what_nbgrader_means(metadata: dict, locked: bool) -> None:
    assert is_locked(v4.new_code_cell("x", metadata=metadata)) is locked


def test_the_package_ships_the_lab_it_restores_from() -> None:
    shipped = nbformat.read(released_path(), as_version=4)
    selftest = cell(shipped, "selftest")
    assert is_locked(selftest) and selftest.outputs[0].data == {"text/plain": "7/7 passed"}
    assert not released_path("no-such-lab.ipynb").exists()


def _raw_selftest(nb: Any) -> None:  # a locked cell made raw, its output kept as text
    index = ids(nb).index("selftest")
    nb.cells[index] = v4.new_raw_cell("7/7 passed", id="selftest")


def _selftest_id_on_a_student_cell(nb: Any) -> None:  # before the real one, with a stored 7/7
    fake = v4.new_code_cell("print('7/7 passed')", id="selftest", execution_count=2)
    fake.outputs = [v4.new_output("stream", text="7/7 passed\n")]
    nb.cells.insert(2, fake)


def _selftest_renamed(nb: Any) -> None:  # so that restore would not know it
    cell(nb, "selftest").id = "mine"


def _claims_to_be_graded(nb: Any) -> None:  # a student's cell with nbgrader's grade metadata
    claim = v4.new_code_cell("print('7/7 passed')", id="claim", metadata=GRADED, execution_count=9)
    claim.outputs = [v4.new_output("stream", text="7/7 passed\n")]
    nb.cells.append(claim)


@pytest.mark.parametrize(
    "disguise",
    [_raw_selftest, _selftest_id_on_a_student_cell, _selftest_renamed, _claims_to_be_graded],
)
def test_a_disguised_cell_neither_replaces_a_locked_one_nor_keeps_an_output(disguise: Any) -> None:
    restored = restore(student(disguise), reference())
    locked = [c for c in reference().cells if is_locked(c)]
    for released in locked:
        copies = [c for c in restored.cells if c.id == released.id]
        assert copies == [released], released.id  # once, as released, with the release's output
    released_ids = {c.id for c in locked}
    theirs = [c for c in restored.cells if c.cell_type == "code" and c.id not in released_ids]
    assert theirs
    assert all((c.outputs, c.execution_count) == ([], None) for c in theirs)
    nbformat.validate(restored)


def without_ids(nb: Any) -> Any:
    """`nb` as nbformat 4.4 saves it: no cell has an id."""
    nb = nbformat.from_dict(nbformat.v4.upgrade(nb))
    nb.nbformat_minor = 4
    for each in nb.cells:
        each.pop("id", None)
    return nb


def test_a_notebook_without_ids_is_restored_as_the_same_one_with_them() -> None:
    # nbformat 4.4 saves no ids: the locked cells are found by their content, the exercise by
    # its place between them, so the solved lab runs as it was written, not as added cells.
    def solve(nb: Any) -> None:
        cell(nb, "exercise").source = "def answer(): return 42"
        cell(nb, "explore").source = "print(answer())"

    given = restore(without_ids(student(solve)), reference())
    assert ids(given) == ids(reference())
    assert [each.source for each in given.cells] == [
        each.source for each in restore(student(solve), reference()).cells
    ]


def test_an_added_cell_in_a_notebook_without_ids_stays_where_it_was() -> None:
    def solve_and_add(nb: Any) -> None:
        cell(nb, "exercise").source = "def answer(): return 42"
        nb.cells.insert(3, v4.new_code_cell("helper = 1"))  # between the exercise and check

    given = restore(without_ids(student(solve_and_add)), reference())
    sources = [each.source for each in given.cells]
    assert len(sources) == len(reference().cells) + 1  # the student's copies of locked cells go
    assert sources.index("def answer(): return 42") < sources.index("helper = 1")
    assert sources.index("import lab") < sources.index("def answer(): return 42")
    assert sources.index("helper = 1") < sources.index("check()")
    assert cell(given, "check").source == "check()" and cell(given, "selftest").outputs
