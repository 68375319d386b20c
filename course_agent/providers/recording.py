"""Record what a model's stream showed, event by event as it leaves, one JSON line per response.

{"request": {...}, "status": 200, "events": [{"text"}, {"call": [index, id, name, arguments]},
{"finish"}, {"error"}]}: the events as safety/events.py let them out, keys cut, so a recording
holds nothing that was not shown (replay.py plays it back). Deliberately not handled: the body's
bytes (never kept), a retried response or a redirect (only the response that counted).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from course_agent.protocol import GatewayError, ModelEvent, TextDelta, ToolCallDelta
from course_agent.providers.gateway import errors

__all__ = ["MAX_RECORDING", "ROOM_TO_CLOSE", "RecordedResponse"]

# Characters of a recording a replay reads, and of one response a recording keeps: a session's
# recording is tens of KB, and an answer of 100,000 tokens, one chunk of about 150 characters
# each, is 15 MB. Kept as text until played, a 16 MB recording of 31-character responses took
# 46 MB of memory (parsed all at once: 225 MB).
MAX_RECORDING = 16 << 20
# Characters kept free at the end of one response for its final error and the closing brackets:
# a failure's message is one line of a few hundred characters.
ROOM_TO_CLOSE = 1 << 10


class RecordedResponse:
    """`with RecordedResponse(target, request) as record:`, then `record.status = code` once the
    response that counts has its status, `record.add(event)` for each event as shown, and
    `record.fail(message)` if it failed. Each event is written as it comes, so a long stream is
    never held in memory; leaving the block closes the JSON object (a call that never got a
    response writes nothing)."""

    def __init__(self, target: Path | str | TextIO, request: dict[str, Any]) -> None:
        self.target = target
        self.request = request
        self.gateway = request.get("gateway", "")
        self.status: int | None = None
        self.file: TextIO | None = None
        self.count = 0
        self.size = 0  # characters written so far

    def __enter__(self) -> RecordedResponse:
        if isinstance(self.target, (str, Path)):
            try:
                self.file = Path(self.target).open("a", encoding="utf-8")
            except OSError as error:  # stream() promises GatewayError and nothing else
                reason = error.strerror or str(error)
                raise GatewayError(errors.cannot_record(self.target, reason)) from None
        return self

    @property
    def sink(self) -> TextIO:
        return self.file if self.file is not None else self.target  # type: ignore[return-value]

    def add(self, event: ModelEvent) -> None:
        """Write one more event; a GatewayError instead once the response would pass the cap."""
        self._write(_event_record(event), MAX_RECORDING - ROOM_TO_CLOSE)

    def fail(self, message: str) -> None:
        """The stream ended in `message` (already cut of keys): the response's last event."""
        if self.status is None:
            return  # no response came: there is nothing to replay
        self._write({"error": message}, MAX_RECORDING - 3)

    def _write(self, value: dict[str, Any], cap: int) -> None:
        text = json.dumps(value, ensure_ascii=False)
        if self.count == 0:
            head = {"request": self.request, "status": self.status or 0}
            text = json.dumps(head)[:-1] + ', "events": [' + text
        self.size += len(text) + 2
        if self.size > cap:
            raise GatewayError(errors.too_long_recording(self.gateway, MAX_RECORDING))
        self.sink.write(f", {text}" if self.count else text)
        self.count += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.count == 0 and self.status is not None:
            head = {"request": self.request, "status": self.status, "events": []}
            self.sink.write(json.dumps(head)[:-2])
            self.count = 1
        if self.count:
            self.sink.write("]}\n")
            self.sink.flush()
        if self.file is not None:
            self.file.close()


def _event_record(event: ModelEvent) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"text": event.text}
    if isinstance(event, ToolCallDelta):
        return {"call": [event.index, event.id, event.name, event.args_delta]}
    return {"finish": event.reason}
