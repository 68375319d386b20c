"""The caps on what a gateway may make this process hold, and the readers that enforce them.

A compressed body is unpacked step by step, never more than UNPACK_STEP at once, so a gzip bomb
is cut on its unpacked size (member after member; bytes that are no member are refused); an
error body is read to MAX_ERROR_BODY; one turn's text, one call's arguments, the number of calls
and all that one turn holds have caps of their own (sse.MAX_LINE caps one line). Deliberately not
handled: brotli and zstd (this client does not ask for them), raw deflate without its header.
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Iterable, Iterator, Sequence

from course_agent.argument_caps import MAX_ARGUMENTS
from course_agent.protocol import GatewayError, ModelEvent, TextDelta, ToolCallDelta
from course_agent.providers.gateway import errors
from course_agent.safety.redaction import REDACTED, key_cutter

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_CALLS_HELD",
    "MAX_ERROR_BODY",
    "MAX_TEXT",
    "MAX_TURN",
    "UNPACK_STEP",
    "bounded",
    "unpacked",
    "without_partial_secret",
]

# Bytes of an error body (unpacked) read for its message: error JSON is a few hundred bytes.
MAX_ERROR_BODY = 64 << 10
# Characters of text in one turn: above any model's output limit (128k tokens, about 512 KB).
MAX_TEXT = 1 << 20
# Calls one turn may open: models make 1 to 5, and app.guard.MAX_CALLS (32) run; each is held until
# the turn ends and goes back in every later request (with its result, about 300 bytes).
MAX_CALLS_HELD = 1024
# Characters one turn holds in all: its text and each call's id, name and arguments. Room for a
# turn of text at MAX_TEXT beside three calls at argument_caps.MAX_ARGUMENTS.
MAX_TURN = 4 << 20
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
                if unpack.eof:
                    # What follows the end is the next gzip member (RFC 1952), or is refused by
                    # a fresh decompressor: the old one would keep it all in `unused_data`.
                    chunk = unpack.unused_data + chunk
                    unpack = zlib.decompressobj(32 + zlib.MAX_WBITS)
            if left is not None:
                piece, left = piece[:left], left - len(piece)
            if piece:
                yield piece
            if left is not None and left <= 0:
                return


def without_partial_secret(text: str, secrets: Sequence[str]) -> str:
    """`text`, cut off somewhere, with a trailing start of a secret (in any spelling) replaced by
    [redacted]: redaction only knows whole keys, and a cut can leave half of one at the end."""
    keep = key_cutter(secrets).held(text)
    return text[: len(text) - keep] + REDACTED if keep else text


def bounded(events: Iterable[ModelEvent], gateway: str) -> Iterator[ModelEvent]:
    """`events`, stopped with a GatewayError at the first cap passed: one turn's text (MAX_TEXT),
    one call's arguments (MAX_ARGUMENTS), the number of calls (MAX_CALLS_HELD), or all one turn
    holds (MAX_TURN). A call is told apart as the accumulator does: by its index, else by its id,
    else it continues the last one; like the accumulator, only its latest id and name are held."""
    text = held = 0  # characters of text; characters the loop and the accumulator hold
    calls: dict[Hashable, list[int]] = {}  # call -> [arguments, len(id), len(name)] so far
    last: Hashable = None
    for event in events:
        if isinstance(event, TextDelta):
            text += len(event.text)
            held += len(event.text)
            if text > MAX_TEXT:
                raise GatewayError(errors.too_much_text(gateway, MAX_TEXT))
        elif isinstance(event, ToolCallDelta):
            call = event.index if event.index is not None else event.id or last
            last = call
            sizes = calls.get(call)
            if sizes is None:
                if len(calls) == MAX_CALLS_HELD:
                    raise GatewayError(errors.too_many_calls(gateway, MAX_CALLS_HELD))
                sizes = calls[call] = [0, 0, 0]
            if event.args_delta:
                sizes[0] += len(event.args_delta)
                held += len(event.args_delta)
                if sizes[0] > MAX_ARGUMENTS:
                    raise GatewayError(errors.too_many_arguments(gateway, MAX_ARGUMENTS))
            for slot, value in ((1, event.id), (2, event.name)):
                if value:  # replaces the one held before: "" and None leave it as it was
                    held += len(value) - sizes[slot]
                    sizes[slot] = len(value)
        if held > MAX_TURN:
            raise GatewayError(errors.too_much_in_turn(gateway, MAX_TURN))
        yield event
