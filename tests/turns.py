"""What a streamed answer amounts to once merged: shared by the tests of every wire format."""

from __future__ import annotations

from dataclasses import dataclass

from course_agent.accumulator import ToolCallAccumulator
from course_agent.protocol import Finish, ModelEvent, TextDelta, ToolCall, ToolCallDelta

__all__ = ["Turn", "merged"]


@dataclass(frozen=True)
class Turn:
    """The text, the finish reasons and the merged calls of one streamed answer."""

    text: str = ""
    finishes: tuple[str, ...] = ("tool_calls",)
    calls: tuple[ToolCall, ...] = ()


def merged(events: list[ModelEvent]) -> Turn:
    accumulator = ToolCallAccumulator()
    text, finishes = [], []
    for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ToolCallDelta):
            accumulator.push(event)
        elif isinstance(event, Finish):
            finishes.append(event.reason)
    return Turn("".join(text), tuple(finishes), tuple(accumulator.drain()))
