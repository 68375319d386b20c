"""Redact a gateway's stream once, where it enters: its text before it is cut into lines, and each
string field a parser joins across chunks (under "delta") as one stream per field: a key split
anywhere is cut whole.

Everything after this layer (the parser, the recording, the loop, the terminal and the cards) sees
only redacted text. Deliberately not handled: which keys (safety.redaction.known_secrets says).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from course_agent.safety.redaction import StreamRedactor, key_cutter

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
class _Piece:
    """One string field of one line: `node[key]` is its value."""

    line: _Line
    node: Any
    key: Any

    @property
    def value(self) -> str:
        return self.node[self.key]

    def set(self, value: str) -> None:
        if value != self.node[self.key]:
            self.node[self.key], self.line.changed = value, True


class _Field:
    """The pieces of one field across lines, the last of them held while they could end in the
    start of a key. A line is rewritten only where a key is cut: otherwise it stays as received."""

    def __init__(self, cutter: Any) -> None:
        self.cutter = cutter  # safety.redaction.key_cutter's, compiled once for the stream
        self.open: list[_Piece] = []  # the pieces whose joined tail could start a key

    def add(self, piece: _Piece) -> None:
        """Add the field's next piece (one that may hold a key's spelling or its start)."""
        pieces = [*self.open, piece]
        joined = "".join(p.value for p in pieces)
        shown = self.cutter.cut(joined, open_end=True)
        if shown != joined:  # a key was cut: its pieces are emptied, the last holds the result
            for earlier in pieces[:-1]:
                earlier.set("")
            piece.set(shown)
            pieces, joined = [piece], shown
        held = self.cutter.held(joined)
        self.open = []
        end = len(joined)
        for candidate in reversed(pieces):  # the pieces that reach into the held tail
            if end <= len(joined) - held:
                break
            self.open.insert(0, candidate)
            end -= len(candidate.value)

    def finish(self) -> None:
        """The stream ended: what was held is no whole key, but may be a long prefix of one."""
        joined = "".join(p.value for p in self.open)
        shown = self.cutter.cut(joined)
        if shown != joined:
            for earlier in self.open[:-1]:
                earlier.set("")
            self.open[-1].set(shown)
        self.open = []


@dataclass
class _Fields:
    """A `_Field` per place in the JSON, and the lines held while any field is open."""

    cutter: Any
    fields: dict[Channel, _Field] = field(default_factory=dict)
    held: list[_Line] = field(default_factory=list)

    def add(self, line: _Line) -> list[_Line]:
        for channel, delta in _deltas(line.payload):
            self._walk(line, delta, channel)
        if not self.held and not any(one.open for one in self.fields.values()):
            return [line]  # the common case: nothing held, nothing to hold
        self.held.append(line)
        if any(one.open for one in self.fields.values()):
            return []  # a later piece of some field decides whether its tail is a key
        ready, self.held = self.held, []
        return ready

    def finish(self) -> list[_Line]:
        for one in self.fields.values():
            if one.open:
                one.finish()
        ready, self.held = self.held, []
        return ready

    def _walk(self, line: _Line, node: Any, channel: Channel) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, str):
                where = (*channel, key)
                one = self.fields.get(where)
                if one is None:
                    one = self.fields[where] = _Field(self.cutter)
                if one.open or self.cutter.touches(value):  # else nothing to cut or to hold
                    one.add(_Piece(line, node, key))
            elif isinstance(value, (dict, list)):
                self._walk(line, value, (*channel, _place(node, key, value)))


def _deltas(payload: Any) -> Iterator[tuple[Channel, dict[str, Any]]]:
    """The objects whose strings a parser joins across chunks, with where each sits: OpenAI's
    choices[].delta, Anthropic's content_block_delta's delta. Everything else in a chunk is read
    whole, never joined, so the text pass before this one has already cut any key it holds."""
    if not isinstance(payload, dict):
        return
    if isinstance(payload.get("delta"), dict):
        yield ("#", payload.get("index")), payload["delta"]
    choices = payload.get("choices")
    for number, choice in enumerate(choices if isinstance(choices, list) else ()):
        if isinstance(choice, dict) and isinstance(choice.get("delta"), dict):
            yield ("choices", _place(choices, number, choice)), choice["delta"]


def _place(node: Any, key: Any, value: Any) -> Any:
    """A list item with an integer "index" goes by it (calls interleave); anything else by key."""
    if isinstance(node, list) and isinstance(value, dict) and type(value.get("index")) is int:
        return ("#", value["index"])
    return key


def redacted_lines(lines: Iterable[str], secrets: Sequence[str]) -> Iterator[str]:
    """An event stream's lines, redacted: each string field under a chunk's "delta" is one
    stream per field, so a key whose halves come in two chunks (`"sk-te"`, then `"st-0123..."`)
    is cut whole; a line is held back while a field's tail could start a key. Other lines are
    redacted as they are (the text layer before this one has cut keys split across reads)."""
    if not any(secrets):
        yield from lines
        return
    cutter = key_cutter(secrets)
    fields = _Fields(cutter)
    for text in lines:
        line = _parsed(text)
        if line.payload is None:
            line = _Line(cutter.cut(text))
        for ready in fields.add(line):
            yield ready.shown()
    for ready in fields.finish():
        yield ready.shown()


def _parsed(text: str) -> _Line:
    if not text.startswith("data:"):
        return _Line(text)
    head = "data: " if text.startswith("data: ") else "data:"
    body = text[len(head) :]
    if '"delta"' not in body:  # (a JSON key is written as is: no escape spells "delta")
        return _Line(text)
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return _Line(text)
    return _Line(text, payload, head)
