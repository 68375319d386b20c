"""The self-test in the notebook's own kernel: the lab's checks on the names it binds, each failed
line naming the exercise and its cell. It is feedback; the grade is judged outside the kernel.

A notebook's namespace is made here as a kernel makes it: the lab's setup cell and the exercise
cells run in one dict whose `__name__` is `__main__`.
"""

from __future__ import annotations

from typing import Any

import nbformat
from headings import EXERCISE_1, EXERCISE_2
from lab_class import RELEASE, solved

from course_agent.lab.score import NOT_THE_GRADE, score_exercises, score_lab, score_namespace


def notebook(exercises: dict[int, str] | None = None) -> dict[str, Any]:
    """The released lab's namespace, run with these exercise cells (the starter's by default)."""
    cells = {cell.get("id"): cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    namespace: dict[str, Any] = {"__name__": "__main__"}
    sources = [cells["setup"], cells["registry"]]
    sources += [(exercises or {}).get(n, cells[f"exercise-{n}"]) for n in (1, 2, 3)]
    for source in sources:
        exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def test_the_solution_scores_seven_and_shows_one_line() -> None:
    score = score_namespace(notebook(solved()))
    assert score.passed == 7 and score.text() == "7/7 passed"


def test_the_starter_scores_two_and_each_line_names_the_exercise_and_its_cell() -> None:
    lines = score_namespace(notebook()).text().splitlines()
    assert lines[0] == "2/7 passed"
    assert [line.split(".")[0] for line in lines[1:-1]] == [f"x {n}" for n in (3, 4, 5, 6, 7)]
    assert lines[-1] == NOT_THE_GRADE
    assert lines[1] == (
        f"x 3. fragment merging: {EXERCISE_1}: "
        "write this part: the TODO comment above says what it must do"
    )
    assert lines[4].startswith(f'x 6. big file: {EXERCISE_2} and "Exercise 3: truncate')
    assert lines[4].endswith("write this part: the TODO comment above says what it must do")


def test_a_missing_exercise_is_named_not_refused() -> None:
    namespace = notebook(solved())
    del namespace["execute_call"]
    line = score_namespace(namespace).report.checks[3].line
    assert line == (f"bad-argument feedback: {EXERCISE_2}: the notebook defines no execute_call")


def test_the_three_ways_in_give_the_same_report() -> None:
    namespace = notebook(solved())
    names = ("ToolCallAccumulator", "execute_call", "truncate_result")
    by_name = score_lab("day03-lab", namespace).report
    assert score_exercises(*(namespace[name] for name in names)).report == by_name
    assert score_namespace(namespace, seed=5).passed == 7
