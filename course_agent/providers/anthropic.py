"""A Model that streams from Anthropic's Messages API (`POST /v1/messages`) over httpx.

Only the request and the parser differ from the OpenAI-compatible client; its retries, timeouts,
error lines, key redaction and recording are reused as they are. Deliberately not handled: extended
thinking, prompt caching, and retrying 529 "overloaded" (it is reported, like any 5xx).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import httpx

from ..protocol import ModelEvent
from .anthropic_events import events_from_lines
from .anthropic_messages import translate_messages, translate_tools
from .openai_compat import DEFAULT_IDLE_TIMEOUT, OpenAICompatModel

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicModel"]

ANTHROPIC_VERSION = "2023-06-01"  # the API version header: the wire format this parser knows
DEFAULT_MAX_TOKENS = 4096  # required by the API; ample for one turn of text and tool calls


class AnthropicModel(OpenAICompatModel):
    """`stream()` POSTs the transcript, translated to Anthropic's shape, with `stream: true`.

    The loop's transcript stays OpenAI-shaped: it is translated on every request (see
    anthropic_messages.py), and the answer comes back as the same TextDelta, ToolCallDelta and
    Finish events, so one accumulator merges both formats. `base_url` is the API root, without
    /v1 (https://api.anthropic.com). The other options are OpenAICompatModel's.
    """

    key_variable = "ANTHROPIC_API_KEY"
    url_variable = "ANTHROPIC_BASE_URL"
    url_advice = "ANTHROPIC_BASE_URL (the API root, without /v1)"
    url_example = "https://api.anthropic.com"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        record: Path | str | TextIO | None = None,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            model,
            timeout=timeout,
            transport=transport,
            max_retries=max_retries,
            idle_timeout=idle_timeout,
            record=record,
        )
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"AnthropicModel(base_url={self.base_url!r}, model={self.model!r})"

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, Any]]:
        system, turns = translate_messages(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": turns,
            "stream": True,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = translate_tools(tools)
        return f"{self.base_url}/v1/messages", body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:  # without one the API answers 401, which names ANTHROPIC_API_KEY
            headers["x-api-key"] = self._api_key
        return headers

    def _parse(self, lines: Iterable[str]) -> Iterator[ModelEvent]:
        return events_from_lines(lines, self.base_url)
