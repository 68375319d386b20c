"""The whole agent on one screen: ask the model, run the calls it merged, append results, repeat.

A generator of typed events, so a terminal, a notebook or a self-test can watch the same run.
Deliberately not handled: approval of writes, retries of failed turns, context budgeting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

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
    ToolResult,
    ToolStarted,
    TurnStarted,
)
from course_agent.registry import ToolRegistry
from course_agent.safety.pieces import Pieces

__all__ = [
    "MAX_CALLS",
    "MAX_TURNS",
    "SYSTEM_PROMPT",
    "TOO_MANY_CALLS",
    "Accumulator",
    "check_transcript",
    "run_agent",
]

MAX_TURNS = 12  # the offline question needs 3; a real model rarely needs more than 8 to read around
# Calls run in one turn: models make 1 to 5 in parallel; each past this gets TOO_MANY_CALLS as its
# result instead of running, so a stream of 10,000 calls costs 32 tool runs, not 10,000.
MAX_CALLS = 32
TOO_MANY_CALLS = (
    f"too many calls in one turn; at most {MAX_CALLS} run, and this one did not: "
    "make it again in a later turn if you still need it"
)
SYSTEM_PROMPT = (
    "You are a coding agent with read-only access to a repository (the working directory). "
    "Look before you answer: glob to list files, grep to search, read_file to read. "
    "Cite paths and line numbers. Be brief."
)


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
    if not messages:
        messages.append({"role": "system", "content": SYSTEM_PROMPT})
    if not _is_retry(messages, question):
        messages.append({"role": "user", "content": question})
    tools = registry.list()

    for turn in range(1, max_turns + 1):
        if problem := check_transcript(messages):
            yield AgentStopped("error", f"transcript is invalid, not sending it: {problem}")
            return
        yield TurnStarted(turn)

        # The text as Pieces, not a list: 2-character deltas would cost 60 bytes each.
        merger, text, finish = accumulator(), Pieces(), None
        try:
            for event in model.stream(messages, tools):
                if isinstance(event, TextDelta):
                    text.add(event.text)
                    yield event  # text reaches people as it arrives
                elif isinstance(event, ToolCallDelta):
                    merger.push(event)
                elif isinstance(event, Finish):
                    finish = event.reason
            calls = merger.drain()
        except GatewayError as exc:
            # Nothing of the broken turn is appended: the transcript stays valid for a retry.
            yield AgentStopped("error", str(exc))
            return
        except (
            Exception
        ) as exc:  # a plugged-in accumulator that raises ends the turn, not the kernel
            yield AgentStopped("error", f"merging the stream failed: {type(exc).__name__}: {exc}")
            return

        messages.append(_assistant_message(text.text(), calls))
        # Do not trust finish_reason alone: some gateways say "stop" while sending tool calls.
        if not calls:
            if finish == "tool_calls":
                yield AgentStopped("error", "the model reported tool_calls but sent no call")
            else:
                yield AgentStopped("done")
            return

        answered = 0
        try:
            for number, call in enumerate(calls):
                if number < MAX_CALLS:
                    yield ToolStarted(call)
                    result = registry.execute(call, ctx)
                else:  # not run, but answered: every call needs its one result
                    result = ToolResult(TOO_MANY_CALLS, ok=False)
                # Only content goes back; meta (truncation figures, etc.) is for people.
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": result.content}
                )
                answered += 1
                yield ToolFinished(call, result)
        finally:
            # Interrupted (Ctrl-C, a closed generator): still give every call its one result.
            for call in calls[answered:]:
                note = "not run: the turn was interrupted before this call"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": note})

    yield AgentStopped(
        "max_turns",
        f"stopped after {max_turns} turns without a final answer; ask again or raise --max-turns",
    )
