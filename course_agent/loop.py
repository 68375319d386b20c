"""The whole agent on one screen: ask the model, run the calls it merged, append results, repeat.

A generator of typed events, so a terminal, a notebook or a self-test can watch the same run. Each
turn is two steps, `query` (stream the model's answer, merging its call fragments) then `observe`
(run each call, append its result); the run's limits are parameters checked where the loop asks.
Deliberately not handled: approval of writes, retries, context budgeting, hostile arguments
(app/guard.py refuses those), and conversations (a caller passes `messages` on).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Any

from course_agent.accumulator import ToolCallAccumulator
from course_agent.protocol import (
    Accumulator,
    AgentEvent,
    AgentStopped,
    Deadline,
    Finish,
    GatewayError,
    Model,
    Registry,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolResult,
    ToolStarted,
    TurnStarted,
)

__all__ = [
    "MAX_CALLS",
    "MAX_TURNS",
    "NOT_RUN",
    "SYSTEM_PROMPT",
    "TOO_MANY",
    "check_transcript",
    "observe",
    "query",
    "run_agent",
]

MAX_TURNS = 12  # the offline question needs 3; a real model rarely needs more than 8 to read around
# Calls run in one turn (models make 1 to 5): each past it is answered without running.
MAX_CALLS = 32
TOO_MANY = (
    "too many calls in one turn; at most {} run, and this one did not: "
    "make it again in a later turn if you still need it"
)
SYSTEM_PROMPT = (
    "You are a coding agent with read-only access to a repository (the working directory). "
    "Look before you answer: glob to list files, grep to search, read_file to read. "
    "Cite paths and line numbers. Be brief."
)
# The result a call gets when the turn ends before it runs (Ctrl-C, a closed run, the deadline).
NOT_RUN = "not run: the turn was interrupted before this call"


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


def _answered(finish: str | None) -> AgentStopped:
    """A turn without calls ends the run: done, unless the model said it was calling tools."""
    if finish == "tool_calls":
        return AgentStopped("error", "the model reported tool_calls but sent no call")
    return AgentStopped("done")


def _passed(deadline: Deadline | None) -> bool:
    return deadline is not None and deadline.passed()


def query(
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    merger: Accumulator,
    deadline: Deadline | None = None,
) -> Generator[TextDelta, None, tuple[str, list[ToolCall], str | None]]:
    """Stream one answer: yield its text as it comes, merge its call fragments, and return
    (the whole text, the merged calls, the model's finish reason)."""
    text: list[str] = []  # joined once at the end, as the accumulator's pieces are
    finish = None
    for event in model.stream(messages, tools):
        if isinstance(event, TextDelta):
            text.append(event.text)
            yield event  # text reaches people as it arrives
        elif isinstance(event, ToolCallDelta):
            merger.push(event)
        elif isinstance(event, Finish):
            finish = event.reason
        if _passed(deadline):  # dropped as a failed request's turn is: the transcript stays valid
            raise GatewayError("the run's deadline passed during the turn")
    return "".join(text), merger.drain(), finish


def observe(
    calls: list[ToolCall],
    registry: Registry,
    ctx: ToolContext,
    messages: list[dict[str, Any]],
    *,
    max_calls: int = MAX_CALLS,
    deadline: Deadline | None = None,
) -> Iterator[AgentEvent]:
    """Run each call and append its one result; only content goes back (meta is for people).
    Calls past `max_calls` are answered without running (and show no start)."""
    answered = 0
    try:
        for call in calls:
            if _passed(deadline):
                return  # the rest are answered below
            if answered < max_calls:
                yield ToolStarted(call)
                result = registry.execute(call, ctx)
            else:
                result = ToolResult(TOO_MANY.format(max_calls), ok=False)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
            answered += 1
            yield ToolFinished(call, result)
    finally:  # interrupted (Ctrl-C, a closed generator): every call still gets its one result
        for call in calls[answered:]:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": NOT_RUN})


def run_agent(
    question: str | None,
    model: Model,
    registry: Registry,
    ctx: ToolContext,
    *,
    messages: list[dict[str, Any]] | None = None,
    max_turns: int = MAX_TURNS,
    max_calls: int = MAX_CALLS,
    deadline: Deadline | None = None,
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
) -> Iterator[AgentEvent]:
    """Run one question to its end. `messages` (extended in place) carries a conversation on;
    a question of None goes on from `messages` as they stand (a run that broke off, resumed)."""
    messages = [] if messages is None else messages
    if not messages:
        messages.append({"role": "system", "content": SYSTEM_PROMPT})
    if question is not None:
        messages.append({"role": "user", "content": question})
    tools = registry.list()
    for turn in range(1, max_turns + 1):
        if problem := check_transcript(messages):
            yield AgentStopped("error", f"transcript is invalid, not sending it: {problem}")
            return
        if _passed(deadline):  # asked before each turn, each streamed event and each call
            yield AgentStopped("error", deadline.message())
            return
        yield TurnStarted(turn)
        try:
            text, calls, finish = yield from query(model, messages, tools, accumulator(), deadline)
        except GatewayError as exc:  # nothing of the broken turn is kept: a retry stays valid
            # A request cut short by the deadline fails as a timeout: say the deadline instead.
            yield AgentStopped("error", deadline.message() if _passed(deadline) else str(exc))
            return
        messages.append(_assistant_message(text, calls))
        if not calls:  # merged calls decide, not finish_reason: some say "stop" with calls
            yield _answered(finish)
            return
        yield from observe(calls, registry, ctx, messages, max_calls=max_calls, deadline=deadline)
    yield AgentStopped(
        "max_turns",
        f"stopped after {max_turns} turns without a final answer; ask again or raise --max-turns",
    )
