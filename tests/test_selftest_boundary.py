"""Extension check 3: its cases say what resolve_inside says; a wrong judge is told which case."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from course_agent.paths import resolve_inside
from course_agent.protocol import ToolError
from course_agent.selftest.boundary import BOUNDARY, CASES, build_tree, cases_boundary
from course_agent.selftest.judge import CheckFailed, run_part


def judged(root: Path, path: str) -> bool:
    try:
        resolve_inside(root, path)
    except ToolError:
        return False
    return True


@pytest.mark.parametrize("root", ["app07", "alias"])
def test_every_case_says_what_resolve_inside_says(tmp_path: Path, root: str) -> None:
    build_tree(tmp_path, "app07", "app07-secrets")
    for case in CASES:
        path = case.path.format(base=tmp_path, root="app07", sibling="app07-secrets")
        assert judged(tmp_path / root, path) is case.inside, case.label


def test_the_cases_are_drawn_in_a_seeded_order_through_both_roots() -> None:
    first, again = cases_boundary(random.Random(1)), cases_boundary(random.Random(1))
    labels = sorted(case.label for case in CASES)
    assert sorted(case["where"].split(" (")[0] for case in first) == labels
    assert first == again
    assert {case["ask"]["alias"] for case in first} == {True, False}


def test_the_packages_own_judgement_passes(tmp_path: Path) -> None:
    assert "22 paths judged" in run_part(BOUNDARY, {"is_inside": judged}, random.Random(3))


def prefix_only(root: Path, path: str) -> bool:
    """Resolves everything right, then compares without a separator: the sibling-prefix trap."""
    try:
        base, target = root.resolve(), (root.resolve() / path).resolve()
    except (OSError, RuntimeError):
        return False
    return os.path.realpath(target) == str(target) and str(target).startswith(str(base))


def test_the_sibling_prefix_trap_is_named_with_what_to_do() -> None:
    with pytest.raises(CheckFailed) as failed:
        run_part(BOUNDARY, {"is_inside": prefix_only}, random.Random(3))
    message = str(failed.value)
    assert message.startswith("the sibling") and "you said inside" in message
    assert (
        "compare with the root plus a separator" in message
        and "(and 3 more of 22 paths)" in message
    )


def refuses_tilde(root: Path, path: str) -> bool:
    """Right everywhere, but a name starting with ~ is called outside: a string rule."""
    return not path.startswith("~") and judged(root, path)


def test_a_string_rule_for_tilde_is_told_the_resolved_path_decides() -> None:
    with pytest.raises(CheckFailed, match="only the resolved path decides"):
        run_part(BOUNDARY, {"is_inside": refuses_tilde}, random.Random(3))


def test_an_answer_that_is_no_bool_or_raises_is_told_to_return_one() -> None:
    with pytest.raises(CheckFailed, match="is_inside returned 'yes'; return True or False"):
        run_part(BOUNDARY, {"is_inside": lambda root, path: "yes"}, random.Random(3))
