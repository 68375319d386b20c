"""What one gateway API is, apart from HTTP: its request, its headers, its parser and its settings.

`HttpModel` is handed one, as an httpx Client is handed a transport: openai_wire.py and
anthropic_wire.py each define one. Deliberately absent: anything about sockets, retries or time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from course_agent.protocol import ModelEvent

__all__ = ["BodyBuilder", "Parser", "WireFormat"]

# (model, messages, tools) -> the JSON body of one streamed request; messages in the OpenAI shape
BodyBuilder = Callable[[str, list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]
# (the body's lines, already redacted; the gateway's URL for messages) -> events
Parser = Callable[[Iterable[str], str], Iterator[ModelEvent]]


@dataclass(frozen=True, repr=False)
class WireFormat:
    name: str  # "openai", "anthropic": what --provider says and the model's repr shows
    path: str  # appended to the base URL: "/chat/completions"
    body: BodyBuilder
    headers: Callable[[str], dict[str, str]]  # the API key -> the headers that carry it
    parse: Parser
    # The settings error messages point people at, and what they default to.
    key_variable: str  # "OPENAI_API_KEY"
    url_variable: str  # "OPENAI_BASE_URL"
    url_hint: str  # "it usually ends in /v1"
    api: str  # "an OpenAI-compatible API"
    default_url: str
    default_model: str

    @property
    def url_advice(self) -> str:
        """The URL setting with its hint: "OPENAI_BASE_URL (it usually ends in /v1)"."""
        return f"{self.url_variable} ({self.url_hint})"

    def __repr__(self) -> str:
        return f"WireFormat({self.name!r})"
