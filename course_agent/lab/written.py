"""The answers a person reads: a lab's written answers, taken from a submission's own cells.

The grader lists each one for the instructor (the CSV's `written` column, a section of the class
report, the student's feedback file) and scores none of them: no keyword earns a point, and a
false sentence with the right words is as false as without them.
Deliberately not handled: grading them (nbgrader's manual grading, or the LMS, gives the points).
"""

from __future__ import annotations

from typing import Any

from course_agent.lab.labs import Lab

__all__ = ["LONGEST_ANSWER", "NO_ANSWER", "STUB", "written_answers"]

LONGEST_ANSWER = 2000  # characters shown of one answer: one sentence is asked for
# What a released answer cell holds (release.TEXT_STUB, nbgrader's; not imported: release imports
# the grader, which imports this).
STUB = "YOUR ANSWER HERE"
NO_ANSWER = ""  # the cell is missing, empty, or still nbgrader's stub


def written_answers(nb: Any, lab: Lab) -> tuple[tuple[str, str], ...]:
    """(what it answers, the text) for each of `lab`'s written answers in `nb`, in the lab's order;
    a long answer is cut at LONGEST_ANSWER characters and says how much more there was."""
    cells = {cell.get("id"): cell for cell in nb.cells}
    found = []
    for answer in lab.written:
        cell = cells.get(answer.cell)
        text = str(cell.get("source", "")).strip() if cell is not None else NO_ANSWER
        if text == STUB:  # the release left it so
            text = NO_ANSWER
        if len(text) > LONGEST_ANSWER:
            more = len(text) - LONGEST_ANSWER
            text = f"{text[:LONGEST_ANSWER]}… ({more:,} more characters not shown)"
        found.append((answer.title, text))
    return tuple(found)
