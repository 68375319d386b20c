"""Play a recorded gateway session back offline: the same bytes through the same parser, every time.

A recording is JSON Lines, one object per call to `OpenAICompatModel.stream()`:
    {"request": {"gateway": URL, "model": NAME, "n_messages": N}, "status": 200, "lines": [...]}
where "lines" are the response body's lines as received, without line endings, the API key
replaced by "[redacted]" (a 429 that was retried is not kept, only the response that counted).
Deliberately not handled: matching a replayed response to the request; they are played in order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..protocol import GatewayError, ModelEvent
from .openai_chunks import events_from_lines
from .openai_compat import status_message

__all__ = ["ReplayModel", "read_recording"]


def read_recording(path: Path) -> list[dict[str, Any]]:
    """The recorded responses in order; a GatewayError naming the line if one is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise GatewayError(
            f"cannot read recording {path} ({error.strerror}); "
            "make one with OpenAICompatModel(..., record=path)"
        ) from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record.get("status"), int) or not isinstance(record["lines"], list):
                raise TypeError
        except (json.JSONDecodeError, AttributeError, KeyError, TypeError):
            raise GatewayError(
                f"recording {path} line {number} is not a recorded response; record it again"
            ) from None
        records.append(record)
    return records


# lines, gateway -> events: the parser of the wire format that was recorded
Parser = Callable[[Iterable[str], str], Iterator[ModelEvent]]


class ReplayModel:
    """A Model whose n-th `stream()` call replays the n-th recorded response.

    `parse` is the recorded wire format's parser: OpenAI's by default; pass
    `anthropic_events.events_from_lines` for a recording made by AnthropicModel.
    """

    def __init__(
        self,
        path: Path | str,
        parse: Parser = events_from_lines,
        *,
        key_variable: str = "OPENAI_API_KEY",
        url_advice: str = "OPENAI_BASE_URL (it usually ends in /v1)",
    ) -> None:
        self.path = Path(path)
        self.parse = parse
        # A recorded HTTP error replays with the advice of the client that recorded it.
        self.advice = {"key_variable": key_variable, "url_advice": url_advice}
        self.records = read_recording(self.path)
        self.played = 0
        self.label = f"replay of {self.path.name}"

    def __repr__(self) -> str:
        return f"ReplayModel({str(self.path)!r}, played={self.played})"

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        if self.played >= len(self.records):
            raise GatewayError(
                f"recording {self.path} holds {len(self.records)} responses and all were played; "
                "record the session again"
            )
        record = self.records[self.played]
        self.played += 1
        request = record.get("request", {})
        gateway = request.get("gateway", str(self.path))
        status, body = record["status"], "\n".join(record["lines"])
        if status >= 400:
            model = request.get("model", "")
            raise GatewayError(status_message(gateway, status, body, model, **self.advice))
        yield from self.parse(record["lines"], gateway)
