"""Server-sent events: cut a streamed HTTP body into lines, and lines into (event, data) pairs.

Follows the WHATWG rules the gateways rely on: comments, multi-line data, CRLF, a leading BOM,
a final event without its blank line. A line, and an event's data, longer than MAX_LINE raise
TooLong, so a body that never ends a line cannot fill memory. Deliberately not handled:
`id:`/`retry:` reconnection, JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from course_agent.safety.pieces import Pieces

__all__ = ["MAX_LINE", "ServerSentEvent", "TooLong", "iter_sse", "split_lines"]

_LINE_END = re.compile(r"\r\n|\r|\n")  # the only line endings of an event stream
# Characters in one line, and in the data of one event. One chunk may carry a whole call's
# arguments (argument_caps.MAX_ARGUMENTS, 1 MiB), JSON-escaped: twice that leaves room for the
# escapes.
MAX_LINE = 2 << 20


class TooLong(ValueError):
    """A line, or an event's data, went past the cap before it ended."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a line or event longer than {limit} characters")
        self.limit = limit


@dataclass(frozen=True)
class ServerSentEvent:
    event: str  # "message" unless an `event:` line named it ("error", "content_block_delta", ...)
    data: str  # the `data:` lines of one event joined with "\n"


def split_lines(chunks: Iterable[str], max_line: int = MAX_LINE) -> Iterator[str]:
    """Cut decoded text, arriving in pieces, into lines at \\r\\n, \\r or \\n; without the endings.

    Not str.splitlines (nor httpx's iter_lines, built on it): those also cut at U+2028, U+2029
    and U+0085, which JSON allows raw inside a string: a data line holding one would come apart.
    Raises TooLong as soon as a line passes `max_line` characters, ended or not.
    """
    # The line not yet ended, as Pieces: in a plain list, a gateway writing 2 bytes at a time
    # would make each piece cost 60 bytes (59 MB for a line at the 2 MB cap).
    pending = Pieces()
    carried_cr = False  # a piece ended in \r: the next one may start with the \n of \r\n
    for chunk in chunks:
        if carried_cr:
            chunk = "\r" + chunk
        carried_cr = chunk.endswith("\r")
        *ended, rest = _LINE_END.split(chunk.removesuffix("\r") if carried_cr else chunk)
        if ended:
            if len(pending) + len(ended[0]) > max_line or max(map(len, ended)) > max_line:
                raise TooLong(max_line)
            pending.add(ended[0])
            ended[0] = pending.text()
            pending = Pieces()
            yield from ended
        pending.add(rest)
        if len(pending) > max_line:
            raise TooLong(max_line)
    if carried_cr or len(pending):  # the last line, ended by a lone \r or by nothing at all
        yield pending.text()


def iter_sse(lines: Iterable[str], max_data: int = MAX_LINE) -> Iterator[ServerSentEvent]:
    """Yield one event per blank-line-terminated block of `field: value` lines.

    `lines` may still carry their line endings (\\n, \\r\\n or \\r): they are stripped here.
    Raises TooLong when one event's data lines add up to more than `max_data` characters.
    """
    event, data, size = "", [], 0
    for number, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        if number == 0:
            line = line.removeprefix("\ufeff")  # a byte-order mark would hide the first field name
        if not line:
            # A blank line dispatches; a block with no data (only `event:` or comments) is dropped.
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue  # a comment: keep-alives such as ": OPENROUTER PROCESSING"
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")  # exactly one space after the colon is not part of it
        if name == "data":
            size += len(value) + 1
            if size > max_data:
                raise TooLong(max_data)
            data.append(value)
        elif name == "event":
            event = value
        # id, retry and unknown fields are ignored, as the standard says.
    if data:  # the body ended without the final blank line: still a complete event
        yield ServerSentEvent(event or "message", "\n".join(data))
