"""Check 5: a student's truncation cuts results of several sizes by the course's three rules.

The course's 20000 chars (12000 cut: 8054 out with the package's note), results that fit (back
untouched), 8001 chars, larger ones, a failed one; any note that says what the course asks passes
(truncation_rules.py). Deliberately not handled: results that are not text.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from course_agent.protocol import ToolResult
from course_agent.selftest.judge import (
    Part,
    caught,
    first_of,
    plain,
    plain_result,
    result_of,
    said,
    shown,
)
from course_agent.selftest.truncation_rules import (
    EDGE,
    HEAD,
    RULE_CEILING,
    RULE_FITS,
    RULE_META,
    TAIL,
    cut_problem,
)
from course_agent.truncate import MAX_RESULT_CHARS

__all__ = ["TRUNCATION", "meta_problem", "results_to_truncate"]


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


def _edged(text: str) -> str:
    """`text` with EDGE on each side of where a cut falls, when it is cut: a head or a tail one
    character too long then shows (truncation_rules.py)."""
    if len(text) <= MAX_RESULT_CHARS:
        return text
    cut = (HEAD, len(text) - TAIL - 1)
    return "".join(EDGE if n in cut else char for n, char in enumerate(text))


def results_to_truncate(rng: random.Random) -> list[tuple[str, ToolResult]]:
    """(label, result): the course's 20000 chars first, then ones that fit, then other sizes."""
    course = "".join(f"line {n:05d}\n" for n in range(1819))[: 20000 - 13] + "END OF RESULT"
    course = _edged(course)
    sizes = [8000, 11, 0, 8001, rng.randint(8002, 12000), rng.randint(30000, 90000)]
    cases = [(_a(len(course)), ToolResult(course, meta={"tool": "selftest"}))]
    for n, size in enumerate(sizes, 1):
        meta = {"tool": rng.choice(["grep", "glob", "read_file"]), "case": n}
        cases.append((_a(size), ToolResult(_edged(_text(rng, size)), meta=meta)))
    failed = ToolResult(
        _edged(_text(rng, rng.randint(9000, 20000))), ok=False, meta={"tool": "grep"}
    )
    cases.append((_a(len(failed.content)).replace("char", "char failed", 1), failed))
    return cases


def cases_truncation(rng: random.Random) -> list[dict[str, Any]]:
    """Each result as data: the judge needs no answer of the package's, only the rules."""
    return [
        {"ask": {"content": r.content, "ok": r.ok, "meta": dict(r.meta)}, "label": label}
        for label, r in results_to_truncate(rng)
    ]


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


def _fits_problem(result: ToolResult, out: ToolResult) -> str:
    changed = [
        f"{what} became {shown(after)}"
        for what, before, after in [
            ("its content", result.content, out.content),
            ("ok", result.ok, out.ok),
            ("meta", dict(result.meta), dict(out.meta)),
        ]
        if before != after
    ]
    return f"{RULE_FITS}, yet {'; '.join(changed)}"


def meta_problem(result: ToolResult, out: ToolResult) -> str:
    """Rule three, and the rest of the result kept: ok as it was, the meta already there."""
    if out.ok != result.ok:
        return (
            f"ok={out.ok}: truncation changes the content and the meta only, so a failed result "
            "(ok=False) stays failed; build it with replace()"
        )
    want = {**result.meta, "truncated": True, "originalChars": len(result.content)}
    if dict(out.meta) != want:
        return (
            f"{RULE_META}: meta {shown(dict(out.meta), 60)} should be {shown(want, 60)}; keep the "
            "meta already there and add truncated and originalChars"
        )
    return ""


def _truncation_problem(case: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    result = result_of(case["ask"])
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
    if len(result.content) <= MAX_RESULT_CHARS:
        return "" if out == result else _fits_problem(result, out)
    text = result.content
    if out.content == text:
        advice = (
            "a failed result is cut like any other"
            if not result.ok
            else ("compare len(result.content) itself with MAX_RESULT_CHARS")
        )
        return (
            f"{RULE_CEILING}; it is {len(text)} chars, over {MAX_RESULT_CHARS}, yet came back "
            f"uncut: {advice}"
        )
    return cut_problem(text, out.content) or meta_problem(result, out)


def judge_truncation(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: each result against the course's rules, the first broken one named."""
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
