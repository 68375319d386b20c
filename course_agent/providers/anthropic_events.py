"""Parse Anthropic Messages streams: one event -> the same typed events OpenAI chunks become.

A tool_use content block is a call, its content block index is the call's index, and
input_json_delta fragments are its arguments, so the one accumulator merges both wire formats.
Deliberately ignored: thinking blocks, server tools (web search), citations, and usage.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..protocol import Finish, GatewayError, ModelEvent, TextDelta, ToolCallDelta
from ..sse import iter_sse
from .openai_chunks import error_summary

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
    """
    kind = payload.get("type")
    index = payload.get("index")
    if kind == "content_block_start":
        block = payload.get("content_block") or {}
        if block.get("type") == "tool_use":
            # Its "input" is always {} here: the arguments follow as input_json_delta fragments.
            return [ToolCallDelta(index=index, id=block.get("id"), name=block.get("name"))]
        if block.get("type") == "text" and block.get("text"):
            return [TextDelta(block["text"])]
        return []
    if kind == "content_block_delta":
        delta = payload.get("delta") or {}
        if delta.get("type") == "text_delta" and delta.get("text"):
            return [TextDelta(delta["text"])]
        if delta.get("type") == "input_json_delta":
            # The first fragment is often "": a tool without arguments sends nothing else.
            return [ToolCallDelta(index=index, args_delta=delta.get("partial_json") or None)]
        return []
    if kind == "message_delta":
        reason = (payload.get("delta") or {}).get("stop_reason")
        if reason is not None:
            return [Finish(STOP_REASONS.get(reason, reason))]
    return []


def events_from_lines(lines: Iterable[str], gateway: str) -> Iterator[ModelEvent]:
    """Read an Anthropic SSE body (lines as received) up to message_stop and yield its events.

    Raises GatewayError, naming `gateway`, for a data line that is not a JSON object, an
    `event: error` (overloaded, rate-limited, ...) sent mid-stream, and a body that ends without
    message_stop and without any stop reason.
    """
    finished = False
    for sse in iter_sse(lines):
        try:
            payload: Any = json.loads(sse.data)
        except json.JSONDecodeError:
            payload = sse.data  # kept as text: an error event may carry plain text
        # The JSON's "type" repeats the SSE event name; either one saying "error" is an error.
        if sse.event == "error" or (isinstance(payload, dict) and payload.get("type") == "error"):
            raise GatewayError(
                f"gateway {gateway} reported an error mid-stream: {error_summary(payload)}; "
                "try again, and if it repeats try another model"
            )
        if not isinstance(payload, dict):
            raise GatewayError(
                f"gateway {gateway} sent {error_summary(sse.data)!r} where an event object "
                "belongs; check that ANTHROPIC_BASE_URL points at the Anthropic Messages API"
            )
        if payload.get("type") == "message_stop":
            return
        for event in events_from_event(payload):
            finished = finished or isinstance(event, Finish)
            yield event
    if not finished:
        raise GatewayError(
            f"gateway {gateway} closed the stream before the answer was complete "
            "(no stop reason, no message_stop); try again"
        )
