"""A lab's self-test cell: score the names handed over, show `k/N passed` and what failed.

One line of text, `k/N passed`, when every check passes: that is what nbval compares with the
release's expectation. Otherwise the refusals and the failed checks follow it in the same output,
so nbval's diff shows them too. Deliberately not handled: the score itself (course_agent.lab.score).
"""

from __future__ import annotations

from IPython.display import display

from ..lab.score import Score, score_exercises, score_lab
from ..selftest import SelftestReport

__all__ = ["show_lab_selftest", "show_selftest"]


def _show(score: Score) -> SelftestReport:
    display({"text/plain": score.text()}, raw=True)
    return score.report


def show_selftest(accumulator: object, run_call: object, truncate: object) -> SelftestReport:
    """Score the day-three lab's three exercises as the grader does, display the result, return
    the report.

    Each must be written in the notebook: one imported from course_agent (or a subclass, or a
    wrapper calling the package's) is refused, and the row says so.
    """
    return _show(score_exercises(accumulator, run_call, truncate))


def show_lab_selftest(lab: str, **exercises: object) -> SelftestReport:
    """Score the exercises of the lab called `lab`, given by name (`is_inside=is_inside, ...`),
    as the grader does; display the result and return the report."""
    return _show(score_lab(lab, exercises))
