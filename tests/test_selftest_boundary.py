"""Extension check 3: its cases say what resolve_inside says; a wrong judge is told which case."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from course_agent.paths import resolve_inside
from course_agent.protocol import ToolError
from course_agent.selftest.boundary import CASES, boundary_cases, build_tree, check_boundary
from course_agent.selftest.judge import CheckFailed


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


def test_the_cases_are_drawn_in_a_seeded_order_through_both_roots(tmp_path: Path) -> None:
    first = (
        boundary_cases(tmp_path / "a", random.Random(1)) if (tmp_path / "a").mkdir() is None else []
    )
    again = (
        boundary_cases(tmp_path / "b", random.Random(1)) if (tmp_path / "b").mkdir() is None else []
    )
    assert sorted(case.label for case, _, _ in first) == sorted(case.label for case in CASES)
    assert [case.label for case, _, _ in first] == [case.label for case, _, _ in again]
    assert {root.name == "alias" for _, root, _ in first} == {True, False}


def test_the_packages_own_judgement_passes(tmp_path: Path) -> None:
    assert "22 paths judged" in check_boundary(judged, random.Random(3))


def prefix_only(root: Path, path: str) -> bool:
    """Resolves everything right, then compares without a separator: the sibling-prefix trap."""
    if path.startswith("~"):
        return False
    try:
        base, target = root.resolve(), (root.resolve() / path).resolve()
    except (OSError, RuntimeError):
        return False
    return os.path.realpath(target) == str(target) and str(target).startswith(str(base))


def test_the_sibling_prefix_trap_is_named_with_what_to_do() -> None:
    with pytest.raises(CheckFailed) as failed:
        check_boundary(prefix_only, random.Random(3))
    message = str(failed.value)
    assert message.startswith("the sibling") and "you said inside" in message
    assert (
        "compare with the root plus a separator" in message
        and "(and 3 more of 22 paths)" in message
    )


def test_an_answer_that_is_no_bool_or_raises_is_told_to_return_one() -> None:
    with pytest.raises(CheckFailed, match="is_inside returned 'yes'; return True or False"):
        check_boundary(lambda root, path: "yes", random.Random(3))
