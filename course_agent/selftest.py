"""The lab's seven checks, each one line with its figure; the three exercises are pluggable.

Pass a student's accumulator, call executor and truncation to grade them; by default the package's
own. Deliberately not handled: partial credit inside a check (each passes or fails whole).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .accumulator import ToolCallAccumulator
from .loop import Accumulator, check_transcript, run_agent
from .protocol import (
    AgentStopped,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolDef,
    ToolFinished,
    ToolResult,
)
from .providers.scripted import ScriptedModel
from .registry import ToolRegistry, default_registry, execute_call
from .sandbox import BIG_FILE, QUESTION, build_sandbox
from .truncate import truncate_result

__all__ = ["Check", "SelftestReport", "run_selftest"]

RunCall = Callable[[Mapping[str, ToolDef], ToolCall, ToolContext], ToolResult]


@dataclass(frozen=True)
class Check:
    number: int
    ok: bool
    line: str  # what was checked and the figure measured


@dataclass(frozen=True)
class SelftestReport:
    checks: list[Check]

    @property
    def passed(self) -> int:
        return sum(check.ok for check in self.checks)

    def summary(self) -> str:
        return f"{self.passed}/{len(self.checks)} passed"

    def __str__(self) -> str:
        lines = [f"{'v' if c.ok else 'x'} {c.number}. {c.line}" for c in self.checks]
        return "\n".join([*lines, self.summary()])


class CheckFailed(Exception):
    """A check's expectation did not hold (raised explicitly: `assert` vanishes under -O)."""


def _expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def _check_registry(ctx: ToolContext) -> str:
    tools = default_registry().list()
    names = sorted(t["function"]["name"] for t in tools)
    _expect(names == ["glob", "grep", "read_file"], f"registry lists {names}")
    params = 0
    for tool in tools:
        schema = tool["function"]["parameters"]
        _expect(schema.get("additionalProperties") is False, f"{names} schema is not strict")
        _expect(schema.get("required"), "every tool needs a required parameter")
        for name, prop in schema["properties"].items():
            _expect(prop.get("description"), f"parameter {name} has no description")
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
    _expect(inside.ok, f"reading src/calc.js inside failed: {inside.content}")
    _expect(refused == attempts, f"not refused: {sorted(set(attempts) - set(refused))}")
    return (
        f"climbing out blocked: {len(refused)}/3 (relative, absolute, symlink); inside reads fine"
    )


# The course's trap: a Claude gateway's parallel call, indexes from 1, heads and args interleaved.
INTERLEAVED = [
    ToolCallDelta(2, "call_b", "grep", ""),
    ToolCallDelta(1, "call_a", "glob", ""),
    ToolCallDelta(1, None, None, '{"pat'),
    ToolCallDelta(2, None, None, '{"pattern":"di'),
    ToolCallDelta(1, "", "", 'tern":"**/'),
    ToolCallDelta(2, None, None, 'vide\\\\("}'),
    ToolCallDelta(1, None, None, '*.js"}'),
]


def _check_merge(accumulator: Callable[[], Accumulator]) -> str:
    merger = accumulator()
    for delta in INTERLEAVED:
        merger.push(delta)
    calls = merger.drain()
    got = [(c.id, c.name, c.args) for c in calls]
    want = [
        ("call_a", "glob", '{"pattern":"**/*.js"}'),
        ("call_b", "grep", '{"pattern":"divide\\\\("}'),
    ]
    _expect(got == want, f"merged into {got}")
    return "interleaved fragments from index 1 merge into 2 calls: glob, grep"


def _check_feedback(run_call: RunCall, ctx: ToolContext) -> str:
    tools = default_registry().tools
    bad = {
        "unknown tool": ToolCall("c1", "edit_file", '{"path": "src/calc.js"}'),
        "invalid JSON": ToolCall("c2", "read_file", '{"path": "src/calc.js"'),
        "missing argument": ToolCall("c3", "read_file", '{"offset": 1}'),
        "wrong type": ToolCall("c4", "glob", '{"pattern": "**/*.js", "limit": "many"}'),
    }
    for what, call in bad.items():
        result = run_call(tools, call, ctx)
        _expect(isinstance(result, ToolResult), f"{what}: returned {type(result).__name__}")
        _expect(not result.ok and result.content.strip(), f"{what}: not a failed result with text")
    unknown = run_call(tools, bad["unknown tool"], ctx).content
    _expect(all(name in unknown for name in tools), "the unknown-tool text must name the tools")
    good = run_call(tools, ToolCall("c5", "read_file", '{"path": "src/calc.js"}'), ctx)
    _expect(good.ok, f"a valid call failed: {good.content[:80]}")
    return f"{len(bad)} illegal calls became failed results fed back; a valid call still runs"


