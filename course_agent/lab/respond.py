"""The kernel's side of a grade: run the student's functions on the grader's cases, answer data.

The grader sends one cell per check calling `respond(lab, number, asks, **functions)`; its value
shows as one output of mimetype MIME holding {"answers": [...]} (or {"stopped": why}, or
{"too_large": chars}), which the grader reads as data and judges in its own process. Nothing here
is trusted: a notebook may replace it, and then answers only what it can compute itself.
Deliberately not handled: judging (lab/ask.py does that, outside the kernel).
"""

from __future__ import annotations

import json
from typing import Any

from course_agent.lab.labs import find_lab

__all__ = ["ANSWER_LIMIT", "MIME", "Answer", "respond"]

MIME = "application/vnd.course-agent.answer+json"
# Characters of JSON one answer may hold: the largest honest one (check 5's cut results, check
# 7's transcript) is about 150,000; the grader refuses anything above this as well.
ANSWER_LIMIT = 2_000_000


class Answer:
    """A cell's value that Jupyter shows as one output of mimetype MIME (no IPython needed)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return {MIME: self.data, "text/plain": f"answer to check {self.data.get('check')}"}


def respond(lab: str, number: int, asks: str, **functions: Any) -> Answer:
    """Check `number` of `lab` answered: the student's `functions` run on `asks` (JSON text)."""
    part = find_lab(lab).parts[number - 1]
    try:
        text = json.dumps(part.answer(json.loads(asks), functions), default=repr)
    except BaseException as exc:  # whatever the student's code raises is the answer
        try:
            said = " ".join(str(exc).split())[:200]
        except Exception:  # a student's exception whose __str__ raises
            said = ""
        return Answer({"check": number, "stopped": f"{type(exc).__name__}: {said}".rstrip(": ")})
    if len(text) > ANSWER_LIMIT:
        return Answer({"check": number, "too_large": len(text)})
    return Answer({"check": number, "answers": json.loads(text)})
