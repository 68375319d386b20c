"""The OpenAI Chat Completions wire format, as any OpenAI-compatible gateway speaks it.

`OPENAI` is handed to HttpModel: a streamed `/chat/completions` request, a Bearer key, and the
chunk parser of openai_chunks.py. Deliberately not handled: Azure's `api-key` header, usage.
"""

from __future__ import annotations

from typing import Any

from course_agent.providers.defaults import DEFAULT_MODEL
from course_agent.providers.openai_chunks import events_from_lines
from course_agent.providers.wire import WireFormat

__all__ = ["OPENAI", "request_body", "request_headers"]


def request_body(
    model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    """The JSON body: the transcript is already in this format's shape."""
    # No stream_options: usage is not used here, and some compatible gateways reject it.
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
    if tools:  # some gateways reject "tools": []
        body["tools"] = tools
    return body


def request_headers(key: str) -> dict[str, str]:
    # Local gateways (Ollama, vLLM) may need no key: then no header at all.
    return {"Authorization": f"Bearer {key}"} if key else {}


OPENAI = WireFormat(
    name="openai",
    path="/chat/completions",
    body=request_body,
    headers=request_headers,
    parse=events_from_lines,
    key_variable="OPENAI_API_KEY",
    url_variable="OPENAI_BASE_URL",
    url_hint="it usually ends in /v1",
    api="an OpenAI-compatible API",
    default_url="https://api.openai.com/v1",
    default_model=DEFAULT_MODEL,
)