def _check_truncate(truncate: Callable[[ToolResult], ToolResult]) -> str:
    body = "".join(f"line {n:05d}\n" for n in range(1819))
    text = body[: 20000 - 13] + "END OF RESULT"  # exactly 20000 chars, with a recognisable tail
    result = truncate(ToolResult(text, meta={"tool": "selftest"}))
    size = len(result.content)
    _expect(size == 8054, f"20000 chars truncated to {size}, expected 8054")
    _expect("12000" in result.content, "the note must state that 12000 chars were cut")
    _expect(result.content.startswith(text[:4800]), "the head (60%) must be kept")
    _expect(result.content.endswith(text[-3200:]), "the tail (40%) must be kept")
    meta = result.meta or {}
    _expect(meta.get("truncated") is True, "meta must say truncated: True, for the renderers")
    _expect(meta.get("originalChars") == 20000, "meta must record originalChars: 20000")
    return "a 20000-char result truncates to 8054 chars, stating 12000 were cut"


def _check_big_file(run_call: RunCall, truncate: Callable, ctx: ToolContext) -> str:
    size = len((ctx.root / BIG_FILE).read_text())
    registry = ToolRegistry(default_registry().tools.values(), run_call=run_call, truncate=truncate)
    result = registry.execute(ToolCall("c", "read_file", json.dumps({"path": BIG_FILE})), ctx)
    _expect(len(result.content) == 8054, f"read_file fed back {len(result.content)}, expected 8054")
    return f"reading the generated {size}-char {BIG_FILE} feeds back {len(result.content)} chars"


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
    _expect(order == ["glob", "grep", "read_file"], f"calls ran in order {order}")
    failed = [f"{e.call.name}: {e.result.content[:60]}" for e in finished if not e.result.ok]
    _expect(not failed, f"calls failed instead of answering: {failed}")
    _expect(isinstance(stopped, AgentStopped) and stopped.reason == "done", f"ended: {stopped}")
    _expect(messages[-1]["role"] == "assistant" and messages[-1]["content"], "no conclusion")
    _expect((problem := check_transcript(messages)) is None, problem)
    sizes = ", ".join(str(len(e.result.content)) for e in finished)
    return f"offline question ran glob -> grep -> read_file ({sizes} chars), then concluded"


def _checks(accumulator, run_call, truncate, ctx) -> Iterator[tuple[str, Callable[[], str]]]:
    yield "registry", lambda: _check_registry(ctx)
    yield "path boundary", lambda: _check_escapes(ctx)
    yield "fragment merging", lambda: _check_merge(accumulator)
    yield "bad-argument feedback", lambda: _check_feedback(run_call, ctx)
    yield "truncation", lambda: _check_truncate(truncate)
    yield "big file", lambda: _check_big_file(run_call, truncate, ctx)
    yield "offline loop", lambda: _check_loop(accumulator, run_call, truncate, ctx)


def run_selftest(
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
    run_call: RunCall = execute_call,
    truncate: Callable[[ToolResult], ToolResult] = truncate_result,
) -> SelftestReport:
    """Run the seven checks on a fresh sandbox; a check that raises anything simply fails."""
    checks = []
    with tempfile.TemporaryDirectory(prefix="course-agent-selftest-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for number, (name, check) in enumerate(_checks(accumulator, run_call, truncate, ctx), 1):
            try:
                checks.append(Check(number, True, check()))
            except Exception as exc:  # a student's stub raising NotImplementedError lands here
                reason = str(exc) or type(exc).__name__
                checks.append(Check(number, False, f"{name}: {reason}"))
    return SelftestReport(checks)
