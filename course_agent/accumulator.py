"""Merge streamed tool-call fragments into complete calls, keyed by their index, never by arrival.

The index is an opaque label: it may start at 0, 1 or any n, skip numbers, and parallel calls'
fragments interleave. Deliberately not handled: parsing the arguments (that happens after joining).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from course_agent.protocol import ToolCall, ToolCallDelta
from course_agent.safety.pieces import Pieces

__all__ = ["PartialCall", "ToolCallAccumulator"]


@dataclass
class PartialCall:
    """One call while its fragments are still arriving."""

    id: str | None = None
    name: str | None = None
    # The argument pieces in arrival order, read once in drain(). Not `args += piece`, which
    # copies the whole string for every fragment (1 MB of arguments in 4-character pieces took
    # 30 s); nor a plain list, where each 2-character piece costs 60 bytes (30 MB for 1 MB):
    # Pieces (pieces.py) joins them 256 at a time as they come.
    pieces: Pieces = field(default_factory=Pieces)


class ToolCallAccumulator:
    """Push every ToolCallDelta of one turn, then drain the complete calls in index order.

    One accumulator per turn: `drain` does not reset it.
    """

    def __init__(self) -> None:
        # index -> partial call: a dict, not a list, because the index may start anywhere
        self.by_index: dict[int, PartialCall] = {}

    def push(self, delta: ToolCallDelta) -> None:
        slot = self.by_index.get(delta.index)
        if slot is None:  # looked up first: setdefault would build a PartialCall every time
            slot = self.by_index[delta.index] = PartialCall()
        # id and name come in the first fragment; a later "" (Qwen, GLM) must not wipe them, and a
        # value repeated in every fragment is written again, not appended.
        if delta.id:
            slot.id = delta.id
        if delta.name:
            slot.name = delta.name
        if delta.args_delta:
            slot.pieces.add(delta.args_delta)  # arguments accumulate, never overwrite

    def drain(self) -> list[ToolCall]:
        """The calls in index order, not arrival order: parallel fragments interleave."""
        return [
            ToolCall(
                id=slot.id or f"call_{index}",  # give one even if the gateway sent none
                name=slot.name or "",
                args=slot.pieces.text(),
            )
            for index, slot in sorted(self.by_index.items())
        ]
