"""Parse OpenAI-style streams: one chat.completion.chunk -> typed events; an SSE body -> events.

Pure functions, no HTTP, so the offline scripted model and recordings share them with the live
client. Deliberately ignored: reasoning text, usage, logprobs, and every choice but the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..protocol import Finish, GatewayError, ModelEvent, TextDelta, ToolCallDelta
from ..sse import iter_sse

__all__ = ["error_summary", "events_from_chunk", "events_from_lines"]


def events_from_chunk(chunk: dict[str, Any]) -> list[ModelEvent]:
    """The events in one chunk, in wire order: text, then call fragments, then the finish.

    A chunk looks like {"choices": [{"index": 0, "delta": {"content": "Hi", "tool_calls": [...]},
    "finish_reason": null}], ...}. Chunks with "choices": [] (Azure's first chunk, the usage-only
    last chunk) and chunks for other choices (n=3 streams interleave them) yield nothing.
    """
    choice = next((c for c in chunk.get("choices") or [] if c.get("index", 0) == 0), None)
    if choice is None:
        return []
    delta = choice.get("delta") or {}
    events: list[ModelEvent] = []
    # "" and null both mean "no text in this chunk"; reasoning_content is not the answer.
    if isinstance(delta.get("content"), str) and delta["content"]:
        events.append(TextDelta(delta["content"]))
    for entry in delta.get("tool_calls") or []:
        function = entry.get("function") or {}
        events.append(
            ToolCallDelta(
                index=entry.get("index"),  # None when absent (Mistral): the accumulator copes
                id=entry.get("id"),
                name=function.get("name"),
                args_delta=_arguments_text(function.get("arguments")),
            )
        )
    if choice.get("finish_reason") is not None:
        events.append(Finish(choice["finish_reason"]))
    return events


def _arguments_text(arguments: Any) -> str | None:
    """Arguments are a JSON *string* fragment; a few gateways send the parsed object instead."""
    if arguments is None or isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def events_from_lines(lines: Iterable[str], gateway: str) -> Iterator[ModelEvent]:
    """Read an SSE body (lines as received) up to `data: [DONE]` and yield its events.

    Raises GatewayError, naming `gateway`, for a data line that is not JSON, an error sent
    mid-stream (`event: error`, or a payload with an "error" object), and a body that ends
    without [DONE] and without any finish reason.
    """
    finished = False
    for sse in iter_sse(lines):
        if sse.data == "[DONE]":
            return
        try:
            payload = json.loads(sse.data)
        except json.JSONDecodeError:
            raise GatewayError(
                f"gateway {gateway} sent a data line that is not JSON ({_excerpt(sse.data)}); "
                "check that OPENAI_BASE_URL points at an OpenAI-compatible API"
            ) from None
        if sse.event == "error" or (isinstance(payload, dict) and payload.get("error")):
            raise GatewayError(
                f"gateway {gateway} reported an error mid-stream: {error_summary(payload)}; "
                "try again, and if it repeats try another model"
            )
        if not isinstance(payload, dict):
            raise GatewayError(
                f"gateway {gateway} sent {_excerpt(sse.data)} where a chunk object belongs; "
                "check that OPENAI_BASE_URL points at an OpenAI-compatible API"
            )
        for event in events_from_chunk(payload):
            finished = finished or isinstance(event, Finish)
            yield event
    if not finished:
        raise GatewayError(
            f"gateway {gateway} closed the stream before the answer was complete "
            "(no finish reason, no [DONE]); try again"
        )


def error_summary(payload: Any) -> str:
    """One line from an error body: {"error": {"code", "message"}}, {"message"}, or plain text."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        message = error.get("message") or error.get("detail") or json.dumps(error)
        return _excerpt(f"{code}: {message}" if code else str(message))
    return _excerpt(error if isinstance(error, str) else json.dumps(error))


def _excerpt(text: str, limit: int = 200) -> str:
    """Whitespace collapsed to one line and cut to `limit` characters: messages stay one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
