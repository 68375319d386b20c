"""The self-test in the notebook's own kernel: the lab's checks on the names the notebook binds.

The same three-part checks the grader runs (cases, answer, judge), all in one process on the
default seed: the student's feedback, not the grade, which the grader judges outside the kernel
(ask.py). Deliberately not handled: a notebook changing its own self-test; that changes only what
it shows itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from course_agent.lab.ask import placed
from course_agent.lab.labs import LABS, Lab, find_lab
from course_agent.selftest.lab import SEED, Check, SelftestReport, run_parts

__all__ = ["NOT_THE_GRADE", "Score", "score_exercises", "score_lab", "score_namespace"]

MAIN = LABS["day03-lab"]
NOT_THE_GRADE = (
    "(your feedback, not the grade: the grader judges cases of its own outside this kernel)"
)


@dataclass(frozen=True)
class Score:
    """The self-test's report on what the notebook wrote."""

    report: SelftestReport

    @property
    def passed(self) -> int:
        return sum(check.ok for check in self.report.checks)

    def text(self) -> str:
        """`k/N passed`, alone when all pass; otherwise followed by what failed and why, and
        NOT_THE_GRADE."""
        failed = [f"x {check.number}. {check.line}" for check in self.report.checks if not check.ok]
        summary = f"{self.passed}/{len(self.report.checks)} passed"
        return "\n".join([summary, *failed, NOT_THE_GRADE] if failed else [summary])

    def to_json(self) -> str:
        return json.dumps({"checks": [asdict(check) for check in self.report.checks]})


def score_lab(
    lab: Lab | str,
    objects: Mapping[str, object],
    seed: int | None = None,
    broken: Mapping[str, str] | None = None,
) -> Score:
    """`lab`'s checks on the exercises `objects` binds by name, in this process, their cases
    drawn from `seed` (None: the self-test's default, the one the lab's own cell uses).

    `broken` maps an exercise cell's id to what its last run raised: its checks fail saying so
    (the kernel may still hold what an earlier run of the cell defined)."""
    lab = find_lab(lab) if isinstance(lab, str) else lab
    functions = {e.parameter: objects[e.name] for e in lab.exercises if e.name in objects}
    report = run_parts(lab.parts, functions, SEED if seed is None else seed)
    checks = []
    for check, part in zip(report.checks, lab.parts, strict=True):
        missing = [e for e in lab.used_by(part) if e.name not in objects]
        if missing:  # its cell did not run: say that, not what calling nothing raised
            said = f"the notebook defines no {missing[0].name}"
            check = Check(check.number, check.name, False, f"{check.name}: {said}")
        checks.append(placed(lab, check, part, broken))
    return Score(SelftestReport(checks, report.seed))


def score_exercises(accumulator: object, run_call: object, truncate: object) -> Score:
    """The day-three self-test on the notebook's three implementations."""
    names = [exercise.name for exercise in MAIN.exercises]
    return score_lab(MAIN, dict(zip(names, (accumulator, run_call, truncate), strict=True)))


def score_namespace(
    namespace: Mapping[str, object], lab: str = MAIN.name, seed: int | None = None
) -> Score:
    """`score_lab` on the names a notebook's namespace binds."""
    return score_lab(lab, namespace, seed)
