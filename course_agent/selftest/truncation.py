"""Check 5: a student's truncation cuts results of several sizes exactly as the course says.

The course's 20000 chars (8054 out, 12000 cut), results that fit (back untouched), 8001 chars,
larger ones, a failed one. Deliberately not handled: results that are not text.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from course_agent.protocol import ToolResult
from course_agent.selftest.judge import (
    Part,
    caught,
    difference,
    first_of,
    plain,
    plain_result,
    result_of,
    said,
    shown,
)
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

__all__ = ["TRUNCATION", "results_to_truncate"]

HEAD = int(MAX_RESULT_CHARS * HEAD_RATIO)
TAIL = MAX_RESULT_CHARS - HEAD


WORDS = ["rate", "total", "café", "naïve", "Σ", "→", "ok"]


def _text(rng: random.Random, size: int) -> str:
    """`size` characters of numbered lines, some not ASCII, ending in a newline as tool output
    does: every cut point is recognisable, and a stripped end shows."""
    if not size:
        return ""
    # Words and numbers drawn all at once (a draw per line made this the self-test's slowest
    # part); a line is at least 11 chars ("00000 ok 0\n"), so size // 11 + 1 lines reach size.
    count = size // 11 + 1
    words, numbers = rng.choices(WORDS, k=count), rng.choices(range(10_000), k=count)
    lines = enumerate(zip(words, numbers, strict=True))
    text = "".join(f"{n:05d} {word} {number}\n" for n, (word, number) in lines)
    return text[: size - 1] + "\n"


def _a(size: int) -> str:
    """The case's label, its article as the number is spoken: "an 8001-char result"."""
    digits = str(size)
    spoken_with_vowel = digits[0] == "8" or (len(digits) % 3 == 2 and digits[:2] in ("11", "18"))
    return f"{'an' if spoken_with_vowel else 'a'} {digits}-char result"


def results_to_truncate(rng: random.Random) -> list[tuple[str, ToolResult]]:
    """(label, result): the course's 20000 chars first, then ones that fit, then other sizes."""
    course = "".join(f"line {n:05d}\n" for n in range(1819))[: 20000 - 13] + "END OF RESULT"
    sizes = [8000, 11, 0, 8001, rng.randint(8002, 12000), rng.randint(30000, 90000)]
    cases = [(_a(len(course)), ToolResult(course, meta={"tool": "selftest"}))]
    for n, size in enumerate(sizes, 1):
        meta = {"tool": rng.choice(["grep", "glob", "read_file"]), "case": n}
        cases.append((_a(size), ToolResult(_text(rng, size), meta=meta)))
    failed = ToolResult(_text(rng, rng.randint(9000, 20000)), ok=False, meta={"tool": "grep"})
    cases.append((_a(len(failed.content)).replace("char", "char failed", 1), failed))
    return cases


def cases_truncation(rng: random.Random) -> list[dict[str, Any]]:
    """Each result as data, and what the package's truncate_result makes of it."""
    cases = []
    for label, result in results_to_truncate(rng):
        given = {"content": result.content, "ok": result.ok, "meta": dict(result.meta)}
        want = plain_result(truncate_result(result), "truncate_result")["result"]
        cases.append({"ask": given, "label": label, "want": want})
    return cases


def answer_truncation(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: each result through the student's truncation, and whether it changed it."""
    truncate, answers = functions["truncate"], []
    for ask in asks:
        given = ToolResult(ask["content"], ask["ok"], dict(ask["meta"]))  # its own meta to spoil
        try:
            got = plain_result(truncate(given), "truncate_result")
        except Exception as exc:
            got = caught(exc)
        changed = plain(dict(given.meta)) if dict(given.meta) != ask["meta"] else None
        answers.append({**got, "changed_meta": changed})
    return answers


def _truncation_problem(case: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    result, want = result_of(case["ask"]), result_of(case["want"])
    if "raised" in got:
        return said(got, "truncate_result")
    if got["changed_meta"] is not None:
        return (
            f"the result you were given changed (its meta became "
            f"{shown(got['changed_meta'], 70)}): leave it alone and build a new one, "
            "meta={**result.meta, ...}"
        )
    if "bad" in got:
        return str(got["bad"])
    out = result_of(got["result"])
    if out == want:
        return ""
    if len(result.content) <= MAX_RESULT_CHARS:  # it fits
        changed = [
            f"{what} became {shown(after)}"
            for what, before, after in [
                ("its content", result.content, out.content),
                ("ok", result.ok, out.ok),
                ("meta", dict(result.meta), dict(out.meta)),
            ]
            if before != after
        ]
        return (
            f"it fits in {MAX_RESULT_CHARS}, so it must come back unchanged: {'; '.join(changed)}"
        )
    text, got_text = result.content, out.content
    if got_text == text:
        advice = (
            "a failed result is cut like any other"
            if not result.ok
            else ("compare len(result.content) itself with MAX_RESULT_CHARS")
        )
        return f"it is {len(text)} chars, over {MAX_RESULT_CHARS}, yet came back uncut: {advice}"
    note = want.content[HEAD:-TAIL]
    at, at_diff = got_text.find(note), difference(got_text[:HEAD], text[:HEAD])
    if at == -1:
        if got_text[:HEAD] != text[:HEAD]:
            return f"the head must be its first {HEAD} chars as they are; yours differ {at_diff}"
        return (
            f"after the {HEAD}-char head comes {shown(got_text[HEAD:])}, expected the note {note!r}"
        )
    if at + len(note) == len(got_text):
        return f"nothing follows the note: the last {TAIL} chars (the tail) must come after it"
    if at != HEAD:
        return f"the note starts at char {at}: the head before it must be exactly {HEAD} chars"
    if got_text[:HEAD] != text[:HEAD]:
        return f"the head must be its first {HEAD} chars as they are; yours differ {at_diff}"
    if got_text[HEAD + len(note) :] != text[-TAIL:]:
        tail = got_text[HEAD + len(note) :]
        return (
            f"after the note come {len(tail)} chars: the tail is the last {TAIL} as they are; "
            f"yours differ {difference(tail, text[-TAIL:])}"
        )
    if out.ok != result.ok:
        return f"ok={out.ok}: a failed result (ok=False) stays failed; build it with replace()"
    return (
        f"meta {shown(dict(out.meta), 70)} should be {shown(dict(want.meta), 70)}: keep the meta "
        "already there and add truncated and originalChars"
    )


def judge_truncation(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: each cut result against the package's, the first difference named."""
    failures = []
    for case, got in zip(cases, answers, strict=True):
        if problem := _truncation_problem(case, got):
            failures.append(f"{case['label']}: {problem}")
    first_of(failures, len(cases), "results")
    course, kept = cases[0]["ask"]["content"], answers[0]["result"]["content"]
    fits = sum(len(case["ask"]["content"]) <= MAX_RESULT_CHARS for case in cases)
    return (
        f"a {len(course)}-char result truncates to {len(kept)} chars, stating "
        f"{len(course) - MAX_RESULT_CHARS} were cut; {len(cases) - 1} other sizes right, "
        f"{fits} that fit"
    )


TRUNCATION = Part(
    "truncation", ("truncate",), cases_truncation, answer_truncation, judge_truncation
)
