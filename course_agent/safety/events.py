"""A model's events with known keys cut, channel by channel: its text, and each call's arguments.

Each channel is one StreamRedactor, holding back at most one spelling of a key, so a key split
anywhere in it (across lines, fields, events, choices) is cut whole; ids and names are cut whole,
fragment by fragment. Text that no gateway can encode (a lone surrogate, spelled "\\ud800" in
JSON) is replaced here, where it enters. Deliberately not handled: which keys (known_secrets).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from course_agent.protocol import ModelEvent, TextDelta, ToolCallDelta
from course_agent.safety.redaction import StreamRedactor, known_secrets, redact

__all__ = ["encodable", "redacted_events"]

_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, a surrogate is always a lone one


def encodable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: it can then be sent as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _whole(text: str | None, secrets: Sequence[str]) -> str | None:
    return None if text is None else redact(encodable(text), secrets)


def redacted_events(
    events: Iterable[ModelEvent], secrets: Sequence[str] | None = None
) -> Iterator[ModelEvent]:
    """`events` as they may be shown, sent and recorded: text is one channel, each call's
    arguments one channel per index (the accumulator's tie). What a channel holds is let out
    before the next other event (a finish) and at the end. `secrets`: known_secrets() if None."""
    secrets = known_secrets() if secrets is None else tuple(secrets)
    text = StreamRedactor(secrets)
    arguments: dict[int, StreamRedactor] = {}  # call index -> its arguments' channel
    for event in events:
        if isinstance(event, TextDelta):
            if shown := text.feed(encodable(event.text)):
                yield TextDelta(shown)
        elif isinstance(event, ToolCallDelta):
            channel = arguments.get(event.index)
            if channel is None:
                channel = arguments[event.index] = StreamRedactor(secrets)
            piece = event.args_delta
            piece = None if piece is None else channel.feed(encodable(piece))
            yield ToolCallDelta(
                event.index, _whole(event.id, secrets), _whole(event.name, secrets), piece
            )
        else:
            yield from _let_out(text, arguments)
            yield event
    yield from _let_out(text, arguments)


def _let_out(text: StreamRedactor, arguments: dict[int, StreamRedactor]) -> Iterator[ModelEvent]:
    if rest := text.flush():
        yield TextDelta(rest)
    for index, channel in arguments.items():
        if rest := channel.flush():
            yield ToolCallDelta(index, args_delta=rest)
