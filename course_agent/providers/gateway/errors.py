"""Every line a gateway failure ends in, written once: the cause, the gateway, what to do next.

Whatever a gateway sent is redacted before it is cut into an excerpt, so no cut leaves part of a
key behind. Deliberately not here: deciding that something failed (http.py and the parsers do).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from course_agent.protocol import GatewayError
from course_agent.providers.gateway.contract import BrokenJson, json_value
from course_agent.providers.wire import WireFormat
from course_agent.safety.redaction import redact, redact_cut

__all__ = [
    "EXCERPT",
    "BrokenStream",
    "bad_key",
    "bad_url",
    "body_cut",
    "body_summary",
    "broken",
    "broken_chunk",
    "cannot_connect",
    "cannot_record",
    "cannot_unpack",
    "connect_timeout",
    "dropped",
    "dropped_before_answer",
    "error_summary",
    "excerpt",
    "failed",
    "html_page",
    "incomplete",
    "json_not_stream",
    "midstream",
    "not_an_object",
    "not_json",
    "nothing_for",
    "redirect",
    "silence",
    "size",
    "status",
    "too_long_line",
    "too_long_recording",
    "too_many_arguments",
    "too_many_calls",
    "too_much_in_turn",
    "too_much_text",
    "too_slow",
    "unknown_encoding",
    "wait_too_long",
]

EXCERPT = 200  # characters of a gateway's own words quoted in a message


class BrokenStream(GatewayError):
    """The body does not follow its wire format: usually a base URL pointing at another API.

    Raised by the parsers, which know what broke but not which setting to check; `broken` adds that.
    """


def size(count: int) -> str:
    """1048576 -> "1 MB", 65536 -> "64 KB": caps are powers of two, and said the way people do."""
    if count >= 1 << 20 and count % (1 << 20) == 0:
        return f"{count >> 20} MB"
    if count >= 1 << 10 and count % (1 << 10) == 0:
        return f"{count >> 10} KB"
    return f"{count} bytes"


# -- a gateway's own words, made safe to quote -----------------------------------------------------


def excerpt(text: str, secrets: Sequence[str] = (), limit: int = EXCERPT) -> str:
    """`text` redacted, then on one line, then cut to `limit` characters: in that order, so a cut
    never leaves the start of a key that redaction would have recognised whole (redact_cut)."""
    flat = " ".join(redact(text, secrets).split())  # every spelling, escaped or not
    if len(flat) <= limit:
        return flat
    return redact_cut(flat, limit - 3, secrets, was_cut=True)[0] + "..."


def error_summary(payload: Any, secrets: Sequence[str] = ()) -> str:
    """One line from an error body: {"error": {"code", "message"}}, {"message"}, or plain text."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        message = error.get("message") or error.get("detail") or _json_text(error)
        return excerpt(f"{code}: {message}" if code else str(message), secrets)
    return excerpt(error if isinstance(error, str) else _json_text(error), secrets)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value)
    except RecursionError:  # read at the edge of the stack, one level too deep to write back
        return "a JSON value nested too deeply to show"


def body_summary(body: str, secrets: Sequence[str] = ()) -> str:
    """What an error body says, in one short line: its error message, or that it is HTML."""
    try:
        return error_summary(json_value(body), secrets)
    except BrokenJson:
        if body.lstrip().startswith("<"):
            return "an HTML page"
        return error_summary(body, secrets) if body.strip() else "empty body"


# -- the answer's status and shape ---------------------------------------------------------------


def status(
    gateway: str, code: int, body: str, model: str, wire: WireFormat, secrets: Sequence[str] = ()
) -> str:
    """One line for an HTTP error status: the cause, the gateway, and what to check next."""
    head = f"gateway {gateway} answered HTTP {code} ({body_summary(body, secrets)})"
    if code in (401, 403):
        return f"{head}: the API key was refused; check {wire.key_variable}"
    if code == 404:
        return (
            f"{head}: no such endpoint or model; check {wire.url_advice} "
            f"and the model name {model!r}"
        )
    if code == 429:
        return f"{head}: still rate-limited; wait a minute and try again, or check your quota"
    if code >= 500:
        return f"{head}: the gateway itself failed; try again in a minute"
    return f"{head}: the request was refused; check the model name {model!r} and the tool schemas"


def wait_too_long(asked: float, budget: float) -> str:
    """Added to a status line when the gateway asked for a longer pause than is left to wait."""
    shown = f"{asked:.0f}" if asked < 1e6 else f"{asked:.0e}"  # not 1e308 in 309 digits
    return (
        f"; it asks to wait {shown} s, more than the {budget:.0f} s this request may still "
        "wait, so it was not retried"
    )


def redirect(
    gateway: str, code: int, location: str, wire: WireFormat, secrets: Sequence[str] = ()
) -> str:
    shown = excerpt(location, secrets) or "nowhere"
    return (
        f"gateway {gateway} answered HTTP {code}, a redirect to {shown}; "
        f"it was not followed, so the key was not sent there: if you trust that address, set "
        f"{wire.url_variable} to it"
    )


def html_page(gateway: str, wire: WireFormat) -> str:
    return (
        f"gateway {gateway} answered with an HTML page, not an event stream; "
        f"check {wire.url_advice}"
    )


def json_not_stream(gateway: str, body: str, secrets: Sequence[str] = ()) -> str:
    return (
        f"gateway {gateway} answered with JSON, not an event stream "
        f"({body_summary(body, secrets)}); check that it supports stream: true"
    )


