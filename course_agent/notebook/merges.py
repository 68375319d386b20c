"""Three ways to merge one turn's tool-call fragments: two that break, and the one that does not.

Small on purpose, for students to read: the index is a label, not a list position, and parallel
calls interleave. Deliberately not handled: fragments without an index (see accumulator.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from course_agent.accumulator import ToolCallAccumulator
from course_agent.protocol import ToolCallDelta

__all__ = ["Slot", "call_problem", "merge_by_index", "merge_by_subscript", "merge_in_arrival_order"]

# One partial call: {"id": ..., "name": ..., "args": ...}; keys may be missing.
Slot = dict[str, str]


def merge_by_subscript(fragments: Sequence[ToolCallDelta]) -> list[Slot]:
    """Wrong way 1: the index is a list position counted from 0.

    JavaScript's `calls[1] = {...}` on an empty array leaves a hole at 0; the list is padded the
    same way here, so a stream whose index starts at 1 gets a phantom call with no name.
    """
    calls: list[Slot] = []
    for delta in fragments:
        position = delta.index or 0  # every stream in this demo sends an index
        while len(calls) <= position:
            calls.append({"id": "", "name": "", "args": ""})
        slot = calls[position]
        slot["id"] = delta.id or slot["id"]
        slot["name"] = delta.name or slot["name"]
        slot["args"] += delta.args_delta or ""
    return calls


def merge_in_arrival_order(fragments: Sequence[ToolCallDelta]) -> list[Slot]:
    """Wrong way 2: a fragment with an id opens a call; every other one extends the newest call.

    Fine while calls arrive one after the other; parallel calls interleave, and their arguments
    get stitched into whichever call opened last.
    """
    calls: list[Slot] = []
    for delta in fragments:
        if delta.id:
            calls.append({"id": delta.id, "name": delta.name or "", "args": ""})
        if calls:
            calls[-1]["args"] += delta.args_delta or ""
    return calls


def merge_by_index(fragments: Sequence[ToolCallDelta]) -> dict[int, Slot]:
    """The course's way, with the package's own ToolCallAccumulator: a dict keyed by index."""
    merger = ToolCallAccumulator()
    for delta in fragments:
        merger.push(delta)
    return {
        index: {"id": slot.id or "", "name": slot.name or "", "args": "".join(slot.pieces)}
        for index, slot in merger.by_index.items()
    }


def call_problem(slot: Slot) -> str | None:
    """What a gateway or a tool would reject in a merged call, or None if it is a good call."""
    if not slot.get("name"):
        return "no tool name: the gateway rejects the next request"
    try:
        json.loads(slot.get("args") or "{}")
    except json.JSONDecodeError as exc:
        return f"arguments are not JSON ({exc.msg})"
    return None
