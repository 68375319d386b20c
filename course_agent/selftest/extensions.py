"""The extension lab's seven checks, each one line; every one grades only what the student wrote.

Six functions go in (the lab's code exercises); each check is three parts (judge.Part) drawing its
cases from the seed, as the day-three self-test does, and reports through the same Check and
SelftestReport. The starter scores 0/7: unlike the main lab, no check here tests the package
alone. Deliberately not handled: partial credit inside a check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course_agent.selftest.boundary import BOUNDARY
from course_agent.selftest.bounds import GLOB_PAGE, GREP_PAGE
from course_agent.selftest.design import DESIGN, WIRED
from course_agent.selftest.lab import SEED, SelftestReport, run_parts
from course_agent.selftest.turns import REPAIR, TOOL_TURN

__all__ = ["EXTENSION_NAMES", "EXTENSION_PARTS", "run_extensions_selftest"]

# The seven checks; each part's `uses` names which of the six functions it grades (exercise 4's
# sentence is read by a person: nbgrader's manual grading, and `course-agent grade` lists it).
EXTENSION_PARTS = [DESIGN, WIRED, BOUNDARY, GLOB_PAGE, GREP_PAGE, TOOL_TURN, REPAIR]
EXTENSION_NAMES = [part.name for part in EXTENSION_PARTS]


def run_extensions_selftest(
    *,
    list_dir_tool: Callable[[], Any],
    is_inside: Callable[..., Any],
    page_paths: Callable[..., Any],
    page_matches: Callable[..., Any],
    is_tool_turn: Callable[..., Any],
    repair_transcript: Callable[..., Any],
    seed: int = SEED,
) -> SelftestReport:
    """The seven checks in this process on the six functions: the student's own feedback.

    `seed` draws the generated cases: the same seed, the same cases and the same report.
    """
    given = {
        "list_dir_tool": list_dir_tool,
        "is_inside": is_inside,
        "page_paths": page_paths,
        "page_matches": page_matches,
        "is_tool_turn": is_tool_turn,
        "repair_transcript": repair_transcript,
    }
    return run_parts(EXTENSION_PARTS, given, seed)
