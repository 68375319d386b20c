"""The whole agent on one screen: ask the model, run the calls it merged, append results, repeat.

A generator of typed events, so a terminal, a notebook or a self-test can watch the same run. Each
turn is two steps, `query` (stream the model's answer, merging its call fragments) then `observe`
(run each call, append its result). Deliberately not handled: approval of writes, retries of
failed turns, context budgeting, and the bounds on a hostile run (app/guard.py stands around it).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from course_agent.accumulator import ToolCallAccumulator
from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    Finish,
    GatewayError,
    Model,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolStarted,
    TurnStarted,
)
from course_agent.safety.pieces import Pieces

if TYPE_CHECKING:  # a type only: the registry imports the tools, which a --help need not load
    from course_agent.registry import ToolRegistry

__all__ = [
    "MAX_TURNS",
    "SYSTEM_PROMPT",
    "Accumulator",
    "check_transcript",
    "observe",
    "query",
    "run_agent",
]

MAX_TURNS = 12  # the offline question needs 3; a real model rarely needs more than 8 to read around
SYSTEM_PROMPT = (
    "You are a coding agent with read-only access to a repository (the working directory). "
    "Look before you answer: glob to list files, grep to search, read_file to read. "
    "Cite paths and line numbers. Be brief."
)
INTERRUPTED = "not run: the turn was interrupted before this call"


class Accumulator(Protocol):
    """What the loop needs from a fragment merger (the lab swaps in a student's)."""

    def push(self, delta: ToolCallDelta) -> None: ...
    def drain(self) -> list[ToolCall]: ...


def check_transcript(messages: list[dict[str, Any]]) -> str | None:
    """The two invariants a gateway enforces, checked before every request.

    Every assistant tool call is followed by exactly one tool message with its id, and no tool
    message answers a call that was never made. Returns what is wrong, or None.
    """
    pending: list[str] = []  # ids requested by the last assistant message, not yet answered
    for message in messages:
        if message["role"] == "tool":
            if message.get("tool_call_id") not in pending:
                return f"tool message {message.get('tool_call_id')!r} answers no pending call"
            pending.remove(message["tool_call_id"])
            continue
        if pending:
            return f"calls {pending} have no tool message before the next {message['role']}"
        if message["role"] == "assistant":
            pending = [call["id"] for call in message.get("tool_calls", [])]
    return f"calls {pending} have no tool message" if pending else None


def _assistant_message(text: str, calls: list[ToolCall]) -> dict[str, Any]:
    """The assistant turn as the gateway expects it back: with the calls it requested."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}
            for c in calls
        ]
    return message


def _is_retry(messages: list[dict[str, Any]], question: str) -> bool:
    """The same question again after its run broke off (a gateway error, an interrupt, out of
    turns): it goes on from the kept transcript instead of being asked twice."""
    for message in reversed(messages):
        if message["role"] == "user":
            return message.get("content") == question
        if message["role"] == "assistant" and not message.get("tool_calls"):
            return False  # the question was answered: asking it again is a new question
    return False


def _answered(finish: str | None) -> AgentStopped:
    """A turn without calls ends the run: done, unless the model said it was calling tools."""
    if finish == "tool_calls":
        return AgentStopped("error", "the model reported tool_calls but sent no call")
    return AgentStopped("done")


def _ask(question: str, messages: list[dict[str, Any]]) -> None:
    """Start the transcript with the system prompt, then add the question (unless a retry)."""
    if not messages:
        messages.append({"role": "system", "content": SYSTEM_PROMPT})
    if not _is_retry(messages, question):
        messages.append({"role": "user", "content": question})


def query(
    model: Model, messages: list[dict[str, Any]], tools: list[dict[str, Any]], merger: Accumulator
) -> Generator[TextDelta, None, tuple[str, list[ToolCall], str | None]]:
    """Stream one answer: yield its text as it comes, merge its call fragments, and return
    (the whole text, the merged calls, the model's finish reason)."""
    text, finish = Pieces(), None  # Pieces, not a list: 2-character deltas cost 60 bytes each
    for event in model.stream(messages, tools):
        if isinstance(event, TextDelta):
            text.add(event.text)
            yield event  # text reaches people as it arrives
        elif isinstance(event, ToolCallDelta):
            merger.push(event)
        elif isinstance(event, Finish):
            finish = event.reason
    return text.text(), merger.drain(), finish


def observe(
    calls: list[ToolCall], registry: ToolRegistry, ctx: ToolContext, messages: list[dict[str, Any]]
) -> Iterator[AgentEvent]:
    """Run each call and append its one result; only content goes back (meta is for people)."""
    answered = 0
    try:
        for call in calls:
            yield ToolStarted(call)
            result = registry.execute(call, ctx)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
            answered += 1
            yield ToolFinished(call, result)
    finally:  # interrupted (Ctrl-C, a closed generator): every call still gets its one result
        for call in calls[answered:]:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": INTERRUPTED})


def run_agent(
    question: str,
    model: Model,
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    messages: list[dict[str, Any]] | None = None,
    max_turns: int = MAX_TURNS,
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
) -> Iterator[AgentEvent]:
    """Run one question to its end. `messages` (extended in place) carries a conversation on;
    the question of a run that broke off, asked again, goes on from where that run stopped."""
    messages = [] if messages is None else messages
    _ask(question, messages)
    tools = registry.list()
    for turn in range(1, max_turns + 1):
        if problem := check_transcript(messages):
            yield AgentStopped("error", f"transcript is invalid, not sending it: {problem}")
            return
        yield TurnStarted(turn)
        try:
            text, calls, finish = yield from query(model, messages, tools, accumulator())
        except GatewayError as exc:  # nothing of the broken turn is kept: a retry stays valid
            yield AgentStopped("error", str(exc))
            return
        messages.append(_assistant_message(text, calls))
        if not calls:  # merged calls decide, not finish_reason: some say "stop" with calls
            yield _answered(finish)
            return
        yield from observe(calls, registry, ctx, messages)
    yield AgentStopped(
        "max_turns",
        f"stopped after {max_turns} turns without a final answer; ask again or raise --max-turns",
    )
