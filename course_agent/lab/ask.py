"""The grader's side of a grade: draw the cases, ask the kernel, judge its answers here.

`questions(lab, seed)` gives one code cell per check, each calling lab/respond.py with the case
inputs and the notebook's names for the functions the check calls; `judge_run` reads each cell's
one answer output as data (size-capped, shape-checked by the part's judge) and judges it in this
process, so nothing the notebook defines, rebinds or raises can change a check. A question left
unanswered (nonsense, too much, too late, a dead kernel) fails its check with a row saying so.
Deliberately not handled: running the kernel (kernel.py, handin.py) or the report (grade.py).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course_agent.lab.labs import Exercise, Lab
from course_agent.lab.respond import ANSWER_LIMIT, MIME
from course_agent.selftest.judge import Part
from course_agent.selftest.lab import Check, SelftestReport, judge_part

__all__ = [
    "Question",
    "answer_in",
    "cell_problem",
    "judge_answers",
    "located",
    "placed",
    "questions",
]

# "Cell In[12], line 4" in a traceback, "(3419.py, line 4)" in a SyntaxError's text.
LINE = re.compile(r"(?:Cell In\[\d+\], line |, line )(\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Question:
    number: int  # the check's
    part: Part
    cases: list[dict[str, Any]]  # the grader's own, "ask" and expectations; only "ask" is sent
    source: str  # the code cell that asks the kernel


def _call(lab: Lab, number: int, part: Part, asks: list[Any]) -> str:
    # The grader names the notebook's functions (keyword = the check's key, value = the name the
    # lab gives the exercise): the kernel does not choose which of its names to call.
    names = "".join(f", {e.parameter}={e.name}" for e in lab.used_by(part))
    text = json.dumps(asks)
    return (
        f"# course-agent grade: check {number}'s question; the grader judges the answer itself.\n"
        "from course_agent.lab.respond import respond as _course_agent_respond\n\n"
        f"_course_agent_respond({lab.name!r}, {number}, {text!r}{names})"
    )


def questions(lab: Lab, seed: int) -> list[Question]:
    """One question per check of `lab`, its cases drawn from `seed` (the grader's)."""
    asked = []
    for number, part in enumerate(lab.parts, 1):
        cases = part.cases(random.Random(f"{seed}:{part.name}"))
        source = _call(lab, number, part, [case["ask"] for case in cases])
        asked.append(Question(number, part, cases, source))
    return asked


def answer_in(outputs: Sequence[Any], reply: Mapping[str, Any] | None) -> tuple[Any, str]:
    """(the answers, "") from a question cell's outputs, or (None, why there are none)."""
    found = [
        out["data"][MIME]
        for out in outputs
        if isinstance(out, Mapping) and isinstance(out.get("data"), Mapping) and MIME in out["data"]
    ]
    content = (reply or {}).get("content", reply or {})
    if not found:
        if isinstance(content, Mapping) and content.get("status") == "error":
            said = f"{content.get('ename', '')}: {content.get('evalue', '')}"
            return None, f"the kernel gave no answer: {' '.join(said.split())[:200]}"
        return None, "the kernel gave no answer"
    if len(found) > 1:
        return None, f"the kernel answered {len(found)} times, once is asked"
    data = found[0]
    size = len(json.dumps(data, default=repr))
    if size > ANSWER_LIMIT:
        return None, f"the kernel answered {size:,} characters, over the {ANSWER_LIMIT:,} read"
    if not isinstance(data, Mapping):
        return None, f"the kernel answered {str(data)[:80]!r}, not an answer"
    if "too_large" in data:
        too_large = data["too_large"]
        return None, f"the answer was {too_large} characters, over the {ANSWER_LIMIT:,} read"
    if "stopped" in data:
        return None, f"answering stopped: {' '.join(str(data['stopped']).split())[:200]}"
    if "answers" not in data:
        return None, f"the kernel answered {json.dumps(data, default=repr)[:80]}, not an answer"
    return data["answers"], ""


def cell_problem(reply: Mapping[str, Any] | None) -> str:
    """ "line 4: SyntaxError: invalid syntax" from an exercise cell's error reply; "" if it ran."""
    content = (reply or {}).get("content", reply or {})
    if not isinstance(content, Mapping) or content.get("status") != "error":
        return ""
    ename, evalue = str(content.get("ename", "")), str(content.get("evalue", ""))
    traceback = ANSI.sub("", "\n".join(map(str, content.get("traceback", []))))
    lines = LINE.findall(traceback) or LINE.findall(evalue)
    where = f"line {lines[-1]}: " if lines else ""
    said = re.sub(r" \([^()]*, line \d+\)$", "", evalue)  # the file name ipykernel made up
    return f"{where}{ename}: {' '.join(said.split())[:200]}".rstrip(": ")


def located(lab: Lab, exercises: Sequence[Exercise]) -> str:
    """'in "Exercise 1: merge ... (step 3)"', or 'in "Exercise 2: ..." and "Exercise 3: ..."':
    the headings a student sees above the cells (a cell's id is hidden in JupyterLab)."""
    headings = [f'"{heading}"' for heading in dict.fromkeys(lab.heading(e) for e in exercises)]
    listed = ", ".join(headings[:-1]) + " and " + headings[-1] if len(headings) > 1 else headings[0]
    return f"in {listed}"


def placed(lab: Lab, check: Check, part: Part, broken: Mapping[str, str] | None = None) -> Check:
    """A failed check's line naming the heading of its exercise; an exercise cell that raised
    fails the check with what it raised ("line 4: SyntaxError: ..."), whatever the kernel still
    holds from an earlier run of it."""
    exercises = lab.used_by(part)
    if not exercises:
        return check
    for exercise in exercises:
        if problem := (broken or {}).get(exercise.cell):
            where = f"{located(lab, [exercise])}, {problem}"
            return Check(check.number, check.name, False, f"{check.name}: {where}")
    if check.ok:
        return check
    said = check.line.removeprefix(f"{check.name}: ")
    return Check(
        check.number, check.name, False, f"{check.name}: {located(lab, exercises)}: {said}"
    )


def judge_answers(
    lab: Lab,
    asked: Sequence[Question],
    answered: Mapping[int, tuple[Any, str]],
    seed: int,
    broken: Mapping[str, str] | None = None,
    unasked: str = "",
) -> SelftestReport:
    """The report on `answered` ({check number: (answers, why none)}), judged here.

    `broken` maps an exercise cell's id to what went wrong running it ("line 4: SyntaxError:
    ..."): its checks fail saying so; `unasked` says why a check has no entry in `answered` (the
    run stopped before it).
    """
    checks = []
    for question in asked:
        number, part = question.number, question.part
        answers, why = answered.get(number, (None, unasked or "the kernel was not asked"))
        if answers is None:
            check = Check(number, part.name, False, f"{part.name}: {why}")
        else:
            check = judge_part(number, part, question.cases, answers)
        checks.append(placed(lab, check, part, broken))
    return SelftestReport(checks, seed)
