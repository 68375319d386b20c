"""Three ways to merge one turn's tool-call fragments: two that break, and the one that does not.

Small on purpose, for students to read: the index is a label, not a list position, and parallel
calls interleave. A merge's calls are judged by the registry (demo_tools.py). Deliberately not
handled: fragments without an index (see accumulator.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from course_agent.accumulator import ToolCallAccumulator
from course_agent.notebook.demo_tools import course_tools, refusal
from course_agent.protocol import ToolCallDelta, ToolDef

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


def call_problem(slot: Slot, tools: Mapping[str, ToolDef] | None = None) -> str | None:
    """Why a merged call is wrong, or None for a good call: a call with no name is rejected by the
    gateway; any other is judged by the registry of `tools` (the course's by default), as the loop
    would run it."""
    if not slot.get("name"):
        return "no tool name: the gateway rejects the next request"
    tools = course_tools() if tools is None else tools
    refused = refusal(tools, slot["name"], slot.get("args", ""))
    return f"registry: {refused}" if refused else None
