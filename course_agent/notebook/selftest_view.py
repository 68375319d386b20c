"""A lab's self-test cell: score the names handed over, show `k/N passed` and what failed.

One line of text, `k/N passed`, when every check passes: that is what nbval compares with the
release's expectation. Otherwise the refusals and the failed checks follow it in the same output,
so nbval's diff shows them too. The points cells read the report back with `shown_report`, not
through `report`, a name a cell added under the self-test could rebind. Deliberately not handled:
the score itself (course_agent.lab.score).
"""

from __future__ import annotations

from IPython.display import display

from course_agent.lab.score import Score, score_exercises, score_lab
from course_agent.selftest.lab import SelftestReport

__all__ = ["show_lab_selftest", "show_selftest", "shown_report"]

_shown: list[SelftestReport] = []  # the report a self-test cell displayed last, in this kernel


def _show(score: Score) -> SelftestReport:
    _shown[:] = [score.report]
    display({"text/plain": score.text()}, raw=True)
    return score.report


def shown_report() -> SelftestReport:
    """The report the self-test cell displayed last: what the lab's points cells grade."""
    if not _shown:
        raise RuntimeError("the self-test has not run in this kernel: run the self-test cell first")
    return _shown[0]


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
