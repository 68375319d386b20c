"""Redact a gateway's stream once, where it enters: its text before it is cut into lines, and each
JSON string field of its data lines as one stream per field, so a key split anywhere is cut whole.

Everything after this layer (the parser, the recording, the loop, the terminal and the cards) sees
only redacted text. Deliberately not handled: which keys (safety.redaction.known_secrets says).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from course_agent.safety.redaction import StreamRedactor, redact

__all__ = ["redacted_lines", "redacted_text"]

# Where a string sits in a chunk, with an object's "index" standing for its place in a list:
# ("choices", ("#", 0), "delta", "tool_calls", ("#", 1), "function", "arguments") is call 1's.
Channel = tuple[Any, ...]


def redacted_text(pieces: Iterable[str], secrets: Sequence[str]) -> Iterator[str]:
    """Decoded text in pieces, redacted: a key split between two network reads is cut whole."""
    stream = StreamRedactor(secrets)
    for piece in pieces:
        if shown := stream.feed(piece):
            yield shown
    if rest := stream.flush():
        yield rest


@dataclass
class _Line:
    """One line on its way: as received, or (`payload`) a data line's JSON being redacted."""

    text: str
    payload: Any = None
    head: str = ""  # "data: " before the JSON
    changed: bool = False

    def shown(self) -> str:
        if not self.changed:
            return self.text  # the gateway's own bytes when nothing was cut
        return self.head + json.dumps(self.payload, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _Fields:
    """A stream per JSON field, and the lines held while some field holds a possible key start."""

    secrets: Sequence[str]
    streams: dict[Channel, StreamRedactor] = field(default_factory=dict)
    last: dict[Channel, tuple[_Line, Any, Any]] = field(default_factory=dict)  # line, node, key
    held: list[_Line] = field(default_factory=list)

    def add(self, line: _Line) -> list[_Line]:
        if line.payload is not None:
            self._walk(line, line.payload, ())
        self.held.append(line)
        if any(stream.holding for stream in self.streams.values()):
            return []  # a later piece of some field decides whether its tail is a key
        ready, self.held = self.held, []
        return ready

    def finish(self) -> list[_Line]:
        """Give each field's held tail back to the line it came from: it was no key."""
        for channel, stream in self.streams.items():
            if stream.holding and channel in self.last:
                line, node, key = self.last[channel]
                node[key] += stream.flush()
                line.changed = True
        ready, self.held = self.held, []
        return ready

    def _walk(self, line: _Line, node: Any, channel: Channel) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, str):
                where = (*channel, key)
                stream = self.streams.setdefault(where, StreamRedactor(self.secrets))
                shown = stream.feed(value)
                if shown != value:
                    node[key], line.changed = shown, True
                self.last[where] = (line, node, key)
            elif isinstance(value, (dict, list)):
                self._walk(line, value, (*channel, _place(node, key, value)))


def _place(node: Any, key: Any, value: Any) -> Any:
    """A list item with an integer "index" goes by it (calls interleave); anything else by key."""
    if isinstance(node, list) and isinstance(value, dict) and type(value.get("index")) is int:
        return ("#", value["index"])
    return key


def redacted_lines(lines: Iterable[str], secrets: Sequence[str]) -> Iterator[str]:
    """An event stream's lines, redacted: each data line's JSON string fields one stream per
    field, so a key whose halves come in two chunks (`"sk-te"`, then `"st-0123..."`) is cut
    whole; a line is held back while a field's tail could start a key. Other lines are redacted
    as they are (the text layer before this one has cut keys split across network reads)."""
    if not any(secrets):
        yield from lines
        return
    fields = _Fields(secrets)
    for text in lines:
        line = _parsed(text)
        if line.payload is None:
            line = _Line(redact(text, secrets))
        for ready in fields.add(line):
            yield ready.shown()
    for ready in fields.finish():
        yield ready.shown()


def _parsed(text: str) -> _Line:
    if not text.startswith("data:"):
        return _Line(text)
    head = "data: " if text.startswith("data: ") else "data:"
    body = text[len(head) :]
    if not body.lstrip().startswith(("{", "[")):
        return _Line(text)
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return _Line(text)
    return _Line(text, payload, head)
