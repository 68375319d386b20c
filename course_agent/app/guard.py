"""The refusals the lesson's loop cannot express, around `loop.run_agent`, in one place.

`run_guarded` runs the loop with its limits (calls per turn, the run's deadline) and wraps the
registry, model and accumulator so that hostile input fails in one line: a call's raw size,
unreadable JSON, lone surrogates, a plugged-in accumulator or model that raises. Deliberately not
handled: keys (app/channels.py) and one request's time (providers/).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from course_agent.accumulator import ToolCallAccumulator
from course_agent.app.options import DEFAULT_RUN_SECONDS
from course_agent.argument_caps import MAX_ARGUMENTS_CHARS
from course_agent.loop import MAX_CALLS, MAX_TURNS, run_agent
from course_agent.protocol import (
    Accumulator,
    AgentEvent,
    GatewayError,
    Model,
    ModelEvent,
    Registry,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolResult,
)
from course_agent.registry import ToolRegistry, describe_parameters

__all__ = [
    "GuardedRegistry",
    "RunDeadline",
    "refuse_arguments",
    "run_guarded",
]


@dataclass
class RunDeadline:
    """The loop's Deadline, `seconds` from now, worded with the option that changes it. `bind`
    hands it to an HttpModel, whose requests end by it, so a gateway dripping a byte a minute
    stops too."""

    seconds: float = DEFAULT_RUN_SECONDS
    ends_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.ends_at = time.monotonic() + self.seconds

    def bind(self, model: Model) -> None:
        # An HttpModel exists only once its module is loaded; importing it for an offline model
        # would load httpx for nothing (tests/test_options.py), so look only when it is.
        if "course_agent.providers.http" not in sys.modules:
            return
        from course_agent.providers.http import HttpModel

        if isinstance(model, HttpModel):  # the offline models answer at once
            model.ends_at = self.ends_at

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
    """A Registry whose `execute` refuses hostile arguments before the lesson's registry reads
    them."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.tools = registry.tools

    def list(self) -> list[dict[str, Any]]:
        return self.registry.list()

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self.tools.get(call.name)
        parameters = describe_parameters(tool) if tool is not None else ""
        if tool is not None and (refused := refuse_arguments(call, parameters)):
            return ToolResult(refused, ok=False)
        return self.registry.execute(call, ctx)


class _GuardedAccumulator:
    """A plugged-in accumulator that raises ends the turn as a one-line error, not the kernel."""

    def __init__(self, make: Callable[[], Accumulator]) -> None:
        self.inner: Accumulator = self._guarded(make)  # a lab's stub raises in __init__

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
    """A model whose stream ends with GatewayError, never another exception."""

    inner: Model

    @property
    def label(self) -> str:
        return self.inner.label

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        try:
            yield from self.inner.stream(messages, tools)
        except (GatewayError, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as exc:
            raise GatewayError(f"the model's stream failed: {type(exc).__name__}: {exc}") from None


def run_guarded(
    question: str | None,
    model: Model,
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    messages: list[dict[str, Any]] | None = None,
    max_turns: int = MAX_TURNS,
    max_calls: int = MAX_CALLS,
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
    deadline: RunDeadline | None = None,
) -> Iterator[AgentEvent]:
    """`run_agent`'s events with hostile input refused; the run stops in one line at `deadline`
    (DEFAULT_RUN_SECONDS from now when None)."""
    guarded: Registry = GuardedRegistry(registry)
    return run_agent(
        question,
        _GuardedModel(model),
        guarded,
        ctx,
        messages=messages,
        max_turns=max_turns,
        max_calls=max_calls,
        deadline=deadline or RunDeadline(),
        accumulator=lambda: _GuardedAccumulator(accumulator),
    )
