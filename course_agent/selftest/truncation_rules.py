"""The course's three truncation rules as a judge of one cut result, whatever the note's wording.

A cut passes when it keeps the head and tail in the course's proportion (60% of 8000 before, the
rest after) and the note between them states how many characters were cut, the total, and how to
read the middle (read_file's `offset`). Deliberately not handled: meta and ok (truncation.py).
"""

from __future__ import annotations

import re

from course_agent.selftest.judge import difference, shown
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS

__all__ = [
    "EDGE",
    "HEAD",
    "MAX_NOTE",
    "RULE_CEILING",
    "RULE_CUT",
    "RULE_FITS",
    "RULE_META",
    "RULE_SAY",
    "TAIL",
    "cut_problem",
]

HEAD = int(MAX_RESULT_CHARS * HEAD_RATIO)  # 4800: "more head: the most relevant content ..."
TAIL = MAX_RESULT_CHARS - HEAD  # 3200
# Characters between the head and the tail: room for any note in words (the course's own is 110
# for 20000 characters, the package's 54), not for a second result.
MAX_NOTE = 300
# The self-test's own results hold this character on each side of the cut, where no note starts
# or ends: a head or tail one character too long shows as the note starting or ending with it.
EDGE = "¦"

# The course's words (day three, "Result truncation"), quoted by every failure that breaks one.
RULE_CEILING = "the ceiling: a result over 8000 characters is cut"
RULE_FITS = "the ceiling: a result that fits in 8000 characters comes back unchanged"
RULE_CUT = "rule one: cut from the middle, never keep only the head"
RULE_SAY = "rule two: state how much was cut and how to fetch the middle next"
RULE_META = "rule three: put the fact of truncation in meta"

_NUMBER = re.compile(r"\d(?:[\d,_]*\d)?")  # 12000, 12,000 or 12_000


def _numbers(note: str) -> set[int]:
    return {int(re.sub(r"\D", "", found)) for found in _NUMBER.findall(note)}


def _kept_problem(text: str, got: str) -> str:
    """Rule one: the first HEAD and the last TAIL characters, as they are, in that order."""
    if not got.startswith(text[:HEAD]):
        return (
            f"{RULE_CUT}. Keep the first {HEAD} chars ({HEAD_RATIO:.0%} of {MAX_RESULT_CHARS}) as "
            f"they are; yours differ {difference(got[:HEAD], text[:HEAD])}"
        )
    if len(got) < HEAD + TAIL or not got.endswith(text[-TAIL:]):
        end = got[-TAIL:] if len(got) >= TAIL else got
        return (
            f"{RULE_CUT}. The last {TAIL} chars (the tail) come after the note as they are; "
            f"yours differ {difference(end, text[-TAIL:])}"
        )
    note = got[HEAD : len(got) - TAIL]
    if note.startswith(EDGE) or note.endswith(EDGE):
        side = "head" if note.startswith(EDGE) else "tail"
        return (
            f"{RULE_CUT}, in the course's proportion: your {side} runs past its "
            f"{HEAD if side == 'head' else TAIL} chars into the middle"
        )
    return ""


def cut_problem(text: str, got: str) -> str:
    """What is wrong with `got` as the cut of `text` (over the ceiling), in the course's words;
    "" when it keeps the head and tail and its note says the cut, the total and the way back."""
    if problem := _kept_problem(text, got):
        return problem
    note, removed, total = got[HEAD : len(got) - TAIL], len(text) - MAX_RESULT_CHARS, len(text)
    if not note.strip():
        return f"{RULE_SAY}: between the head and the tail there is no note"
    if len(note) > MAX_NOTE:
        return f"{RULE_SAY}, in a note: yours is {len(note)} chars; say it in at most {MAX_NOTE}"
    said = _numbers(note)
    if removed not in said:
        return f"{RULE_SAY}: the note {shown(note, 90)} does not say how many were cut ({removed})"
    if total not in said:
        return f"{RULE_SAY}: the note {shown(note, 90)} does not give the total, {total} chars"
    if "offset" not in note.lower():
        return (
            f"{RULE_SAY}: the note {shown(note, 90)} does not say how to read the middle "
            "(read_file's offset)"
        )
    return ""
