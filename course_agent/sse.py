"""Server-sent events: turn the lines of a streamed HTTP body into (event, data) pairs.

Follows the WHATWG rules the gateways rely on: comments, multi-line data, CRLF, a leading BOM,
a final event without its blank line. Deliberately not handled: `id:`/`retry:` reconnection, JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["ServerSentEvent", "iter_sse"]


@dataclass(frozen=True)
class ServerSentEvent:
    event: str  # "message" unless an `event:` line named it ("error", "content_block_delta", ...)
    data: str  # the `data:` lines of one event joined with "\n"


def iter_sse(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Yield one event per blank-line-terminated block of `field: value` lines.

    `lines` may still carry their line endings (\\n, \\r\\n or \\r): they are stripped here.
    """
    event, data = "", []
    for number, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        if number == 0:
            line = line.removeprefix("\ufeff")  # a byte-order mark would hide the first field name
        if not line:
            # A blank line dispatches; a block with no data (only `event:` or comments) is dropped.
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment: keep-alives such as ": OPENROUTER PROCESSING"
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")  # exactly one space after the colon is not part of it
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        # id, retry and unknown fields are ignored, as the standard says.
    if data:  # the body ended without the final blank line: still a complete event
        yield ServerSentEvent(event or "message", "\n".join(data))
