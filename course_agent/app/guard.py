"""One guard around the lesson's loop: every refusal the course does not name, in one place.

`run_guarded` runs `loop.run_agent` with a registry, a model and an accumulator wrapped so that a
hostile run is bounded: calls per turn, a call's raw size, unreadable JSON, lone surrogates, a
plugged-in accumulator or model that raises, and the whole run's time. Deliberately not handled:
keys (cut where text enters: providers/, the tools' readers) and one request's time (providers/).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from course_agent.accumulator import ToolCallAccumulator
from course_agent.loop import MAX_TURNS, Accumulator, run_agent
from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    GatewayError,
    Model,
    ModelEvent,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolResult,
    ToolStarted,
    TurnStarted,
)
from course_agent.registry import ToolRegistry, describe_parameters

__all__ = [
    "DEFAULT_RUN_SECONDS",
    "MAX_ARGUMENTS_CHARS",
    "MAX_CALLS",
    "TOO_MANY_CALLS",
    "GuardedRegistry",
    "RunDeadline",
    "refuse_arguments",
    "run_guarded",
]

# Calls run in one turn: models make 1 to 5 in parallel; each past this gets TOO_MANY_CALLS as its
# result instead of running, so a stream of 10,000 calls costs 32 tool runs, not 10,000.
MAX_CALLS = 32
TOO_MANY_CALLS = (
    f"too many calls in one turn; at most {MAX_CALLS} run, and this one did not: "
    "make it again in a later turn if you still need it"
)
# A call's raw JSON, checked before json.loads: every tool's arguments fit in a few KB, and the
# pydantic classes cap each string (4096 characters) so that the schema says so too.
MAX_ARGUMENTS_CHARS = 65_536
# A whole run (one question, every turn and call): the offline question takes under a second and
# a real one 10 to 60 s; five minutes is long enough for any question a student asks, and short
# enough that a stuck run says so while the student is still looking.
DEFAULT_RUN_SECONDS = 300.0


@dataclass
class RunDeadline:
    """The instant a run must end by. `bind(model)` hands it to a model that bounds its own
    requests by it (HttpModel's `ends_at`), so a gateway dripping a byte a minute stops too."""

    seconds: float = DEFAULT_RUN_SECONDS
    ends_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.ends_at = time.monotonic() + self.seconds

    def bind(self, model: object) -> None:
        if hasattr(model, "ends_at"):
            model.ends_at = self.ends_at  # type: ignore[attr-defined]

    def passed(self) -> bool:
        return time.monotonic() >= self.ends_at

    def message(self) -> str:
        return (
            f"stopped: the run took more than {self.seconds:g} s (--deadline, or "
            "COURSE_AGENT_RUN_DEADLINE); ask again to go on from here"
        )


def refuse_arguments(call: ToolCall, tool_parameters: str) -> str | None:
    """Why a call's raw arguments are refused before execute_call reads them, or None: too long,
    JSON that parses to no value Python can hold, or text with a lone surrogate."""
    if len(call.args) > MAX_ARGUMENTS_CHARS:
        return (
            f"arguments for {call.name} are {len(call.args):,} characters long; at most "
            f"{MAX_ARGUMENTS_CHARS:,} are read. Send one small JSON object; "
            f"parameters: {tool_parameters}"
        )
    try:
        parsed = json.loads(call.args.strip() or "{}")
    except json.JSONDecodeError:
        return None  # the lesson's own failure 2 explains it
    except (ValueError, RecursionError) as exc:  # a 5000-digit number; [[[[... nested too deep
        return (
            f"arguments for {call.name} could not be read: {exc}. "
            f"Send one flat JSON object; parameters: {tool_parameters}"
        )
    try:  # JSON may spell a lone surrogate ("\ud800"): no file name or regex can use one
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return (
            f"arguments for {call.name} contain a lone surrogate (a \\ud800-style escape); "
            "send valid Unicode text"
        )
    return None


class GuardedRegistry:
    """A registry whose `execute` refuses hostile calls and runs at most MAX_CALLS a turn."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.tools = registry.tools
        self.started = 0  # calls started in this turn (run_guarded counts them)

    def list(self) -> list[dict[str, Any]]:
        return self.registry.list()

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if self.started > MAX_CALLS:
            return ToolResult(TOO_MANY_CALLS, ok=False)
        tool = self.tools.get(call.name)
        parameters = describe_parameters(tool) if tool is not None else ""
        if tool is not None and (refused := refuse_arguments(call, parameters)):
            return ToolResult(refused, ok=False)
        return self.registry.execute(call, ctx)


class _GuardedAccumulator:
    """A plugged-in accumulator that raises ends the turn as a one-line error, not the kernel."""

    def __init__(self, inner: Accumulator) -> None:
        self.inner = inner

    def push(self, delta: ToolCallDelta) -> None:
        self._guarded(self.inner.push, delta)

    def drain(self) -> list[ToolCall]:
        return self._guarded(self.inner.drain)

    @staticmethod
    def _guarded(step: Callable[..., Any], *args: Any) -> Any:
        try:
            return step(*args)
        except Exception as exc:
            raise GatewayError(f"merging the stream failed: {type(exc).__name__}: {exc}") from None


@dataclass
class _GuardedModel:
    """A model whose stream ends with GatewayError, never another exception, and at the deadline."""

    inner: Model
    deadline: RunDeadline

    @property
    def label(self) -> str:
        return self.inner.label

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        try:
            for event in self.inner.stream(messages, tools):
                yield event
                if self.deadline.passed():
                    raise GatewayError(self.deadline.message())
        except (GatewayError, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as exc:
            raise GatewayError(f"the model's stream failed: {type(exc).__name__}: {exc}") from None


def run_guarded(
    question: str,
    model: Model,
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    messages: list[dict[str, Any]] | None = None,
    max_turns: int = MAX_TURNS,
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
    deadline: RunDeadline | None = None,
) -> Iterator[AgentEvent]:
    """`run_agent`'s events, within the guard's bounds; the run stops in one line at `deadline`
    (DEFAULT_RUN_SECONDS from now when None). Calls past MAX_CALLS show no start: they do not run.
    """
    deadline = deadline or RunDeadline()
    guarded = GuardedRegistry(registry)
    events = run_agent(
        question,
        _GuardedModel(model, deadline),
        guarded,  # type: ignore[arg-type]  (the two verbs the loop uses)
        ctx,
        messages=messages,
        max_turns=max_turns,
        accumulator=lambda: _GuardedAccumulator(accumulator()),
    )
    try:
        for event in events:
            if isinstance(event, TurnStarted):
                guarded.started = 0
            elif isinstance(event, ToolStarted):
                guarded.started += 1
                if guarded.started > MAX_CALLS:
                    continue
            if isinstance(event, AgentStopped) and event.reason == "error" and deadline.passed():
                event = AgentStopped("error", deadline.message())
            yield event
            if deadline.passed() and not isinstance(event, AgentStopped):
                events.close()  # every call of the turn gets its result (loop.observe)
                yield AgentStopped("error", deadline.message())
                return
    finally:
        events.close()
