"""The extension lab's eight checks, each one line; every one grades only what the student wrote.

Seven functions go in (the lab's exercises); each check is three parts (judge.Part) drawing its
cases from the seed, as the day-three self-test does, and reports through the same Check and
SelftestReport. The starter scores 0/8: unlike the main lab, no check here tests the package
alone. Deliberately not handled: partial credit inside a check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course_agent.selftest.boundary import BOUNDARY
from course_agent.selftest.bounds import GLOB_PAGE, GREP_PAGE
from course_agent.selftest.design import DESIGN, WIRED
from course_agent.selftest.lab import SEED, SelftestReport, run_parts
from course_agent.selftest.turns import ASSUMPTION, REPAIR, TOOL_TURN

__all__ = ["EXTENSION_NAMES", "EXTENSION_PARTS", "run_extensions_selftest"]

# The eight checks; each part's `uses` names which of the seven functions it grades.
EXTENSION_PARTS = [DESIGN, WIRED, BOUNDARY, GLOB_PAGE, GREP_PAGE, ASSUMPTION, TOOL_TURN, REPAIR]
EXTENSION_NAMES = [part.name for part in EXTENSION_PARTS]


def run_extensions_selftest(
    *,
    list_dir_tool: Callable[[], Any],
    is_inside: Callable[..., Any],
    page_paths: Callable[..., Any],
    page_matches: Callable[..., Any],
    must_not_assume: Callable[[], Any],
    is_tool_turn: Callable[..., Any],
    repair_transcript: Callable[..., Any],
    seed: int = SEED,
) -> SelftestReport:
    """The eight checks in this process on the seven functions: the student's own feedback.

    `seed` draws the generated cases: the same seed, the same cases and the same report.
    """
    given = {
        "list_dir_tool": list_dir_tool,
        "is_inside": is_inside,
        "page_paths": page_paths,
        "page_matches": page_matches,
        "must_not_assume": must_not_assume,
        "is_tool_turn": is_tool_turn,
        "repair_transcript": repair_transcript,
    }
    return run_parts(EXTENSION_PARTS, given, seed)
