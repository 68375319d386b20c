"""A lab's self-test cell: run the checks on the names handed over, show `k/N passed`, what failed.

One line of text, `k/N passed`, when every check passes: that is what nbval compares with the
release's expectation. Otherwise the refusals and the failed checks follow it in the same output,
so nbval's diff shows them too. It is the student's feedback, not the grade: the grader asks the
kernel its own cases and judges the answers outside it (course_agent.lab.ask). The points cells
read the report back with `shown_report`. Deliberately not handled: the grade itself.
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
    """Run the day-three lab's seven checks on the three exercises, display the result, return
    the report: the student's feedback; the grade is judged by the grader on cases of its own."""
    return _show(score_exercises(accumulator, run_call, truncate))


def show_lab_selftest(lab: str, **exercises: object) -> SelftestReport:
    """Run the checks of the lab called `lab` on the exercises given by name
    (`is_inside=is_inside, ...`); display the result and return the report (feedback, not the
    grade)."""
    return _show(score_lab(lab, exercises))
