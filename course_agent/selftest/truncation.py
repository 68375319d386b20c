"""Check 5: a student's truncation cuts results of several sizes exactly as the course says.

The course's 20000 chars (8054 out, 12000 cut), results that fit (back untouched), 8001 chars,
larger ones, a failed one. Deliberately not handled: results that are not text.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from course_agent.protocol import ToolResult
from course_agent.selftest.judge import Watch, first_of, plain_result, raised, shown
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

__all__ = ["check_truncation", "results_to_truncate"]

HEAD = int(MAX_RESULT_CHARS * HEAD_RATIO)
TAIL = MAX_RESULT_CHARS - HEAD


def _text(rng: random.Random, size: int) -> str:
    """`size` characters of numbered lines, some not ASCII, ending in a newline as tool output
    does: every cut point is recognisable, and a stripped end shows."""
    words = ["rate", "total", "café", "naïve", "Σ", "→", "ok"]
    lines, total, n = [], 0, 0
    while total < size:
        line = f"{n:05d} {rng.choice(words)} {rng.randint(0, 9999)}\n"
        lines.append(line)
        total, n = total + len(line), n + 1
    return "".join(lines)[: size - 1] + "\n" if size else ""


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


def _truncation_problem(watch: Watch, result: ToolResult) -> str:
    want = truncate_result(result)
    given = ToolResult(result.content, result.ok, dict(result.meta))  # its own meta to spoil
    try:
        out = watch(watch.student, given)
    except Exception as exc:
        return raised(exc, "truncate_result")
    if given != result:
        return (
            f"the result you were given changed (its meta became {shown(dict(given.meta), 70)}): "
            "leave it alone and build a new one, meta={**result.meta, ...}"
        )
    out = plain_result(out, "truncate_result")  # a subclass could answer == however it liked
    if isinstance(out, str):
        return out
    if out == want:
        return ""
    if want is result:  # it fits
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
    text, got = result.content, out.content
    if got == text:
        advice = (
            "a failed result is cut like any other"
            if not result.ok
            else ("compare len(result.content) itself with MAX_RESULT_CHARS")
        )
        return f"it is {len(text)} chars, over {MAX_RESULT_CHARS}, yet came back uncut: {advice}"
    note = want.content[HEAD:-TAIL]
    at = got.find(note)
    if at == -1:
        if got[:HEAD] != text[:HEAD]:
            return f"the head must be its first {HEAD} chars as they are; yours are not"
        return f"after the {HEAD}-char head comes {shown(got[HEAD:])}, expected the note {note!r}"
    if at + len(note) == len(got):
        return f"nothing follows the note: the last {TAIL} chars (the tail) must come after it"
    if at != HEAD:
        return f"the note starts at char {at}: the head before it must be exactly {HEAD} chars"
    if got[:HEAD] != text[:HEAD]:
        return f"the head must be its first {HEAD} chars as they are; yours are not"
    if got[HEAD + len(note) :] != text[-TAIL:]:
        tail = got[HEAD + len(note) :]
        return f"after the note come {len(tail)} chars: the tail is the last {TAIL} as they are"
    if out.ok != result.ok:
        return f"ok={out.ok}: a failed result (ok=False) stays failed; build it with replace()"
    return (
        f"meta {shown(dict(out.meta), 70)} should be {shown(dict(want.meta), 70)}: keep the meta "
        "already there and add truncated and originalChars"
    )


def check_truncation(truncate: Callable[[ToolResult], Any], rng: random.Random) -> str:
    cases = results_to_truncate(rng)
    failures = []
    watch = Watch(truncate, truncate_result, truncate_result)
    for label, result in cases:
        if problem := _truncation_problem(watch, result):
            failures.append(f"{label}: {problem}")
    watch.verdict()
    first_of(failures, len(cases), "results")
    (_, course), fits = cases[0], sum(len(r.content) <= MAX_RESULT_CHARS for _, r in cases)
    kept = truncate(course)
    return (
        f"a {len(course.content)}-char result truncates to {len(kept.content)} chars, stating "
        f"{len(course.content) - MAX_RESULT_CHARS} were cut; {len(cases) - 1} other sizes right, "
        f"{fits} that fit"
    )
