"""Record a gateway session as it streams, and play it back offline: the same bytes, same parser.

A recording is JSON Lines, one object per call to `HttpModel.stream()`:
    {"request": {"gateway": URL, "model": NAME, "n_messages": N}, "status": 200, "lines": [...]}
where "lines" are the response body's lines as received, without line endings, every form of the
API key replaced by "[redacted]". A retried response is not kept, only the one that counted; nor is
a redirect. A replay reads at most MAX_RECORDING characters, and one response records no more.
Deliberately not handled: matching a replayed response to the request (played in order).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from course_agent.protocol import GatewayError, ModelEvent
from course_agent.providers.gateway import errors
from course_agent.providers.gateway.contract import BrokenJson, json_value
from course_agent.providers.gateway.limits import bounded
from course_agent.providers.gateway.redacting import redacted_lines
from course_agent.providers.gateway.sse import TooLong
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.wire import WireFormat
from course_agent.safety.redaction import known_secrets

__all__ = ["MAX_RECORDING", "RecordedResponse", "ReplayModel", "read_recording", "recorded_lines"]

# Characters of a recording a replay reads, and of one response a recording keeps: a session's
# recording is tens of KB, and an answer of 100,000 tokens, one chunk of about 150 characters
# each, is 15 MB. Kept as text until played, a 16 MB recording of 31-character responses took
# 46 MB of memory (parsed all at once: 225 MB).
MAX_RECORDING = 16 << 20


class RecordedResponse:
    """`with RecordedResponse(target, request, status) as record:` then `record.add(line)` for each
    body line, already redacted (gateway/redacting.py): each line is written as it is read, so a
    long stream is never held in memory; leaving the block closes the JSON object, even when the
    stream failed."""

    def __init__(self, target: Path | str | TextIO, request: dict[str, Any], status: int) -> None:
        self.target = target
        self.gateway = request.get("gateway", "")
        self.head = json.dumps({"request": request, "status": status})[:-1] + ', "lines": ['
        self.file: TextIO | None = None
        self.count = 0
        self.size = len(self.head)  # characters written so far

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
        """Write one more line; a GatewayError instead once the response would pass the cap."""
        text = json.dumps(line, ensure_ascii=False)
        self.size += len(text) + 2
        if self.size > MAX_RECORDING - 3:  # room for the closing `]}\n`
            raise GatewayError(errors.too_long_recording(self.gateway, MAX_RECORDING))
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
    """The recorded responses in order; a GatewayError naming the line if one is malformed, or if
    the file holds more than MAX_RECORDING characters (never read past them) or is not UTF-8."""
    return [_recorded_response(line, f"recording {path}") for line in recorded_lines(path)]


def recorded_lines(path: Path) -> list[str]:
    """The line of each response, checked as read_recording checks them, then kept as text: each
    is parsed again when played (see MAX_RECORDING for what parsing them all at once cost)."""
    lines: list[str] = []
    left, number = MAX_RECORDING, 0
    try:
        with path.open(encoding="utf-8") as file:
            while line := file.readline(left + 1):  # a line of a gigabyte is read to the cap
                number += 1
                left -= len(line)
                if left < 0:
                    raise GatewayError(
                        f"recording {path} holds more than {errors.size(MAX_RECORDING)}, the "
                        "most a replay reads; record a shorter session"
                    )
                if line.strip():
                    _recorded_response(line, f"recording {path} line {number}")
                    lines.append(line)
    except OSError as error:
        raise GatewayError(
            f"cannot read recording {path} ({error.strerror}); "
            "make one with --record FILE (or HttpModel(..., record=path))"
        ) from None
    except UnicodeDecodeError:
        raise GatewayError(
            f"recording {path} is not UTF-8 text (line {number + 1}); record it again"
        ) from None
    return lines


def _recorded_response(line: str, where: str) -> dict[str, Any]:
    """One line of a recording, checked to be of the shape stream() plays, field by field."""
    try:
        record = json_value(line)
    except BrokenJson:
        record = None
    request = record.get("request", {}) if isinstance(record, dict) else None
    if not (
        isinstance(record, dict)
        and type(record.get("status")) is int
        and isinstance(record.get("lines"), list)
        and all(isinstance(text, str) for text in record["lines"])
        and isinstance(request, dict)
        and all(isinstance(request.get(name, ""), str) for name in ("gateway", "model"))
    ):
        raise GatewayError(f"{where} is not a recorded response; record it again")
    return record


class ReplayModel:
    """A Model whose n-th `stream()` call replays the n-th recorded response.

    `wire` is the recorded wire format: its parser reads the lines, and a recorded HTTP error
    replays with the advice of the client that recorded it. OpenAI's by default.
    """

    def __init__(self, path: Path | str, wire: WireFormat = OPENAI) -> None:
        self.path = Path(path)
        self.wire = wire
        self.records = recorded_lines(self.path)
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
        where = f"recording {self.path} response {self.played + 1}"
        record = _recorded_response(self.records[self.played], where)
        self.played += 1
        request = record.get("request", {})
        gateway = request.get("gateway", str(self.path))
        status, lines = record["status"], record["lines"]
        if status >= 400:
            model = request.get("model", "")
            raise GatewayError(errors.status(gateway, status, "\n".join(lines), model, self.wire))
        try:
            # Redacted again as it is read: a recording made before a key was known, or edited.
            secrets = known_secrets()
            yield from bounded(self.wire.parse(redacted_lines(lines, secrets), gateway), gateway)
        except errors.BrokenStream as broken:
            raise GatewayError(errors.broken(str(broken), self.wire)) from None
        except TooLong as too_long:
            raise GatewayError(errors.too_long_line(gateway, too_long.limit)) from None
