"""A check in three parts: the grader draws cases, the student's kernel answers them with plain
data, the grader judges that data with the package's own expectations.

`Part.cases(rng)` gives dicts whose "ask" is all the kernel sees; `Part.answer(asks, functions)`
runs the student's functions on them and returns plain JSON; `Part.judge(cases, answers)` returns
the passing line or raises CheckFailed with one line. Deliberately not handled: answers that take
longer than the grader waits (the grader's cell timeout bounds them, not this module).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course_agent.protocol import ToolResult

__all__ = [
    "CheckFailed",
    "Part",
    "caught",
    "difference",
    "expect",
    "first_of",
    "plain",
    "plain_result",
    "result_of",
    "run_part",
    "said",
    "shown",
]

Functions = Mapping[str, Callable[..., Any]]


class CheckFailed(Exception):
    """A check's expectation did not hold (raised explicitly: `assert` vanishes under -O)."""


@dataclass(frozen=True)
class Part:
    """One check: `uses` names the student's functions its answer calls (the lab's parameters)."""

    name: str
    uses: tuple[str, ...]
    cases: Callable[[Any], list[dict[str, Any]]]  # rng -> [{"ask": JSON, ...the grader's own}]
    answer: Callable[[list[Any], Functions], list[Any]]  # runs in the student's kernel
    judge: Callable[[list[dict[str, Any]], list[Any]], str]  # runs in the grader's process


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def shown(value: object, limit: int = 48) -> str:
    """A value as a student can read it in one line: its repr, cut in the middle if long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}...{text[-9:]}"


def difference(got: str, want: str, window: int = 24) -> str:
    """Where two texts first differ: "at char 4801: ...'abc' where 'abd' was expected"."""
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
    if at is None:
        at = min(len(got), len(want))
    start = max(0, at - window // 2)
    mine, theirs = got[start : at + window // 2], want[start : at + window // 2]
    return f"at char {at}: {mine!r} where {theirs!r} was expected"


def plain(value: object) -> Any:
    """`value` copied into plain JSON values: str, int, float, bool, None, list, dict.

    A student's subclass of str or int could answer `==` and `in` however it liked; its copy
    cannot. Anything JSON cannot hold becomes its repr.
    """
    return json.loads(json.dumps(value, default=repr))


def caught(exc: BaseException) -> dict[str, Any]:
    """An exception from a student's code as plain data: its class names (MRO) and its text."""
    try:
        text = " ".join(str(exc).split())[:300]
    except Exception:  # a student's exception whose __str__ raises
        text = ""
    return {"raised": [kind.__name__ for kind in type(exc).__mro__], "text": text}


def said(outcome: Mapping[str, Any], where: str) -> str:
    """What to say about a `caught` exception, in one line, judged in the grader.

    NotImplementedError, the lab's stub, fails the check with its own message: it says what to do.
    """
    kinds, text = list(outcome["raised"]), str(outcome.get("text", ""))
    if "NotImplementedError" in kinds:
        raise CheckFailed(text or "NotImplementedError")
    return f"{where} raised {kinds[0]}: {shown(text, 60)[1:-1]}"


def plain_result(result: object, who: str) -> dict[str, Any]:
    """A student's ToolResult as {"result": {content, ok, meta}}, or {"bad": why not}."""
    if not isinstance(result, ToolResult):
        return {"bad": f"{who} returned {shown(result)}: return a ToolResult"}
    content, ok, meta = result.content, result.ok, result.meta
    if not isinstance(content, str) or type(ok) is not bool or not isinstance(meta, Mapping):
        return {
            "bad": f"{who} returned a ToolResult with content {shown(content, 30)}, ok "
            f"{shown(ok, 20)}, meta {shown(meta, 30)}: content is text, ok True or False, "
            "meta a dict"
        }
    return {"result": {"content": plain(content), "ok": ok, "meta": plain(dict(meta))}}


def result_of(data: Mapping[str, Any]) -> ToolResult:
    """The ToolResult an answer's {"content", "ok", "meta"} describes; CheckFailed if it is not."""
    content, ok, meta = data["content"], data["ok"], data["meta"]
    if not isinstance(content, str) or type(ok) is not bool or not isinstance(meta, dict):
        raise CheckFailed(f"the kernel answered a result that is not one: {shown(data)}")
    return ToolResult(content, ok, meta)


def first_of(failures: Sequence[str], total: int, what: str) -> None:
    """Fail with the first failure, and how many more there were: one line, the first to fix."""
    if failures:
        more = f" (and {len(failures) - 1} more of {total} {what})" if len(failures) > 1 else ""
        raise CheckFailed(failures[0] + more)


def run_part(part: Part, functions: Functions, rng: Any) -> str:
    """`part` in one process: its cases from `rng`, the answers through JSON as they travel, the
    judgement; the passing line, or CheckFailed."""
    cases = part.cases(rng)
    answers = plain(part.answer([case["ask"] for case in cases], functions))
    return part.judge(cases, answers)
