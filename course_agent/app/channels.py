"""Keys cut from each channel people or a model see, once, after the wire is parsed: the model's
text, each call's arguments (as fragments and merged), each tool result, each error message.

Wrappers composed where a face wires the loop (cli.py, notebook/magics.py), so the lesson's loop,
registry and tools never mention keys. A streamed channel holds back at most one spelling of a key
(safety/events.py), so a key split anywhere is cut whole. Deliberately not handled: which keys
(safety.redaction.known_secrets says), bytes before they are parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    Model,
    ModelEvent,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolResult,
    ToolStarted,
)
from course_agent.safety.events import encodable, redacted_events
from course_agent.safety.redaction import known_secrets, redact

__all__ = [
    "RedactingAccumulator",
    "RedactingModel",
    "RedactingRegistry",
    "redacted_call",
    "redacted_events",
    "redacted_result",
    "redacting",
    "shown_events",
]


def _cut(text: str | None) -> str | None:
    return None if text is None else redact(encodable(text), known_secrets())


def _cut_all(value: Any) -> Any:
    """Every string in a result's meta (paths, matched lines, notes), however deeply nested."""
    if isinstance(value, str):
        return redact(encodable(value), known_secrets())
    if isinstance(value, Mapping):
        return {_cut_all(key): _cut_all(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cut_all(item) for item in value)
    return value


def redacted_call(call: ToolCall) -> ToolCall:
    """A merged call, each field cut whole: what the transcript, the cards and the tool see."""
    return ToolCall(_cut(call.id) or "", _cut(call.name) or "", _cut(call.args) or "")


def redacted_result(result: ToolResult) -> ToolResult:
    """A tool result as the model and people see it: its content and every string of its meta."""
    return ToolResult(_cut(result.content) or "", result.ok, _cut_all(dict(result.meta)))


@dataclass
class RedactingModel:
    """A model whose events leave with keys cut (redacted_events); the rest is the inner one's."""

    inner: Model

    @property
    def label(self) -> str:
        return redact(self.inner.label, known_secrets())

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        if getattr(self.inner, "events_cut", False):  # HttpModel cuts its own (for --record)
            return self.inner.stream(messages, tools)
        return redacted_events(self.inner.stream(messages, tools))

    def __getattr__(self, name: str) -> Any:  # ends_at, played, wire: the inner model's
        if name == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


class RedactingAccumulator:
    """An accumulator whose merged calls are cut whole: a key the fragments' channels could not
    see (split across calls an accumulator joins its own way) never reaches the transcript."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def push(self, delta: ToolCallDelta) -> None:
        self.inner.push(delta)

    def drain(self) -> list[ToolCall]:
        return [redacted_call(call) for call in self.inner.drain()]


class RedactingRegistry:
    """A registry whose results leave with keys cut: the tool-result channel, for the model (the
    transcript) and for people (cards, terminal). The tools themselves need know no key."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.tools = registry.tools

    def list(self) -> list[dict[str, Any]]:
        return self.registry.list()

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return redacted_result(self.registry.execute(call, ctx))


def shown_events(events: Iterable[AgentEvent]) -> Iterator[AgentEvent]:
    """A run's events as a face shows them: calls, results and each stop's message cut (the
    error channel); text comes cut from RedactingModel. Closing it closes `events` (the loop
    gives every call of a broken-off turn its result when closed)."""
    try:
        for event in events:
            if isinstance(event, AgentStopped):
                event = AgentStopped(event.reason, _cut(event.message) or "")
            elif isinstance(event, ToolStarted):
                event = ToolStarted(redacted_call(event.call))
            elif isinstance(event, ToolFinished):
                event = ToolFinished(redacted_call(event.call), redacted_result(event.result))
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


def redacting(factory: Callable[[], Any]) -> Callable[[], RedactingAccumulator]:
    """`accumulator=redacting(ToolCallAccumulator)`: each turn's merger, its calls cut whole."""
    return lambda: RedactingAccumulator(factory())
