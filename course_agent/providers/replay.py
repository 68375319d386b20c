"""Record a gateway session as it streams, and play it back offline: the same bytes, same parser.

A recording is JSON Lines, one object per call to `HttpModel.stream()`:
    {"request": {"gateway": URL, "model": NAME, "n_messages": N}, "status": 200, "lines": [...]}
where "lines" are the response body's lines as received, without line endings, every form of the
API key replaced by "[redacted]". A retried response is not kept, only the one that counted; nor is
a redirect. Deliberately not handled: matching a replayed response to the request (played in order).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from ..protocol import GatewayError, ModelEvent
from ..redaction import redact
from ..sse import TooLong
from . import errors
from .limits import bounded
from .openai_wire import OPENAI
from .wire import WireFormat

__all__ = ["RecordedResponse", "ReplayModel", "read_recording"]


class RecordedResponse:
    """`with RecordedResponse(target, request, status, secrets) as record:` then `record.add(line)`
    for each body line: each line is written as it is read, redacted, so a long stream is never
    held in memory; leaving the block closes the JSON object, even when the stream failed."""

    def __init__(
        self,
        target: Path | str | TextIO,
        request: dict[str, Any],
        status: int,
        secrets: Sequence[str],
    ) -> None:
        self.target, self.secrets = target, secrets
        self.head = json.dumps({"request": request, "status": status})[:-1] + ', "lines": ['
        self.file: TextIO | None = None
        self.count = 0

    def __enter__(self) -> RecordedResponse:
        if isinstance(self.target, (str, Path)):
            try:
                self.file = Path(self.target).open("a", encoding="utf-8")
            except OSError as error:  # stream() promises GatewayError and nothing else
                reason = error.strerror or str(error)
                raise GatewayError(errors.cannot_record(self.target, reason)) from None
        self.sink.write(self.head)
        return self

    @property
    def sink(self) -> TextIO:
        return self.file if self.file is not None else self.target  # type: ignore[return-value]

    def add(self, line: str) -> None:
        text = json.dumps(redact(line, self.secrets), ensure_ascii=False)
        self.sink.write(f", {text}" if self.count else text)
        self.count += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.sink.write("]}\n")
        self.sink.flush()
        if self.file is not None:
            self.file.close()


def read_recording(path: Path) -> list[dict[str, Any]]:
    """The recorded responses in order; a GatewayError naming the line if one is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise GatewayError(
            f"cannot read recording {path} ({error.strerror}); "
            "make one with --record FILE (or HttpModel(..., record=path))"
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


class ReplayModel:
    """A Model whose n-th `stream()` call replays the n-th recorded response.

    `wire` is the recorded wire format: its parser reads the lines, and a recorded HTTP error
    replays with the advice of the client that recorded it. OpenAI's by default.
    """

    def __init__(self, path: Path | str, wire: WireFormat = OPENAI) -> None:
        self.path = Path(path)
        self.wire = wire
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
        status, lines = record["status"], record["lines"]
        if status >= 400:
            model = request.get("model", "")
            raise GatewayError(errors.status(gateway, status, "\n".join(lines), model, self.wire))
        try:
            yield from bounded(self.wire.parse(lines, gateway, ()), gateway)
        except errors.BrokenStream as broken:
            raise GatewayError(errors.broken(str(broken), self.wire)) from None
        except TooLong as too_long:
            raise GatewayError(errors.too_long_line(gateway, too_long.limit)) from None
