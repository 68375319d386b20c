"""Check 4: a student's executor turns every illegal call into a failed result that says why.

It runs on probe tools of the self-test's own (so an executor that ignores its `tools` shows it):
each kind of bad argument, a tool that refuses, one that breaks. Not handled: tools that hang.
"""

from __future__ import annotations

import json
import random
import string
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from course_agent.offline.repository import build_sandbox
from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from course_agent.registry import execute_call
from course_agent.selftest.judge import (
    Part,
    caught,
    first_of,
    plain_result,
    result_of,
    said,
    shown,
)
from course_agent.tools import READ_FILE_TOOL

__all__ = [
    "FEEDBACK",
    "NEVER_THROW",
    "SPECIFIC",
    "BadCall",
    "Probes",
    "bad_calls",
]


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phrase: str = Field(min_length=1, description="the words to say back")
    repeats: int = Field(1, ge=1, le=3, description="how many times to say them; default 1")


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


CRASHES = {kind.__name__: kind for kind in (ValueError, KeyError, ZeroDivisionError)}


class Probes:
    """Tools of the self-test's own, so an executor that ignores its `tools` argument shows it.

    `echo` notes what its run was handed (validated arguments, or a raw dict); `guard` refuses with
    a ToolError; `crash` raises another exception; `ping` takes no arguments.
    """

    def __init__(self, token: str, crash: str) -> None:
        self.token = token
        self.crash = CRASHES[crash]
        self.handed: list[str] = []  # the type name of what each echo run was handed
        self.tools = {
            tool.name: tool
            for tool in [
                ToolDef("echo", "Say the phrase back.", EchoArgs, self._echo),
                ToolDef("guard", "Refuses, always.", NoArgs, self._guard),
                ToolDef("crash", "Breaks, always.", NoArgs, self._crash),
                ToolDef("ping", "Answers pong.", NoArgs, lambda args, ctx: ToolResult("pong")),
                READ_FILE_TOOL,
            ]
        }

    def _echo(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.handed.append(type(args).__name__)
        if not isinstance(args, EchoArgs):
            raise TypeError(f"echo cannot use a {type(args).__name__}")
        return ToolResult(" ".join([args.phrase] * args.repeats), meta={"repeats": args.repeats})

    def _guard(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise ToolError(f"guard refuses: {self.token} is not allowed here")

    def _crash(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise self.crash(f"probe {self.token} broke")


@dataclass(frozen=True)
class BadCall:
    label: str  # "missing phrase": what a student reads in a failure
    call: ToolCall
    # What the failed result's text must say: each entry a word, or a tuple of which one will do.
    # Empty for a call that must run.
    must_say: tuple[str | tuple[str, ...], ...] = ()


def bad_calls(rng: random.Random, probes: Probes) -> Iterator[BadCall]:
    """An unknown tool, the calls that must run, then each kind of illegal call once."""
    invented = rng.choice(["edit_file", "write_file", "run_tests", "delete_file"])
    yield BadCall(f"unknown tool {invented!r}", ToolCall("c1", invented, "{}"), tuple(probes.tools))
    good = json.dumps({"phrase": rng.choice(["hello", "red test", "naïve"]), "repeats": 2})
    # The calls that must run come early: one that fails points straight at the lookup or the run.
    yield BadCall(f"a valid call echo({good})", ToolCall("c2", "echo", good))
    yield BadCall("empty arguments (they mean {})", ToolCall("c3", "ping", ""))
    path = json.dumps({"path": "src/calc.js"})
    yield BadCall(f"a valid call read_file({path})", ToolCall("c4", "read_file", path))
    cut = good[: rng.randint(12, len(good) - 2)]  # never valid: the closing brace is gone
    where: tuple[str, ...] = ()
    try:
        json.loads(cut)
    except json.JSONDecodeError as exc:  # where it broke, as json says it: char or column
        where = (str(exc.pos), str(exc.colno))
    yield BadCall(f"arguments cut short {cut!r}", ToolCall("c5", "echo", cut), (where,))
    other = rng.choice(['["hello"]', '"hello"', "42"])
    call = ToolCall("c6", "echo", other)
    kind = type(json.loads(other)).__name__  # saying what came instead is specific enough too
    yield BadCall(f"arguments not an object {other}", call, (("object", "dict", kind),))
    yield BadCall("missing phrase", ToolCall("c7", "echo", '{"repeats": 2}'), ("phrase",))
    many = rng.choice(['"many"', '"twice"', "[2]"])
    call = ToolCall("c8", "echo", f'{{"phrase": "hi", "repeats": {many}}}')
    yield BadCall(f"repeats of the wrong type {many}", call, ("repeats",))
    call = ToolCall("c9", "echo", f'{{"phrase": "hi", "repeats": {rng.randint(4, 99)}}}')
    yield BadCall("repeats out of range (1-3)", call, ("repeats",))
    field = rng.choice(["colour", "volume", "loud"])
    call = ToolCall("c10", "echo", f'{{"phrase": "hi", "{field}": 1}}')
    yield BadCall(f"unknown argument {field!r}", call, (field,))
    yield BadCall("a tool that raises ToolError", ToolCall("c11", "guard", "{}"), (probes.token,))
    name = probes.crash.__name__
    yield BadCall(f"a tool that raises {name}", ToolCall("c12", "crash", "{}"), (name,))


HINTS = {
    "unknown tool": "name the tools there are",
    "arguments cut short": "say where it broke (json's error gives the char and column)",
    "a tool that raises ToolError": "pass the ToolError's message on as it is",
    "a tool that raises": "name the exception's class",
}


def cases_feedback(rng: random.Random) -> list[dict[str, Any]]:
    """Each call as data; a call that must run carries what the package's execute_call answers."""
    token = "".join(rng.choices(string.ascii_lowercase, k=6))
    probes = Probes(token, rng.choice(sorted(CRASHES)))
    cases = []
    with tempfile.TemporaryDirectory(prefix="course-agent-feedback-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for case in bad_calls(rng, probes):
            call = case.call
            want = None if case.must_say else execute_call(probes.tools, call, ctx)
            cases.append(
                {
                    "ask": {
                        "token": token,
                        "crash": probes.crash.__name__,
                        "call": [call.id, call.name, call.args],
                    },
                    "label": case.label,
                    "must_say": [
                        list(need) if isinstance(need, tuple) else need for need in case.must_say
                    ],
                    "want": None if want is None else plain_result(want, "execute_call")["result"],
                }
            )
    return cases


def answer_feedback(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: each call through the student's executor, on probe tools of the check's."""
    run_call, answers = functions["run_call"], []
    with tempfile.TemporaryDirectory(prefix="course-agent-feedback-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for ask in asks:
            probes = Probes(ask["token"], ask["crash"])
            try:
                # A copy each time: an executor that changes its mapping cannot spoil the next.
                got = plain_result(
                    run_call(dict(probes.tools), ToolCall(*ask["call"]), ctx), "execute_call"
                )
            except Exception as exc:
                got = caught(exc)
            answers.append({**got, "handed": list(probes.handed)})
    return answers


# The course's words for the rules a failure breaks (day three, "Argument parsing failures").
NEVER_THROW = "always return a result, never throw"
SPECIFIC = "the fed-back text must be specific enough to act on"


def _raised_problem(got: Mapping[str, Any]) -> str:
    """execute_call raised: the course's rule is "always return a result, never throw"."""
    if "ToolError" in got["raised"]:
        return (
            f"{NEVER_THROW}: the tool's ToolError ({shown(got['text'])}) came out of "
            "execute_call; catch it and return ToolResult(str(exc), ok=False)"
        )
    return (
        f"{NEVER_THROW}: {said(got, 'execute_call')}; return ToolResult(text, ok=False) instead of "
        "raising"
    )


def _handed_problem(call: ToolCall, must_say: Any, handed: list[str]) -> str:
    """What echo's run was handed, and how often: validated arguments, once, or not at all."""
    if wrong := [kind for kind in handed if kind != "EchoArgs"]:
        return (
            f"echo's run was handed a {wrong[0]}, not its validated arguments: "
            "pass it tool.args.model_validate(parsed)"
        )
    if must_say and handed:
        return (
            "echo ran although its arguments fail its schema: validate them with "
            "tool.args.model_validate(parsed) first, and return the failure instead"
        )
    if call.name == "echo" and not must_say and len(handed) > 1:
        return f"echo ran {len(handed)} times for one call: run the tool once"
    return ""


def _said_problem(case: Mapping[str, Any], text: str) -> str:
    """A failed result's text must name what was wrong: each of the case's words, or a synonym."""
    missing = [
        " or ".join(need) if isinstance(need, list) else need
        for need in case["must_say"]
        if not any(word in text for word in ((need,) if isinstance(need, str) else need))
    ]
    if not missing:
        return ""
    hint = next((h for kind, h in HINTS.items() if case["label"].startswith(kind)), None)
    return (
        f"{SPECIFIC}: {shown(text, 60)} does not say {', '.join(missing)}; "
        f"{hint or 'name what was wrong, so the model can fix it'}"
    )


def _feedback_problem(case: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    if "raised" in got:
        return _raised_problem(got)
    must_say = case["must_say"]
    handed = [str(kind) for kind in got["handed"]]
    if problem := _handed_problem(ToolCall(*case["ask"]["call"]), must_say, handed):
        return problem
    if "bad" in got:
        return str(got["bad"])
    result = result_of(got["result"])
    if not must_say:  # a call that must run, and come back as the tool returned it
        want = result_of(case["want"])
        if not result.ok:
            return f"came back failed ({shown(result.content)}): a valid call must run"
        if result != want:
            return (
                f"came back as {shown(result, 70)}, expected {shown(want, 70)}: "
                "return what tool.run returned"
            )
        return ""
    if result.ok:
        return f"came back ok=True ({shown(result.content)}): return ToolResult(text, ok=False)"
    return _said_problem(case, result.content)


def judge_feedback(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: every illegal call failed, naming what was wrong; every valid one ran."""
    failures = []
    for case, got in zip(cases, answers, strict=True):
        if problem := _feedback_problem(case, got):
            failures.append(f"{case['label']}: {problem}")
    first_of(failures, len(cases), "calls")
    bad = sum(1 for case in cases if case["must_say"])
    return (
        f"{bad} illegal calls came back as failed results naming what was wrong; "
        f"{len(cases) - bad} valid calls ran"
    )


FEEDBACK = Part(
    "bad-argument feedback", ("run_call",), cases_feedback, answer_feedback, judge_feedback
)
