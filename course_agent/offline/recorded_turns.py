"""Recorded turns: how real streams end, read by the package's own parsers and accumulator.

The recordings ship in offline/streams/ (copied verbatim from public repositories; provenance in
its README.txt). One more turn is not recorded but replayed: the course measured models that say
"stop" while sending a call, and the offline model's second turn does exactly that. Deliberately
not handled: streams that end in an error (every file here finishes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from course_agent.accumulator import ToolCallAccumulator
from course_agent.offline.repository import QUESTION
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import Finish, ModelEvent, ToolCall, ToolCallDelta
from course_agent.providers import anthropic_events, openai_chunks

__all__ = ["STREAMS", "RecordedTurn", "offline_stop_with_call", "read_turn", "recorded_turns"]

STREAMS = Path(__file__).resolve().parent / "streams"
# (file, its wire format, what it shows): every recording that ends with a finish reason.
RECORDINGS = [
    ("vercel-ai_claude-openai-compat_index1_after_text.sse", "openai", "claude-haiku-4-5 "
     "through an OpenAI-compatible gateway: text, then one call at index 1"),
    ("openai-python_parallel_tool_calls.sse", "openai", "gpt-4o: two parallel calls"),
    ("openai-python_plain_content.sse", "openai", "gpt-4o: a plain text answer"),
    ("openai-python_max_tokens_length.sse", "openai", "gpt-4o: cut off by max_tokens"),
    ("anthropic-sdk-python_messages_tool_use.sse", "anthropic", "claude-sonnet-4 (Messages "
     "API): text, then one tool_use"),
    ("anthropic-sdk-python_messages_tool_use_truncated_max_tokens.sse", "anthropic",
     "claude-3-7-sonnet (Messages API): a tool_use cut off by max_tokens"),
]  # fmt: skip


@dataclass(frozen=True)
class RecordedTurn:
    label: str  # where the turn comes from, as a student reads it
    finish: str | None  # the finish reason in the loop's words (Anthropic's tool_use is tool_calls)
    calls: list[ToolCall]  # what the package's accumulator merged


def read_turn(label: str, events: Iterable[ModelEvent]) -> RecordedTurn:
    """The finish reason and the merged calls of one turn's events."""
    merger, finish = ToolCallAccumulator(), None
    for event in events:
        if isinstance(event, ToolCallDelta):
            merger.push(event)
        elif isinstance(event, Finish):
            finish = event.reason
    return RecordedTurn(label, finish, merger.drain())


def _events(filename: str, wire: str) -> Iterator[ModelEvent]:
    lines = (STREAMS / filename).read_text(encoding="utf-8").splitlines()
    reader = openai_chunks if wire == "openai" else anthropic_events
    return reader.events_from_lines(lines, gateway=filename)


def offline_stop_with_call() -> RecordedTurn:
    """The offline model's second turn of the course question: a read_file call, finish "stop"."""
    calls = [{"id": f"call_1_{n}", "type": "function"} for n in (1, 2)]
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": call["id"], "content": "..."} for call in calls),
    ]
    label = "the course's measured trap, replayed by the offline model (turn 2): 'stop' with a call"
    return read_turn(label, ScriptedModel().stream(messages, tools=[]))


def recorded_turns() -> list[RecordedTurn]:
    """Every recording's turn, then the offline model's "stop" with a call."""
    turns = [read_turn(f"{what} ({name})", _events(name, wire)) for name, wire, what in RECORDINGS]
    return [*turns, offline_stop_with_call()]
