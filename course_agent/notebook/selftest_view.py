"""The lab's self-test cell: score the three names handed over, show `k/7 passed` and what failed.

One line of text, `k/7 passed`, when every check passes: that is what nbval compares with the
release's expectation. Otherwise the refusals and the failed checks follow it in the same output,
so nbval's diff shows them too. Deliberately not handled: the score itself (course_agent.lab.score).
"""

from __future__ import annotations

from IPython.display import display

from ..lab.score import score_exercises
from ..selftest import SelftestReport

__all__ = ["show_selftest"]


def show_selftest(accumulator: object, run_call: object, truncate: object) -> SelftestReport:
    """Score the lab's three exercises as the grader does, display the result, return the report.

    Each must be written in the notebook: one imported from course_agent (or a subclass, or a
    wrapper calling the package's) is refused, and the row says so.
    """
    score = score_exercises(accumulator, run_call, truncate)
    display({"text/plain": score.text()}, raw=True)
    return score.report
