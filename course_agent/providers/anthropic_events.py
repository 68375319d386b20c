"""Parse Anthropic Messages streams: one event -> the same typed events OpenAI chunks become.

A tool_use content block is a call, its content block index is the call's index, and
input_json_delta fragments are its arguments, so the one accumulator merges both wire formats.
Deliberately ignored: thinking blocks, server tools (web search), citations, and usage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from course_agent.protocol import Finish, GatewayError, ModelEvent, TextDelta, ToolCallDelta
from course_agent.providers.gateway import errors
from course_agent.providers.gateway.contract import (
    BrokenChunk,
    BrokenJson,
    index_field,
    json_value,
    object_field,
    text_field,
)
from course_agent.providers.gateway.sse import iter_sse

__all__ = ["STOP_REASONS", "events_from_event", "events_from_lines"]

# Anthropic's stop_reason -> the finish reason the loop speaks (OpenAI's words); others pass as-is.
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def events_from_event(payload: dict[str, Any]) -> list[ModelEvent]:
    """The events in one Anthropic stream event (the JSON of one `data:` line).

    content_block_start {"index": 1, "content_block": {"type": "tool_use", "id", "name"}} opens a
    call; content_block_delta {"index": 1, "delta": {"type": "input_json_delta", "partial_json"}}
    adds to it; message_delta {"delta": {"stop_reason": "tool_use"}} finishes the turn.
    content_block_stop, message_start, message_stop, ping and unknown types carry nothing we use:
    a tool block cut off by max_tokens never gets its stop, and is merged all the same.
    Raises BrokenChunk when a field the events need has the wrong type.
    """
    kind = payload.get("type")
    if kind == "content_block_start":
        index = _block_index(payload)
        block = object_field(payload.get("content_block"), "content_block")
        if block.get("type") == "tool_use":
            # Its "input" is always {} here: the arguments follow as input_json_delta fragments.
            call_id = text_field(block.get("id"), "a tool_use block's id")
            name = text_field(block.get("name"), "a tool_use block's name")
            return [ToolCallDelta(index=index, id=call_id, name=name)]
        if block.get("type") == "text" and (text := text_field(block.get("text"), "text")):
            return [TextDelta(text)]
        return []
    if kind == "content_block_delta":
        index = _block_index(payload)
        delta = object_field(payload.get("delta"), "delta")
        if delta.get("type") == "text_delta" and (text := text_field(delta.get("text"), "text")):
            return [TextDelta(text)]
        if delta.get("type") == "input_json_delta":
            # The first fragment is often "": a tool without arguments sends nothing else.
            piece = text_field(delta.get("partial_json"), "partial_json")
            return [ToolCallDelta(index=index, args_delta=piece or None)]
        return []
    if kind == "message_delta":
        delta = object_field(payload.get("delta"), "delta")
        reason = text_field(delta.get("stop_reason"), "stop_reason")
        if reason is not None:
            return [Finish(STOP_REASONS.get(reason, reason))]
    return []


def _block_index(payload: dict[str, Any]) -> int:
    """A content block's index; a block without one is the first (as a choice without one is)."""
    return index_field(payload.get("index"), "a content block's index") or 0


def events_from_lines(lines: Iterable[str], gateway: str) -> Iterator[ModelEvent]:
    """Read an Anthropic SSE body (lines as received) up to message_stop and yield its events.

    Raises GatewayError, naming `gateway`, for an `event: error` (overloaded, rate-limited, ...)
    sent mid-stream and a body that ends without message_stop and without any stop reason;
    errors.BrokenStream (a GatewayError) for a data line that is not a JSON object or an event of
    the wrong shape. Messages may quote the lines: errors.py redacts what it quotes.
    """
    finished = False
    open_calls: set[int | None] = set()  # tool_use blocks started and not yet stopped
    for sse in iter_sse(lines):
        try:
            payload: Any = json_value(sse.data)
        except BrokenJson:
            payload = sse.data  # kept as text: an error event may carry plain text
        # The JSON's "type" repeats the SSE event name; either one saying "error" is an error.
        if sse.event == "error" or (isinstance(payload, dict) and payload.get("type") == "error"):
            raise GatewayError(errors.midstream(gateway, payload))
        if not isinstance(payload, dict):
            what = "an event object"
            raise errors.BrokenStream(errors.not_an_object(gateway, sse.data, what))
        if payload.get("type") == "message_stop":
            return
        try:
            events = events_from_event(payload)
            _follow_calls(payload, events, open_calls)
        except BrokenChunk as broken:
            raise errors.BrokenStream(errors.broken_chunk(gateway, str(broken))) from None
        for event in events:
            finished = finished or isinstance(event, Finish)
            yield event
    if not finished:
        raise GatewayError(errors.incomplete(gateway, "no stop reason, no message_stop"))


def _follow_calls(
    payload: dict[str, Any], events: list[ModelEvent], open_calls: set[int | None]
) -> None:
    """Keep `open_calls` (the tool_use blocks started, not yet stopped) up to date, and raise
    BrokenChunk for arguments sent to any other block: merged, they would make a call without a
    name, which the next request carries back and Anthropic refuses, then and every time after."""
    kind = payload.get("type")
    if kind == "content_block_stop":
        open_calls.discard(index_field(payload.get("index"), "a content block's index"))
    for event in events:
        if not isinstance(event, ToolCallDelta):
            continue
        if kind == "content_block_start":
            open_calls.add(event.index)
        elif event.index not in open_calls:
            raise BrokenChunk(
                f"input_json_delta for content block {event.index}, which is not an open "
                "tool_use block"
            )
