"""The caps on what a gateway may make this process hold, and the readers that enforce them.

A compressed body is unpacked step by step, never more than UNPACK_STEP at once, so a gzip bomb
is cut on its unpacked size; an error body is read to MAX_ERROR_BODY; one turn's text and one
call's arguments have caps of their own (sse.MAX_LINE caps one line). Deliberately not handled:
brotli and zstd (this client does not ask for them), raw deflate without its zlib header.
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Iterable, Iterator, Sequence

from ..protocol import GatewayError, ModelEvent, TextDelta, ToolCallDelta
from ..redaction import REDACTED, encoded_forms
from . import errors

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_ARGUMENTS",
    "MAX_ERROR_BODY",
    "MAX_TEXT",
    "UNPACK_STEP",
    "bounded",
    "unpacked",
    "without_partial_secret",
]

# Bytes of an error body (unpacked) read for its message: error JSON is a few hundred bytes.
MAX_ERROR_BODY = 64 << 10
# Characters of text in one turn: above any model's output limit (128k tokens, about 512 KB).
MAX_TEXT = 1 << 20
# Characters of arguments for one call: the tools' own arguments are capped at a few thousand;
# a tool that writes files would take whole files, and 1 MB is a 25,000-line file.
MAX_ARGUMENTS = 1 << 20
UNPACK_STEP = 64 << 10  # bytes one step of unpacking may make
ACCEPT_ENCODING = "gzip, deflate"  # what the client asks for, and so all it will unpack


def unpacked(
    chunks: Iterable[bytes], encoding: str, gateway: str, limit: int | None = None
) -> Iterator[bytes]:
    """The body's bytes as sent (`chunks`) -> its bytes unpacked per Content-Encoding, at most
    UNPACK_STEP at a time, and no more than `limit` in all (the rest is never read)."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        unpack = None
    elif coding in ("gzip", "x-gzip", "deflate"):
        unpack = zlib.decompressobj(32 + zlib.MAX_WBITS)  # 32: a gzip or a zlib header
    else:
        raise GatewayError(errors.unknown_encoding(gateway, encoding))
    left = limit
    for chunk in chunks:
        while chunk:
            if unpack is None:
                piece, chunk = chunk, b""
            else:
                try:
                    piece = unpack.decompress(chunk, UNPACK_STEP)
                except zlib.error as error:
                    raise GatewayError(errors.cannot_unpack(gateway, coding, str(error))) from None
                chunk = unpack.unconsumed_tail
            if left is not None:
                piece, left = piece[:left], left - len(piece)
            if piece:
                yield piece
            if left is not None and left <= 0:
                return


def without_partial_secret(text: str, secrets: Sequence[str]) -> str:
    """`text`, cut off somewhere, with a trailing start of a secret (in any form) replaced by
    [redacted]: redaction only knows whole keys, and a cut can leave half of one at the end."""
    for form in sorted({f for s in secrets for f in encoded_forms(s)}, key=len, reverse=True):
        for length in range(min(len(form) - 1, len(text)), 0, -1):
            if text.endswith(form[:length]):
                return text[:-length] + REDACTED
    return text


def bounded(events: Iterable[ModelEvent], gateway: str) -> Iterator[ModelEvent]:
    """`events`, stopped with a GatewayError when one turn's text passes MAX_TEXT or one call's
    arguments pass MAX_ARGUMENTS. A call is told apart as the accumulator does: by its index, else
    by its id, else it continues the last one."""
    text = 0
    arguments: dict[Hashable, int] = {}  # call -> characters of arguments so far
    last: Hashable = None
    for event in events:
        if isinstance(event, TextDelta):
            text += len(event.text)
            if text > MAX_TEXT:
                raise GatewayError(errors.too_much_text(gateway, MAX_TEXT))
        elif isinstance(event, ToolCallDelta):
            call = event.index if event.index is not None else event.id or last
            last = call
            if event.args_delta:
                arguments[call] = arguments.get(call, 0) + len(event.args_delta)
                if arguments[call] > MAX_ARGUMENTS:
                    raise GatewayError(errors.too_many_arguments(gateway, MAX_ARGUMENTS))
        yield event
