"""Record a gateway session as it streams, and play it back offline: the same events, in order.

A recording (written by recording.py) is JSON Lines, one object per call to `HttpModel.stream()`:
    {"request": {"gateway": URL, "model": NAME, "n_messages": N}, "status": 200, "events": [...]}
where "events" are what the model's stream showed, keys already cut (safety/events.py): {"text"},
{"call": [index, id, name, arguments]}, {"finish"}, and last, if it failed, {"error": message}.
So a recording holds nothing that was not shown, and a replay has no key to print. Recordings of
the older form ("lines": the body's lines) replay through the wire's parser. A retried response is
not kept, only the one that counted; nor is a redirect. A replay reads at most MAX_RECORDING
characters, and one response records no more. Deliberately not handled: matching a replayed
response to the request (played in order).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from course_agent.protocol import Finish, GatewayError, ModelEvent, TextDelta, ToolCallDelta
from course_agent.providers.gateway import errors
from course_agent.providers.gateway.contract import BrokenJson, json_value
from course_agent.providers.gateway.limits import bounded
from course_agent.providers.gateway.sse import TooLong
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.recording import MAX_RECORDING, RecordedResponse
from course_agent.providers.wire import WireFormat
from course_agent.safety.events import encodable, redacted_events
from course_agent.safety.redaction import known_secrets, redact

__all__ = [
    "MAX_RECORDING",
    "RecordedResponse",
    "ReplayModel",
    "read_recording",
    "recorded_lines",
]


def _played(records: list[Any], where: str, secrets: Sequence[str]) -> Iterator[ModelEvent]:
    """The recorded events back as events; a recorded failure raises its message."""

    def cut(text: str | None) -> str | None:
        return None if text is None else redact(encodable(text), secrets)

    for record in records:
        if not isinstance(record, dict):
            raise GatewayError(f"{where} holds an event that is not an object; record it again")
        if isinstance(record.get("text"), str):
            yield TextDelta(cut(record["text"]) or "")
        elif isinstance(record.get("call"), list) and _call_shape(record["call"]):
            index, call_id, name, args = record["call"]
            yield ToolCallDelta(index, cut(call_id), cut(name), cut(args))
        elif "finish" in record and isinstance(record["finish"], (str, type(None))):
            yield Finish(record["finish"])
        elif isinstance(record.get("error"), str):
            raise GatewayError(cut(record["error"]))
        else:
            raise GatewayError(f"{where} holds an event of no known kind; record it again")


def _call_shape(call: list[Any]) -> bool:
    return (
        len(call) == 4
        and type(call[0]) is int
        and all(value is None or isinstance(value, str) for value in call[1:])
    )


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
        and (isinstance(record.get("events"), list) or _lines_shape(record.get("lines")))
        and isinstance(request, dict)
        and all(isinstance(request.get(name, ""), str) for name in ("gateway", "model"))
    ):
        raise GatewayError(f"{where} is not a recorded response; record it again")
    return record


def _lines_shape(lines: Any) -> bool:
    return isinstance(lines, list) and all(isinstance(text, str) for text in lines)


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
        if "events" in record:  # what was shown, played as it was (each piece cut again whole for
            # keys known now; the faces' channels cut them across pieces, app/channels.py)
            yield from bounded(_played(record["events"], where, known_secrets()), gateway)
            return
        status, lines = record["status"], record["lines"]
        secrets = known_secrets()  # a recording of the older form, or one made by hand
        if status >= 400:
            model = request.get("model", "")
            body = "\n".join(lines)
            raise GatewayError(errors.status(gateway, status, body, model, self.wire, secrets))
        try:
            parsed = bounded(self.wire.parse(lines, gateway), gateway)
            yield from redacted_events(parsed, secrets)
        except errors.BrokenStream as broken:
            raise GatewayError(redact(errors.broken(str(broken), self.wire), secrets)) from None
        except TooLong as too_long:
            raise GatewayError(errors.too_long_line(gateway, too_long.limit)) from None
        except GatewayError as error:
            raise GatewayError(redact(str(error), secrets)) from None
