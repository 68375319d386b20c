"""Checks 3 to 5: a student's accumulator, executor and truncation, judged on generated cases.

A failure is one line: the case, what came back, what was expected, what to do. Deliberately not
handled: code that patches the package at run time (only a call into the package's own is seen).
"""

from __future__ import annotations

import inspect
import random
import sys
from collections.abc import Callable, Mapping
from types import CodeType
from typing import Any

from .accumulator import ToolCallAccumulator
from .protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from .registry import ToolRegistry, execute_call
from .selftest_cases import BadCall, MergeCase, Probes, bad_calls, merge_cases, results_to_truncate
from .truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

__all__ = ["CheckFailed", "check_feedback", "check_merging", "check_truncation", "expect", "shown"]

RunCall = Callable[[Mapping[str, ToolDef], ToolCall, ToolContext], ToolResult]
HEAD = int(MAX_RESULT_CHARS * HEAD_RATIO)
TAIL = MAX_RESULT_CHARS - HEAD


class CheckFailed(Exception):
    """A check's expectation did not hold (raised explicitly: `assert` vanishes under -O)."""


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def shown(value: object, limit: int = 48) -> str:
    """A value as a student can read it in one line: its repr, cut in the middle if long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}...{text[-9:]}"


def _codes(*functions: Callable[..., Any]) -> dict[CodeType, str]:
    return {f.__code__: f"{f.__module__}.{f.__qualname__}" for f in functions}


# The package's own answers to the three exercises: a student's code must not run them.
ACCUMULATOR_CODE = _codes(*(f for f in vars(ToolCallAccumulator).values() if inspect.isfunction(f)))
EXECUTOR_CODE = _codes(execute_call, ToolRegistry.execute)
TRUNCATE_CODE = _codes(truncate_result)


class Watch:
    """Runs a student's function and notes whether it runs the package's own answer instead,
    say through a wrapper or a subclass; `verdict` then fails the check.

    The package itself (the default, or an import the grader refuses) is not watched; nor is any
    call while another profiler (cProfile, say) holds the hook.
    """

    def __init__(self, student: object, package: object, codes: dict[CodeType, str]) -> None:
        self.student, self.codes = student, codes
        self.active = student is not package
        self.entered: list[str] = []

    def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        if not self.active or sys.getprofile() is not None:
            return function(*args)
        sys.setprofile(self._profile)
        try:
            return function(*args)
        finally:
            sys.setprofile(None)

    def _profile(self, frame: Any, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in self.codes:
            self.entered.append(self.codes[frame.f_code])

    def verdict(self) -> None:
        if self.entered:
            own = getattr(self.student, "__name__", "yours")
            raise CheckFailed(f"{own} runs the package's own {self.entered[0]}: write your own")


def _first_of(failures: list[str], total: int, what: str) -> None:
    if failures:
        more = f" (and {len(failures) - 1} more of {total} {what})" if len(failures) > 1 else ""
        raise CheckFailed(failures[0] + more)


def _raised(exc: Exception, where: str) -> str:
    if isinstance(exc, NotImplementedError):  # the lab's stub: its own message says what to do
        raise exc
    return f"{where} raised {type(exc).__name__}: {shown(str(exc), 60)[1:-1]}"


# -- check 3: fragment merging -------------------------------------------------------------------


def _drained(watch: Watch, accumulator: Callable[[], Any], case: MergeCase) -> list[Any] | str:
    where = "ToolCallAccumulator()"
    try:
        merger = watch(accumulator)
        where = "push"
        for delta in case.deltas:
            watch(merger.push, delta)
        where = "drain"
        return list(watch(merger.drain))
    except Exception as exc:
        said = _raised(exc, where)
        if isinstance(exc, ValueError) and "JSON" in type(exc).__name__ + str(exc):
            return f"{said}; parse nothing: a fragment is not JSON until its call is joined"
        if isinstance(exc, IndexError | KeyError):
            return f"{said}; the index is a label, not a position: key a dict by it"
        return said


def _merge_problem(watch: Watch, case: MergeCase, seen: set[str]) -> str:
    got = _drained(watch, watch.student, case)
    if isinstance(got, str):
        return got
    if not all(hasattr(c, "id") and hasattr(c, "name") and hasattr(c, "args") for c in got):
        return f"drain returned {shown(got)}: return a list of ToolCall(id, name, args)"
    mine = [(c.id, c.name, c.args) for c in got]
    want = [(c.id, c.name, c.args) for c in case.want]
    if mine == want:
        return ""
    ids, want_ids = [c[0] for c in mine], [c[0] for c in want]
    indexes = sorted({d.index for d in case.deltas})
    if len(mine) != len(want):
        stale = [i for i in ids if i in seen and i not in want_ids]
        if stale:
            return (
                f"a new ToolCallAccumulator() still held {shown(stale)} from an earlier stream: "
                "create its state in __init__, not on the class"
            )
        return (
            f"you drained {len(mine)} calls {shown(ids)}, expected {len(want)}, one per index "
            f"({', '.join(map(str, indexes))}): the index is a label, not a position"
        )
    if ids != want_ids and sorted(map(repr, ids)) == sorted(map(repr, want_ids)):
        return f"you drained {shown(ids)}, expected index order {shown(want_ids)}: sort by index"
    for index, (got_id, name, args), (want_id, want_name, want_args) in zip(
        indexes, mine, want, strict=True
    ):
        for what, value, right in [("id", got_id, want_id), ("name", name, want_name)]:
            if value != right:
                return _explain_head(case, index, what, value, right)
        if args != want_args:
            head = next(d.args_delta or "" for d in case.deltas if d.index == index)
            if head and args == want_args[len(head) :]:
                return (
                    f"call {want_id!r} lost the arguments sent with the head ({shown(head)}): "
                    "append the head's args_delta too"
                )
            if args and want_args.endswith(args):
                return (
                    f"call {want_id!r} has arguments {shown(args)}, only the end of "
                    f"{shown(want_args)}: append args_delta, don't overwrite"
                )
            return f"call {want_id!r} has arguments {shown(args)}, expected {shown(want_args)}"
    return ""  # unreachable: the lists differ, so some field does


def _explain_head(case: MergeCase, index: int, what: str, value: object, right: str) -> str:
    if isinstance(value, str) and right and value == right * (len(value) // len(right)):
        return (
            f"repeated {what} {right!r} in every fragment: you built {shown(value)}; "
            f"write the {what}, don't append it"
        )
    if case.heads == "blanked" and value in ("", None, f"call_{index}"):
        return (
            f"an empty {what} in a later fragment wiped {right!r}: "
            f"write the {what} only when it is non-empty"
        )
    if what == "id" and right == f"call_{index}":
        return f"the call at index {index} never got an id: expected {right!r}, got {shown(value)}"
    return f"the call at index {index} has {what} {shown(value)}, expected {right!r}"


def check_merging(accumulator: Callable[[], Any], rng: random.Random) -> str:
    cases = merge_cases(rng)
    failures, seen = [], set()
    watch = Watch(accumulator, ToolCallAccumulator, ACCUMULATOR_CODE)
    for case in cases:
        if problem := _merge_problem(watch, case, seen):
            failures.append(f"{case.label}: {problem}")
        seen |= {call.id for call in case.want}
    watch.verdict()
    _first_of(failures, len(cases), "streams")
    return (
        f"{len(cases)} streams merged in index order: the course's parallel call, indexes from "
        "0, 1 and 7 with gaps, interleaved, ids sent once, in every fragment or blanked"
    )


# -- check 4: bad-argument feedback --------------------------------------------------------------

HINTS = {
    "unknown tool": "name the tools there are",
    "arguments cut short": "say where it broke (json's error gives the char and column)",
    "a tool that raises ToolError": "pass the ToolError's message on as it is",
    "a tool that raises": "name the exception's class",
}


def _feedback_problem(watch: Watch, probes: Probes, case: BadCall, ctx: ToolContext) -> str:
    handed = len(probes.handed)
    try:
        result = watch(watch.student, probes.tools, case.call, ctx)
    except ToolError as exc:
        return (
            f"the tool's ToolError ({shown(str(exc))}) came out of execute_call: "
            "catch it and return ToolResult(str(exc), ok=False)"
        )
    except Exception as exc:
        said = _raised(exc, "execute_call")
        return f"{said}: return ToolResult(text, ok=False) instead of raising"
    if got := [kind for kind in probes.handed[handed:] if kind != "EchoArgs"]:
        return (
            f"echo's run was handed a {got[0]}, not its validated arguments: "
            "pass it tool.args.model_validate(parsed)"
        )
    if not isinstance(result, ToolResult):
        return f"execute_call returned {shown(result)}: return a ToolResult"
    if not case.must_say:  # a call that must run, and come back as the tool returned it
        want = execute_call(probes.tools, case.call, ctx)
        if not result.ok:
            return f"came back failed ({shown(result.content)}): a valid call must run"
        if result.content != want.content:
            return f"came back as {shown(result.content)}, expected {shown(want.content)}"
        return ""
    if result.ok:
        return f"came back ok=True ({shown(result.content)}): return ToolResult(text, ok=False)"
    text = result.content
    missing = [
        " or ".join(need) if isinstance(need, tuple) else need
        for need in case.must_say
        if not any(word in text for word in ((need,) if isinstance(need, str) else need))
    ]
    if missing:
        hint = next((h for kind, h in HINTS.items() if case.label.startswith(kind)), None)
        return (
            f"the text {shown(text, 60)} does not say {', '.join(missing)}; "
            f"{hint or 'name what was wrong, so the model can fix it'}"
        )
    return ""


def check_feedback(run_call: RunCall, ctx: ToolContext, rng: random.Random) -> str:
    probes = Probes(rng)
    cases = list(bad_calls(rng, probes))
    failures = []
    watch = Watch(run_call, execute_call, EXECUTOR_CODE)
    for case in cases:
        if problem := _feedback_problem(watch, probes, case, ctx):
            failures.append(f"{case.label}: {problem}")
    watch.verdict()
    _first_of(failures, len(cases), "calls")
    bad = sum(1 for case in cases if case.must_say)
    return (
        f"{bad} illegal calls on probe tools came back as failed results saying what was wrong; "
        f"{len(cases) - bad} valid calls ran"
    )


# -- check 5: truncation -------------------------------------------------------------------------


def _truncation_problem(watch: Watch, result: ToolResult) -> str:
    want = truncate_result(result)
    try:
        out = watch(watch.student, ToolResult(result.content, result.ok, dict(result.meta)))
    except Exception as exc:
        return _raised(exc, "truncate_result")
    if not isinstance(out, ToolResult):
        return f"truncate_result returned {shown(out)}: return a ToolResult"
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
    watch = Watch(truncate, truncate_result, TRUNCATE_CODE)
    for label, result in cases:
        if problem := _truncation_problem(watch, result):
            failures.append(f"{label}: {problem}")
    watch.verdict()
    _first_of(failures, len(cases), "results")
    (_, course), fits = cases[0], sum(len(r.content) <= MAX_RESULT_CHARS for _, r in cases)
    kept = truncate(course)
    return (
        f"a {len(course.content)}-char result truncates to {len(kept.content)} chars, stating "
        f"{len(course.content) - MAX_RESULT_CHARS} were cut; {len(cases) - 1} more results "
        f"({fits} that fit) came back as they must"
    )