def unknown_encoding(gateway: str, encoding: str) -> str:
    # Quoted whole or not at all: a cut could leave part of a key the gateway put there.
    shown = repr(encoding) if len(encoding) <= 20 else "an encoding"
    return (
        f"gateway {gateway} sent a body encoded as {shown}, which this client did not ask for "
        "(it reads gzip and deflate); try again, or use another gateway"
    )


def cannot_unpack(gateway: str, encoding: str, detail: str) -> str:
    return f"gateway {gateway} sent a body that does not unpack as {encoding} ({detail}); try again"


# -- the stream itself (raised by the parsers as BrokenStream, or as plain GatewayError) ----------


def broken(message: str, wire: WireFormat) -> str:
    """A parser's BrokenStream line, with the setting to check: the wire format knows it."""
    return f"{message}; check that {wire.url_variable} points at {wire.api}"


def not_json(gateway: str, data: str, secrets: Sequence[str] = ()) -> str:
    return f"gateway {gateway} sent a data line that is not JSON ({excerpt(data, secrets)})"


def not_an_object(gateway: str, data: str, what: str, secrets: Sequence[str] = ()) -> str:
    return f"gateway {gateway} sent {excerpt(data, secrets)!r} where {what} belongs"


def broken_chunk(gateway: str, detail: str) -> str:
    return f"gateway {gateway} sent a chunk that breaks the stream's format: {detail}"


def midstream(gateway: str, payload: Any, secrets: Sequence[str] = ()) -> str:
    return (
        f"gateway {gateway} reported an error mid-stream: {error_summary(payload, secrets)}; "
        "try again, and if it repeats try another model"
    )


def incomplete(gateway: str, missing: str) -> str:
    return (
        f"gateway {gateway} closed the stream before the answer was complete ({missing}); try again"
    )


# -- caps on memory: each names its figure -------------------------------------------------------


def body_cut(limit: int) -> str:
    """Added to a status line when the body went on past the cap on an error body."""
    return f"; its body ran past {size(limit)}, the cap on an error body, and was read no further"


def too_long_line(gateway: str, limit: int) -> str:
    return (
        f"gateway {gateway} sent a line (or an event) longer than {size(limit)}, the cap on one "
        "line of an event stream; this is not a stream this client can read: try again"
    )


def too_long_recording(gateway: str, limit: int) -> str:
    return (
        f"the recording of gateway {gateway}'s answer would pass {size(limit)}, the most a "
        "replay reads; record a shorter session, or run without --record"
    )


def too_much_text(gateway: str, limit: int) -> str:
    return (
        f"gateway {gateway} sent more than {size(limit)} of text in one turn, the cap on one "
        "answer; ask for a shorter answer"
    )


def too_many_arguments(gateway: str, limit: int) -> str:
    return (
        f"gateway {gateway} sent more than {size(limit)} of arguments for one call, the cap on "
        "one call; ask the model for smaller calls"
    )


def too_many_calls(gateway: str, limit: int) -> str:
    return (
        f"gateway {gateway} sent more than {limit} calls in one turn, the cap on one turn "
        "(a model makes a few); this is not an answer this client can use: try again"
    )


def too_much_in_turn(gateway: str, limit: int) -> str:
    return (
        f"gateway {gateway} sent more than {size(limit)} in one turn (text, and the ids, names "
        "and arguments of its calls), the cap on one turn; ask for a shorter answer"
    )


# -- time ---------------------------------------------------------------------------------------


def silence(gateway: str, seconds: float) -> str:
    return (
        f"gateway {gateway} sent no data for {seconds:g} s (only keep-alives, or part of a "
        "line); try again later, or wait longer with COURSE_AGENT_TIMEOUT"
    )


def nothing_for(gateway: str, seconds: float) -> str:
    return (
        f"gateway {gateway} sent nothing for {seconds:g} s; "
        "try again, or wait longer with COURSE_AGENT_TIMEOUT"
    )


def too_slow(gateway: str, seconds: float) -> str:
    return (
        f"gateway {gateway} did not finish the answer within {seconds:g} s, the limit on one "
        "request; try again, or allow longer with COURSE_AGENT_REQUEST_TIMEOUT"
    )


# -- the connection -----------------------------------------------------------------------------


def connect_timeout(gateway: str, wire: WireFormat) -> str:
    return f"timed out connecting to gateway {gateway}; check {wire.url_variable}"


def cannot_connect(gateway: str, detail: str, wire: WireFormat) -> str:
    return f"cannot connect to gateway {gateway} ({detail}); check {wire.url_variable}"


def dropped(gateway: str, detail: str) -> str:
    return f"gateway {gateway} dropped the connection mid-stream ({detail}); try again"


def dropped_before_answer(gateway: str, detail: str, tries: int) -> str:
    return (
        f"gateway {gateway} dropped the connection before answering, {tries} times ({detail}); "
        "try again in a minute"
    )


def failed(gateway: str, kind: str, detail: str) -> str:
    return f"request to gateway {gateway} failed ({kind}: {detail}); try again"


# -- settings, checked before anything is sent --------------------------------------------------


def bad_url(url: str, reason: str, wire: WireFormat) -> str:
    return (
        f"{wire.url_variable} {url!r} {reason}; "
        f"set it to the gateway's API root, e.g. {wire.default_url}"
    )


def bad_key(wire: WireFormat) -> str:
    return f"{wire.key_variable} contains a space, newline or non-ASCII character; copy it again"


def cannot_record(path: object, reason: str) -> str:
    return (
        f"cannot write the recording {path} ({reason}); "
        "record to a file in a folder that exists and is writable"
    )
