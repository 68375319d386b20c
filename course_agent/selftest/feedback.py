"""Check 4: a student's executor turns every illegal call into a failed result that says why.

It runs on probe tools of the self-test's own (so an executor that ignores its `tools` shows it):
each kind of bad argument, a tool that refuses, one that breaks. Not handled: tools that hang.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from course_agent.registry import ToolRegistry, execute_call
from course_agent.selftest.judge import Watch, first_of, plain_result, raised, shown
from course_agent.tools import READ_FILE_TOOL

__all__ = ["BadCall", "Probes", "bad_calls", "check_feedback"]

RunCall = Callable[[Mapping[str, ToolDef], ToolCall, ToolContext], ToolResult]


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phrase: str = Field(min_length=1, description="the words to say back")
    repeats: int = Field(1, ge=1, le=3, description="how many times to say them; default 1")


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Probes:
    """Tools of the self-test's own, so an executor that ignores its `tools` argument shows it.

    `echo` notes what its run was handed (validated arguments, or a raw dict); `guard` refuses with
    a ToolError; `crash` raises another exception; `ping` takes no arguments.
    """

    def __init__(self, rng: random.Random) -> None:
        self.token = "".join(rng.choices(string.ascii_lowercase, k=6))
        self.crash = rng.choice([ValueError, KeyError, ZeroDivisionError])
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


def _feedback_problem(watch: Watch, probes: Probes, case: BadCall, ctx: ToolContext) -> str:
    handed = len(probes.handed)
    try:
        # A copy each time: an executor that changes its mapping cannot spoil the next case.
        result = watch(watch.student, dict(probes.tools), case.call, ctx)
    except ToolError as exc:
        return (
            f"the tool's ToolError ({shown(str(exc))}) came out of execute_call: "
            "catch it and return ToolResult(str(exc), ok=False)"
        )
    except Exception as exc:
        said = raised(exc, "execute_call")
        return f"{said}: return ToolResult(text, ok=False) instead of raising"
    if got := [kind for kind in probes.handed[handed:] if kind != "EchoArgs"]:
        return (
            f"echo's run was handed a {got[0]}, not its validated arguments: "
            "pass it tool.args.model_validate(parsed)"
        )
    runs = len(probes.handed) - handed
    if case.must_say and runs:
        return (
            "echo ran although its arguments fail its schema: validate them with "
            "tool.args.model_validate(parsed) first, and return the failure instead"
        )
    if case.call.name == "echo" and not case.must_say and runs > 1:
        return f"echo ran {runs} times for one call: run the tool once"
    result = plain_result(result, "execute_call")  # a str subclass could say yes to every `in`
    if isinstance(result, str):
        return result
    if not case.must_say:  # a call that must run, and come back as the tool returned it
        want = execute_call(probes.tools, case.call, ctx)
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
    watch = Watch(run_call, execute_call, execute_call, ToolRegistry.execute)
    for case in cases:
        if problem := _feedback_problem(watch, probes, case, ctx):
            failures.append(f"{case.label}: {problem}")
    watch.verdict()
    first_of(failures, len(cases), "calls")
    bad = sum(1 for case in cases if case.must_say)
    return (
        f"{bad} illegal calls came back as failed results naming what was wrong; "
        f"{len(cases) - bad} valid calls ran"
    )
