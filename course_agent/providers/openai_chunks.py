"""Parse OpenAI-style streams: one chat.completion.chunk -> typed events; an SSE body -> events.

Pure functions, no HTTP, so the offline scripted model and recordings share them with the live
client. Every field is read through contract.py, so a chunk of the wrong shape is a clear error.
Deliberately ignored: reasoning text, usage, logprobs, and every choice but the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from course_agent.protocol import Finish, GatewayError, ModelEvent, TextDelta, ToolCallDelta
from course_agent.providers.call_slots import CallSlots
from course_agent.providers.gateway import errors
from course_agent.providers.gateway.contract import (
    BrokenChunk,
    BrokenJson,
    index_field,
    json_value,
    list_field,
    object_field,
    text_field,
)
from course_agent.providers.gateway.sse import iter_sse

__all__ = ["events_from_chunk", "events_from_lines"]


def events_from_chunk(chunk: dict[str, Any], slots: CallSlots | None = None) -> list[ModelEvent]:
    """The events in one chunk, in wire order: text, then call fragments, then the finish.

    A chunk looks like {"choices": [{"index": 0, "delta": {"content": "Hi", "tool_calls": [...]},
    "finish_reason": null}], ...}. Chunks with "choices": [] (Azure's first chunk, the usage-only
    last chunk) and chunks for other choices (n=3 streams interleave them) yield nothing.
    A fragment without an index (Mistral's) gets one from `slots`, the response's CallSlots (a
    fresh one when None). Raises BrokenChunk when a field the events need has the wrong type.
    """
    slots = CallSlots() if slots is None else slots
    choices = [object_field(c, "a choice") for c in list_field(chunk.get("choices"), "choices")]
    # A choice without an index is choice 0 (some gateways omit it when n=1).
    choice = next(
        (c for c in choices if index_field(c.get("index", 0), "a choice's index") == 0), None
    )
    if choice is None:
        return []
    delta = object_field(choice.get("delta"), "delta")
    events: list[ModelEvent] = []
    # "" and null both mean "no text in this chunk"; reasoning_content is not the answer.
    if isinstance(delta.get("content"), str) and delta["content"]:
        events.append(TextDelta(delta["content"]))
    for entry in list_field(delta.get("tool_calls"), "tool_calls"):
        entry = object_field(entry, "a tool call")
        function = object_field(entry.get("function"), "a tool call's function")
        call_id = text_field(entry.get("id"), "a tool call's id")
        index = index_field(entry.get("index"), "a tool call's index")  # None when left out
        events.append(
            ToolCallDelta(
                index=slots.place(index, call_id),
                id=call_id,
                name=text_field(function.get("name"), "a tool call's name"),
                args_delta=_arguments_text(function.get("arguments")),
            )
        )
    reason = text_field(choice.get("finish_reason"), "finish_reason")
    if reason is not None:
        events.append(Finish(reason))
    return events


def _arguments_text(arguments: Any) -> str | None:
    """Arguments are a JSON *string* fragment; a few gateways send the parsed object instead."""
    if arguments is None or isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except RecursionError:  # read at the edge of the stack, one level too deep to write back
        raise BrokenChunk("a tool call's arguments are nested too deeply") from None


def events_from_lines(lines: Iterable[str], gateway: str) -> Iterator[ModelEvent]:
    """Read an SSE body (lines as received) up to `data: [DONE]` and yield its events.

    Raises GatewayError, naming `gateway`, for an error sent mid-stream (`event: error`, or a
    payload with an "error" object) and a body that ends without [DONE] and without any finish
    reason; errors.BrokenStream (a GatewayError) for a data line that is not a JSON object or a
    chunk of the wrong shape. Messages may
    quote the lines: errors.py redacts what it quotes.
    """
    finished, slots = False, CallSlots()
    for sse in iter_sse(lines):
        if sse.data == "[DONE]":
            return
        try:
            payload = json_value(sse.data)
        except BrokenJson:
            raise errors.BrokenStream(errors.not_json(gateway, sse.data)) from None
        if sse.event == "error" or (isinstance(payload, dict) and payload.get("error")):
            raise GatewayError(errors.midstream(gateway, payload))
        if not isinstance(payload, dict):
            what = "a chunk object"
            raise errors.BrokenStream(errors.not_an_object(gateway, sse.data, what))
        try:
            events = events_from_chunk(payload, slots)
        except BrokenChunk as broken:
            raise errors.BrokenStream(errors.broken_chunk(gateway, str(broken))) from None
        for event in events:
            finished = finished or isinstance(event, Finish)
            yield event
    if not finished:
        raise GatewayError(errors.incomplete(gateway, "no finish reason, no [DONE]"))
