"""The extension lab's self-test: the solution scores 7/7, the starter 0/7, and every wrong answer
in tests/extension_lab.py fails its own check with a line naming the case.

Scored in-process, as `course-agent grade` scores a kernel's namespace (tests/test_lab_extensions.py
does it in real kernels); a wrong answer runs only the check it must fail.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from extension_lab import WRONG, namespace, solution, solved

from course_agent.lab.score import score_lab
from course_agent.selftest.extensions import (
    EXTENSION_NAMES,
    EXTENSION_PARTS,
    run_extensions_selftest,
)
from course_agent.selftest.judge import CheckFailed, run_part
from course_agent.selftest.lab import SEED

LAB = "day03-extensions"
LONGEST_LINE = 320  # two lines of a narrow terminal, at most: a failure says what to fix, briefly


@pytest.fixture(scope="module")
def solved_names() -> dict[str, Any]:
    return namespace(solved())


def test_the_solution_scores_seven_and_shows_one_line(solved_names: dict[str, Any]) -> None:
    score = score_lab(LAB, solved_names)
    assert score.passed == 7, score.text()
    assert score.text() == "7/7 passed"
    assert [check.name for check in score.report.checks] == EXTENSION_NAMES
    assert all(check.line and "\n" not in check.line for check in score.report.checks)


def test_the_starter_scores_nothing_and_lists_every_check() -> None:
    lines = score_lab(LAB, namespace()).text().splitlines()
    assert lines[0] == "0/7 passed"
    assert [line.split(".")[0] for line in lines[1:-1]] == [f"x {n}" for n in range(1, 8)]
    assert all("the TODO comment above says what it must do" in line for line in lines[1:-1])
    assert lines[-1].startswith("(your feedback, not the grade")


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_answer_fails_its_check_naming_the_case(name: str) -> None:
    number, edit, check, words = WRONG[name]
    names = namespace({**solved(), number: edit(solution(number))})
    part = EXTENSION_PARTS[check - 1]
    title, functions = part.name, {graded: names[graded] for graded in part.uses}
    with pytest.raises(CheckFailed) as failed:  # what the report shows after "x N. {title}: "
        run_part(part, functions, random.Random(f"{SEED}:{title}"))
    line = str(failed.value)
    assert words in line
    assert len(f"x {check}. {title}: {line}") <= LONGEST_LINE and "\n" not in line


def test_the_same_seed_gives_the_same_report_and_another_seed_the_same_verdicts(
    solved_names: dict[str, Any],
) -> None:
    functions = {name: solved_names[name] for name in FUNCTIONS}
    assert run_extensions_selftest(**functions) == score_lab(LAB, solved_names).report
    other = run_extensions_selftest(**functions, seed=7)
    assert [check.ok for check in other.checks] == [True] * 7


def test_every_function_is_named_by_the_lab_and_required() -> None:
    assert sorted(FUNCTIONS) == sorted({graded for part in EXTENSION_PARTS for graded in part.uses})
    with pytest.raises(TypeError, match="is_inside"):
        run_extensions_selftest(**{name: print for name in FUNCTIONS if name != "is_inside"})


FUNCTIONS = [
    "list_dir_tool",
    "is_inside",
    "page_paths",
    "page_matches",
    "is_tool_turn",
    "repair_transcript",
]
