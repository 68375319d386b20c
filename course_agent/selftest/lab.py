"""The lab's seven checks, each one line with its figure; the three exercises are pluggable.

Pass a student's accumulator, call executor and truncation to grade them; by default the package's
own. Checks 3-5 run seeded generated cases, one module per exercise (merging,
feedback, truncation). Deliberately not handled: partial credit inside a check.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from course_agent.accumulator import ToolCallAccumulator
from course_agent.loop import Accumulator, check_transcript, run_agent
from course_agent.offline.repository import BIG_FILE, QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import (
    AgentStopped,
    ToolCall,
    ToolContext,
    ToolDef,
    ToolFinished,
    ToolResult,
)
from course_agent.registry import ToolRegistry, default_registry, execute_call
from course_agent.selftest.feedback import check_feedback
from course_agent.selftest.judge import expect, shown
from course_agent.selftest.merging import check_merging
from course_agent.selftest.truncation import check_truncation
from course_agent.truncate import truncate_result

__all__ = ["Check", "SelftestReport", "run_selftest"]

RunCall = Callable[[Mapping[str, ToolDef], ToolCall, ToolContext], ToolResult]
SEED = 2026  # draws the generated cases: the same seed, the same report on every run and machine
NAMES = [
    "registry",
    "path boundary",
    "fragment merging",
    "bad-argument feedback",
    "truncation",
    "big file",
    "offline loop",
]


@dataclass(frozen=True)
class Check:
    """One of the seven checks: passed with its figure, or failed with one line saying why."""

    number: int
    name: str  # one of NAMES
    ok: bool
    line: str  # passed: what was checked and the figure measured; failed: "name: what went wrong"


@dataclass(frozen=True)
class SelftestReport:
    """The seven checks in order; `to_dict`/`from_dict` carry it between processes as JSON."""

    checks: list[Check]
    seed: int = SEED  # the generated cases' seed: the same seed gives the same report

    @property
    def passed(self) -> int:
        return sum(check.ok for check in self.checks)

    def summary(self) -> str:
        return f"{self.passed}/{len(self.checks)} passed"

    def failures(self) -> list[str]:
        """One line per failed check, as __str__ shows it: what to show under `k/7 passed`."""
        return [f"x {c.number}. {c.line}" for c in self.checks if not c.ok]

    def __str__(self) -> str:
        lines = [f"{'v' if c.ok else 'x'} {c.number}. {c.line}" for c in self.checks]
        return "\n".join([*lines, self.summary()])

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: {"seed": n, "checks": [{"number", "name", "ok", "line"}, ...]}."""
        return {"seed": self.seed, "checks": [asdict(check) for check in self.checks]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelftestReport:
        """The report `to_dict` gave; ValueError, naming what is wrong, for any other shape."""
        checks = data.get("checks") if isinstance(data, Mapping) else None
        if not isinstance(checks, list):
            raise ValueError(f"not a self-test report: no list of checks in {shown(data)}")
        types = {"number": int, "name": str, "ok": bool, "line": str}
        for item in checks:
            if not (isinstance(item, Mapping) and set(item) == set(types)) or not all(
                type(item[key]) is kind
                for key, kind in types.items()  # True is no number
            ):
                wanted = ", ".join(f"{key} ({kind.__name__})" for key, kind in types.items())
                raise ValueError(f"not a self-test report: a check has {wanted}, not {shown(item)}")
        seed = data.get("seed", SEED)
        if type(seed) is not int:
            raise ValueError(f"not a self-test report: seed {shown(seed)} is not a number")
        return cls([Check(**item) for item in checks], seed)


def _check_registry(ctx: ToolContext) -> str:
    tools = default_registry().list()
    names = sorted(t["function"]["name"] for t in tools)
    expect(names == ["glob", "grep", "read_file"], f"registry lists {names}")
    params = 0
    for tool in tools:
        schema = tool["function"]["parameters"]
        expect(schema.get("additionalProperties") is False, f"{names} schema is not strict")
        expect(schema.get("required"), "every tool needs a required parameter")
        for name, prop in schema["properties"].items():
            expect(prop.get("description"), f"parameter {name} has no description")
            params += 1
    return f"registry lists glob, grep, read_file; {params} parameters, all described, strict"


def _check_escapes(ctx: ToolContext) -> str:
    registry = default_registry()
    outside = ctx.root.parent / "outside.txt"
    outside.write_text("secret\n")
    (ctx.root / "link-out.txt").symlink_to(outside)
    attempts = ["../outside.txt", str(outside), "link-out.txt"]
    refused = [
        a
        for a in attempts
        if not registry.execute(ToolCall("c", "read_file", json.dumps({"path": a})), ctx).ok
    ]
    inside = registry.execute(ToolCall("c", "read_file", '{"path": "src/calc.js"}'), ctx)
    expect(inside.ok, f"reading src/calc.js inside failed: {inside.content}")
    expect(refused == attempts, f"not refused: {sorted(set(attempts) - set(refused))}")
    return (
        f"climbing out blocked: {len(refused)}/3 (relative, absolute, symlink); inside reads fine"
    )


def _check_big_file(run_call: RunCall, truncate: Callable, ctx: ToolContext) -> str:
    size = len((ctx.root / BIG_FILE).read_text())
    call = ToolCall("c", "read_file", json.dumps({"path": BIG_FILE}))
    registry = ToolRegistry(default_registry().tools.values(), run_call=run_call, truncate=truncate)
    result, want = registry.execute(call, ctx), default_registry().execute(call, ctx)
    got = len(result.content)
    expect(result.ok, f"read_file on {BIG_FILE} came back failed: {shown(result.content, 70)}")
    expect(got == len(want.content), f"read_file fed back {got} chars, not {len(want.content)}")
    expect(
        result.content == want.content,
        f"read_file fed back {got} chars, but not the file's head, the note and its tail",
    )
    return f"reading the generated {size}-char {BIG_FILE} feeds back {got} chars"


def _check_loop(accumulator: Callable, run_call: RunCall, truncate: Callable, ctx) -> str:
    registry = ToolRegistry(default_registry().tools.values(), run_call=run_call, truncate=truncate)
    messages: list[dict] = []
    events = list(
        run_agent(
            QUESTION, ScriptedModel(), registry, ctx, messages=messages, accumulator=accumulator
        )
    )
    finished = [e for e in events if isinstance(e, ToolFinished)]
    order = [e.call.name for e in finished]
    stopped = events[-1]
    expect(
        isinstance(stopped, AgentStopped) and stopped.reason != "error",
        f"the loop stopped: {shown(getattr(stopped, 'message', stopped), 150)[1:-1]}",
    )
    expect(
        order == ["glob", "grep", "read_file"],
        f"calls ran in order {shown(order, 80)}, expected glob, grep, read_file",
    )
    failed = [f"{e.call.name}: {shown(e.result.content)}" for e in finished if not e.result.ok]
    expect(not failed, f"calls failed instead of answering: {shown(failed, 150)}")
    expect(stopped.reason == "done", f"ended: {stopped}")
    expect(messages[-1]["role"] == "assistant" and messages[-1]["content"], "no conclusion")
    expect((problem := check_transcript(messages)) is None, problem)
    sizes = ", ".join(str(len(e.result.content)) for e in finished)
    return f"offline question ran glob -> grep -> read_file ({sizes} chars), then concluded"


def _checks(accumulator, run_call, truncate, ctx) -> Iterator[Callable[[random.Random], str]]:
    """The seven checks in NAMES order; each gets its own seeded generator of cases."""
    yield lambda rng: _check_registry(ctx)
    yield lambda rng: _check_escapes(ctx)
    yield lambda rng: check_merging(accumulator, rng)
    yield lambda rng: check_feedback(run_call, ctx, rng)
    yield lambda rng: check_truncation(truncate, rng)
    yield lambda rng: _check_big_file(run_call, truncate, ctx)
    yield lambda rng: _check_loop(accumulator, run_call, truncate, ctx)


def run_selftest(
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
    run_call: RunCall = execute_call,
    truncate: Callable[[ToolResult], ToolResult] = truncate_result,
    *,
    seed: int = SEED,
) -> SelftestReport:
    """Run the seven checks on a fresh sandbox; a check that raises anything simply fails.

    `seed` draws the generated cases: the same seed, the same cases and the same report.
    """
    checks = []
    with tempfile.TemporaryDirectory(prefix="course-agent-selftest-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for name, check in zip(NAMES, _checks(accumulator, run_call, truncate, ctx), strict=True):
            number = len(checks) + 1
            try:
                checks.append(Check(number, name, True, check(random.Random(f"{seed}:{name}"))))
            except Exception as exc:  # a student's stub raising NotImplementedError lands here
                reason = " ".join((str(exc) or type(exc).__name__).splitlines())
                checks.append(Check(number, name, False, f"{name}: {reason}"))
    return SelftestReport(checks, seed)
