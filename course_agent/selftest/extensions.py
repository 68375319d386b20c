"""The extension lab's seven checks, each one line; every one grades only what the student wrote.

Six functions go in (the lab's code exercises); each check draws its own generated cases from the
seed, as the day-three self-test does, and reports through the same Check and SelftestReport. The
starter scores 0/7: unlike the main lab, no check here tests the package alone. Deliberately not
handled: partial credit inside a check.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from course_agent.selftest.boundary import check_boundary
from course_agent.selftest.bounds import check_glob_page, check_grep_page
from course_agent.selftest.design import check_design, check_wired
from course_agent.selftest.lab import SEED, Check, SelftestReport
from course_agent.selftest.turns import check_repair, check_tool_turn

__all__ = ["EXTENSION_NAMES", "run_extensions_selftest"]

# (check name, what it runs, which of the six functions it grades)
CHECKS: list[tuple[str, Callable[[Any, random.Random], str], str]] = [
    ("tool design", check_design, "list_dir_tool"),
    ("tool in a registry", check_wired, "list_dir_tool"),
    ("path boundary", check_boundary, "is_inside"),
    ("glob's page", check_glob_page, "page_paths"),
    ("grep's page", check_grep_page, "page_matches"),
    ("tool turn", check_tool_turn, "is_tool_turn"),
    ("transcript repair", check_repair, "repair_transcript"),
]
EXTENSION_NAMES = [name for name, _, _ in CHECKS]


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
    """Run the seven checks on the six functions; a check that raises anything simply fails.

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
    checks = []
    for number, (name, check, graded) in enumerate(CHECKS, 1):
        try:
            line = check(given[graded], random.Random(f"{seed}:{name}"))
            checks.append(Check(number, name, True, line))
        except Exception as exc:  # a stub raising NotImplementedError lands here
            reason = " ".join((str(exc) or type(exc).__name__).splitlines())
            checks.append(Check(number, name, False, f"{name}: {reason}"))
    return SelftestReport(checks, seed)
