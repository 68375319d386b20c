"""A lab's self-test cell: run the checks on the names handed over, show `k/N passed`, what failed.

One line of text, `k/N passed`, when every check passes: that is what nbval compares with the
release's expectation. Otherwise the refusals and the failed checks follow it in the same output,
so nbval's diff shows them too. An exercise cell whose last run raised (a SyntaxError leaves the
kernel holding what an earlier run defined) fails its checks, naming its heading and the error.
It is the student's feedback, not the grade: the grader asks the kernel its own cases and judges
the answers outside it (course_agent.lab.ask). The points cells read the report back with
`shown_report`, which never raises. Deliberately not handled: the grade itself.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Mapping, Sequence
from typing import Any

from IPython.display import display

from course_agent.lab.labs import LABS, Lab, find_lab
from course_agent.lab.score import MAIN, Score, score_lab
from course_agent.selftest.lab import SEED, Check, SelftestReport

__all__ = [
    "NOT_SHOWN",
    "STALE",
    "broken_cells",
    "show_lab_selftest",
    "show_selftest",
    "shown_report",
]

_shown: list[SelftestReport] = []  # the report a self-test cell displayed last, in this kernel
NOT_SHOWN = (
    "the self-test has shown no result in this kernel yet: run the self-test cell above (if it "
    "raises, fix the exercise cell it names, run that, then the self-test again)"
)


STALE = "its last run raised an error (the kernel holds an earlier run's): run the cell again"


def _show(score: Score) -> SelftestReport:
    _shown[:] = [score.report]
    display({"text/plain": score.text()}, raw=True)
    return score.report


def shown_report() -> SelftestReport:
    """The report the self-test cell displayed last: what the lab's points cells grade. Before
    one was shown, every check is failed with NOT_SHOWN: a points cell never raises."""
    if not _shown:
        checks = max(len(lab.parts) for lab in LABS.values())
        return SelftestReport([Check(n, "", False, NOT_SHOWN) for n in range(1, checks + 1)], SEED)
    return _shown[0]


def _cell_source(value: object) -> str | None:
    """The source of the cell that defined `value` (a function, or a class through its first
    method), from the cache IPython keeps of each cell it ran; None if it came from elsewhere."""
    members = vars(value).values() if isinstance(value, type) else [value]
    code = next((f.__code__ for f in members if hasattr(f, "__code__")), None)
    # IPython's "<ipython-input-3-...>", ipykernel's ".../ipykernel_123/4567.py": never on disk
    if code is None or not (code.co_filename.startswith("<") or "ipykernel_" in code.co_filename):
        return None
    return "".join(linecache.getlines(code.co_filename)) or None


def _syntax_error(source: str) -> str:
    try:
        compile(source, "<exercise>", "exec")
    except SyntaxError as exc:
        return f"line {exc.lineno}: SyntaxError: {exc.msg}; fix it and run the cell again"
    return ""


def broken_cells(lab: Lab, objects: Mapping[str, object], history: Sequence[str]) -> dict[str, str]:
    """Exercise cell id -> why its last run did not take, for each exercise whose latest
    definition in `history` (the kernel's `In`) is not what `objects` holds."""
    broken: dict[str, str] = {}
    for exercise in lab.exercises:
        defines = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(exercise.name)}\b", re.M)
        latest = next((cell for cell in reversed(history) if defines.search(cell)), None)
        if latest is None or exercise.cell in broken:
            continue
        held = _cell_source(objects.get(exercise.name))
        if problem := _syntax_error(latest):
            broken[exercise.cell] = problem
        elif held is not None and held.rstrip() != latest.rstrip():
            broken[exercise.cell] = STALE
    return broken


def _history() -> list[str]:
    from IPython import get_ipython

    shell: Any = get_ipython()
    return list(shell.user_ns.get("In", [])) if shell is not None else []


def _score(lab: Lab, objects: Mapping[str, object]) -> SelftestReport:
    return _show(score_lab(lab, objects, broken=broken_cells(lab, objects, _history())))


def show_selftest(accumulator: object, run_call: object, truncate: object) -> SelftestReport:
    """Run the day-three lab's seven checks on the three exercises, display the result, return
    the report: the student's feedback; the grade is judged by the grader on cases of its own."""
    names = [exercise.name for exercise in MAIN.exercises]
    return _score(MAIN, dict(zip(names, (accumulator, run_call, truncate), strict=True)))


def show_lab_selftest(lab: str, **exercises: object) -> SelftestReport:
    """Run the checks of the lab called `lab` on the exercises given by name
    (`is_inside=is_inside, ...`); display the result and return the report (feedback, not the
    grade)."""
    return _score(find_lab(lab), exercises)
