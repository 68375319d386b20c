"""Give every streamed call fragment an index, at the provider edge, so the accumulator need not.

A gateway that leaves the index out (Mistral does) still sends each call's id in its first
fragment: a new id opens the next slot, a known id goes back to its own, and a fragment with
neither continues the call being written. Deliberately not handled: merging (the accumulator's).
"""

from __future__ import annotations

__all__ = ["CallSlots"]


class CallSlots:
    """`slots.place(index, id)` -> the index the fragment belongs to, for one response."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}  # a call's id -> the slot it opened
        self.used: set[int] = set()  # every slot seen so far, given or chosen
        self.last: int | None = None  # the slot of the last fragment: where an anonymous one goes

    def place(self, index: int | None, call_id: str | None) -> int:
        if index is None:
            index = self._choose(call_id)
        if call_id:
            self.ids.setdefault(call_id, index)
        self.used.add(index)
        self.last = index
        return index

    def _choose(self, call_id: str | None) -> int:
        if call_id and call_id in self.ids:
            return self.ids[call_id]
        if not call_id and self.last is not None:
            return self.last  # no index, no id: it continues the call being written
        return max(self.used, default=-1) + 1  # a new call opens a slot after the rest
