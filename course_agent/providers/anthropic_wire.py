"""Anthropic's Messages API wire format (`POST /v1/messages`), for HttpModel.

The loop's transcript stays OpenAI-shaped and is translated on every request
(anthropic_messages.py); the answer comes back as the same TextDelta, ToolCallDelta and Finish
events (anthropic_events.py), so one accumulator merges both formats. Deliberately not handled:
extended thinking, prompt caching.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from course_agent.providers.anthropic_events import events_from_lines
from course_agent.providers.anthropic_messages import translate_messages, translate_tools
from course_agent.providers.defaults import DEFAULT_ANTHROPIC_MODEL
from course_agent.providers.wire import WireFormat

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_VERSION",
    "DEFAULT_MAX_TOKENS",
    "anthropic_wire",
    "request_body",
    "request_headers",
]

ANTHROPIC_VERSION = "2023-06-01"  # the API version header: the wire format this parser knows
DEFAULT_MAX_TOKENS = 4096  # required by the API; ample for one turn of text and tool calls


def request_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> dict[str, Any]:
    """The JSON body: system messages moved to `system`, calls and results made blocks."""
    system, turns = translate_messages(messages)
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": turns,
        "stream": True,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = translate_tools(tools)
    return body


def request_headers(key: str) -> dict[str, str]:
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key:  # without one the API answers 401, which names ANTHROPIC_API_KEY
        headers["x-api-key"] = key
    return headers


def anthropic_wire(max_tokens: int = DEFAULT_MAX_TOKENS) -> WireFormat:
    """The format with another `max_tokens` in every request."""
    return WireFormat(
        name="anthropic",
        path="/v1/messages",  # the base URL is the API root, without /v1
        body=partial(request_body, max_tokens=max_tokens),
        headers=request_headers,
        parse=events_from_lines,
        key_variable="ANTHROPIC_API_KEY",
        url_variable="ANTHROPIC_BASE_URL",
        url_hint="the API root, without /v1",
        api="the Anthropic Messages API",
        default_url="https://api.anthropic.com",
        default_model=DEFAULT_ANTHROPIC_MODEL,
    )


ANTHROPIC = anthropic_wire()
