"""Check 5's results: the course's figure first, the boundaries, and the package meets them all."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from course_agent import MAX_RESULT_CHARS, truncate_result
from course_agent.selftest.judge import run_part
from course_agent.selftest.lab import SEED
from course_agent.selftest.truncation import TRUNCATION, results_to_truncate


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32))
def test_the_package_truncation_meets_every_generated_result(seed: int) -> None:
    line = run_part(TRUNCATION, {"truncate": truncate_result}, random.Random(seed))
    assert line.startswith("a 20000-char result truncates to 8054 chars, stating 12000 were cut")


def test_the_results_hold_the_course_figure_the_boundaries_and_a_failed_one() -> None:
    cases = results_to_truncate(random.Random(SEED))
    labels, sizes = [label for label, _ in cases], [len(r.content) for _, r in cases]
    assert sizes[0] == 20000 and labels[0] == "a 20000-char result"
    assert {0, MAX_RESULT_CHARS, MAX_RESULT_CHARS + 1} <= set(sizes)
    assert any(size > 3 * MAX_RESULT_CHARS for size in sizes)
    assert "an 8001-char result" in labels and "an 11-char result" in labels
    failed = [(label, r) for label, r in cases if not r.ok]
    assert len(failed) == 1 and "failed" in failed[0][0] and len(failed[0][1].content) > 8000
    assert all(r.meta for _, r in cases)  # meta to keep
    assert any(not r.content.isascii() for _, r in cases)  # characters, not bytes
    assert all(r.content.endswith("\n") for _, r in cases[1:] if r.content)  # as tool output does
