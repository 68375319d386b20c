"""One Model for every HTTP gateway, handed a wire format as an httpx Client is handed a transport.

The wire format (wire.py) knows the request, the headers and the parser; this module owns what
HTTP itself needs, once: retries, two timeouts, caps on memory, and recording what leaves (its
events with keys cut, safety/events.py). Every
failure leaves as one GatewayError line (errors.py). Deliberately not handled: non-streaming
replies, HTTP/2, following redirects (a redirect would carry the key somewhere unchecked).
"""

from __future__ import annotations

import codecs
import functools
import re
import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, TextIO

import httpx

from course_agent.protocol import GatewayError, ModelEvent
from course_agent.providers.gateway import errors
from course_agent.providers.gateway.deadlines import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TIMEOUT,
    Clock,
    Watchdog,
)
from course_agent.providers.gateway.limits import (
    ACCEPT_ENCODING,
    MAX_ERROR_BODY,
    bounded,
    unpacked,
    without_partial_secret,
)
from course_agent.providers.gateway.retries import (
    FIRST_BACKOFF,
    MAX_RETRIES,
    MAX_RETRY_WAIT,
    RETRY_STATUSES,
    retry_delay,
)
from course_agent.providers.gateway.sse import TooLong, split_lines
from course_agent.providers.recording import RecordedResponse
from course_agent.providers.wire import WireFormat
from course_agent.safety.events import encodable, redacted_events
from course_agent.safety.redaction import known_secrets, redact, remember_secrets

__all__ = ["MIN_KEY_CHARS", "HttpModel"]

# Shorter keys are placeholders ("EMPTY", "x" for local gateways), not secrets: cutting every "e"
# out of every text because a key is "e" would wreck the run.
MIN_KEY_CHARS = 8


class HttpModel:
    """`stream()` POSTs the transcript in `wire`'s format with streaming on and yields the events.

    `timeout` is the longest silence: connecting, waiting for an answer, and between data lines
    (checked as bytes arrive, so a silence ends within twice `timeout` even when a byte trickles
    in every few seconds). `request_timeout` bounds the whole request, retries included. A
    transient failure before the answer starts is retried `max_retries` times (see
    RETRY_STATUSES), waiting as the gateway asks or backing off from `first_backoff` seconds.
    `record` (a path or an open text file) receives one JSON line per call (see replay.py).
    """

    # Its events leave with keys cut (safety/events.py), as --record keeps them: a face need not
    # cut them again (app/channels.py's RedactingModel passes them through).
    events_cut = True

    def __init__(
        self,
        wire: WireFormat,
        base_url: str,
        api_key: str,
        model: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_retries: int = MAX_RETRIES,
        first_backoff: float = FIRST_BACKOFF,
        record: Path | str | TextIO | None = None,
    ) -> None:
        self.wire = wire
        self._api_key = api_key  # read by `stream` for the headers, and as the secret to cut
        remember_secrets([api_key] if len(api_key) >= MIN_KEY_CHARS else [])  # every edge cuts it
        try:
            if any(not (" " < ch <= "~") for ch in api_key):
                raise GatewayError(errors.bad_key(wire))
            self.base_url = _checked_url(base_url, wire)
        except GatewayError as error:  # a key pasted into the URL is still a key
            raise GatewayError(redact(str(error), self._secrets)) from None
        self.model = model
        self.label = f"{model} via {self.base_url}"
        self.timeout = timeout
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.first_backoff = first_backoff
        self.record = record
        # The instant (time.monotonic) the whole run must end by, if a run set one: each request
        # is bounded by what is left of it too (app/guard.py's RunDeadline sets it).
        self.ends_at: float | None = None

    def __repr__(self) -> str:
        return (
            f"HttpModel(wire={self.wire.name!r}, base_url={self.base_url!r}, model={self.model!r})"
        )

    @property
    def _secrets(self) -> tuple[str, ...]:
        """This model's key and every other the process read: a gateway may echo any of them."""
        return (*known_secrets(), self._api_key) if self._api_key else known_secrets()

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        # The one exit for errors: whatever went wrong leaves as one redacted line. Raised after
        # the except clause, not in it: there `from None` would only hide the original from
        # tracebacks, while __context__ still held its unredacted text and the request (the key
        # in its headers) for anyone who inspects the exception.
        whole = self.request_timeout
        if self.ends_at is not None:
            whole = max(min(whole, self.ends_at - time.monotonic()), 0.001)
        clock = Clock(self.timeout, whole, self.base_url)
        secrets = self._secrets
        with self._recording(len(messages)) as record:
            try:
                # The events leave as they may be shown (safety/events.py): the recording keeps
                # those, never the gateway's bytes, so --replay has no key to print.
                for event in redacted_events(self._stream(messages, tools, clock, record), secrets):
                    if record is not None:
                        record.add(event)
                    yield event
                return
            except errors.BrokenStream as error:
                message = errors.broken(str(error), self.wire)
            except GatewayError as error:
                message = str(error)
            except TooLong as error:
                message = errors.too_long_line(self.base_url, error.limit)
            except httpx.HTTPError as error:
                message = self._explain(error, clock)
            message = redact(encodable(" ".join(message.split())), secrets)
            if record is not None:
                record.fail(message)
        raise GatewayError(message) from None

    def _stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        clock: Clock,
        record: RecordedResponse | None,
    ) -> Iterator[ModelEvent]:
        url = self.base_url + self.wire.path
        body = self.wire.body(self.model, messages, tools)
        headers = {
            "Accept": "text/event-stream",
            "Accept-Encoding": ACCEPT_ENCODING,
            **self.wire.headers(self._api_key),
        }
        client = httpx.Client(follow_redirects=False, verify=_tls())
        with client, Watchdog(clock) as watchdog:
            for attempt in range(self.max_retries + 1):
                final = attempt == self.max_retries
                # Each wait for the network is bounded by the silence, and by what is left.
                timeout = httpx.Timeout(max(min(clock.silence, clock.left()), 0.001))
                request = client.build_request("POST", url, json=body, headers=headers)
                request.extensions["timeout"] = timeout.as_dict()
                request.extensions["trace"] = watchdog.trace
                try:
                    response = client.send(request, stream=True)
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
                    # Reset or closed before the first byte of an answer: nothing was streamed.
                    if clock.left() <= 0:  # or shut by the watchdog
                        raise GatewayError(errors.too_slow(self.base_url, clock.whole)) from None
                    if final:
                        detail = str(error) or type(error).__name__
                        tries = attempt + 1
                        raise GatewayError(
                            errors.dropped_before_answer(self.base_url, detail, tries)
                        ) from None
                    self._pause(retry_delay({}, attempt, self.first_backoff), clock)
                    continue
                try:
                    note = ""
                    if response.status_code in RETRY_STATUSES and not final:
                        delay = retry_delay(response.headers, attempt, self.first_backoff)
                        budget = min(MAX_RETRY_WAIT, clock.left())
                        if delay <= budget:
                            response.close()
                            self._pause(delay, clock)
                            continue
                        note = errors.wait_too_long(delay, budget)
                    yield from self._read(response, clock, note, record)
                    return
                finally:
                    response.close()

    def _pause(self, seconds: float, clock: Clock) -> None:
        if seconds > clock.left():
            raise GatewayError(errors.too_slow(self.base_url, clock.whole))
        time.sleep(seconds)

    def _read(
        self,
        response: httpx.Response,
        clock: Clock,
        note: str,
        record: RecordedResponse | None,
    ) -> Iterator[ModelEvent]:
        gateway, code = self.base_url, response.status_code
        if 300 <= code < 400:
            location = response.headers.get("location", "")
            raise GatewayError(errors.redirect(gateway, code, location, self.wire, self._secrets))
        if record is not None:
            record.status = code  # the response that counted: not a retried one, nor a redirect
        clock.data()  # the answer began: silence counts from here
        kind = response.headers.get("content-type", "")
        if code >= 400 or "json" in kind:
            body, cut = self._body(response, clock)
            note += errors.body_cut(MAX_ERROR_BODY) if cut else ""
            if code >= 400:
                model, wire, secrets = self.model, self.wire, self._secrets
                raise GatewayError(errors.status(gateway, code, body, model, wire, secrets) + note)
            raise GatewayError(errors.json_not_stream(gateway, body, self._secrets) + note)
        if "html" in kind:
            raise GatewayError(errors.html_page(gateway, self.wire))
        lines = self._watched(self._lines(response, clock), clock)
        yield from bounded(self.wire.parse(lines, gateway), gateway)

    def _recording(self, n_messages: int) -> AbstractContextManager[RecordedResponse | None]:
        if self.record is None:
            return nullcontext()
        request = {"gateway": self.base_url, "model": self.model, "n_messages": n_messages}
        return RecordedResponse(self.record, request)

    def _body(self, response: httpx.Response, clock: Clock) -> tuple[str, bool]:
        """A body read for its message only (an error, a JSON answer): at most MAX_ERROR_BODY,
        counted before it is held; and whether it was cut there. Its words are redacted where
        they are quoted (errors.py)."""
        raw = _timed(response.iter_raw(), clock)
        encoding = response.headers.get("content-encoding", "")
        data = b"".join(unpacked(raw, encoding, self.base_url, MAX_ERROR_BODY))
        text = data.decode("utf-8", "replace")
        # Cut at the cap, the body may end in the first half of a key.
        if len(data) < MAX_ERROR_BODY:
            return text, False
        return without_partial_secret(text, self._secrets), True

    def _lines(self, response: httpx.Response, clock: Clock) -> Iterator[str]:
        """The body's lines as they arrive: unpacked step by step, decoded, cut at line ends,
        each counted against its cap (sse.MAX_LINE) before it is held."""
        raw = _timed(response.iter_raw(), clock)
        pieces = unpacked(raw, response.headers.get("content-encoding", ""), self.base_url)
        return split_lines(_decoded(pieces))

    def _watched(self, lines: Iterable[str], clock: Clock) -> Iterator[str]:
        """Each line on its way to the parser: a data line ends silence."""
        for line in lines:
            if line.startswith("data:"):
                clock.data()
            yield line

    def _explain(self, error: httpx.HTTPError, clock: Clock) -> str:
        gateway, detail = self.base_url, str(error) or type(error).__name__
        if clock.left() <= 0:  # a read timed out at the deadline, or the watchdog shut it
            return errors.too_slow(gateway, clock.whole)
        if isinstance(error, httpx.ConnectTimeout):
            return errors.connect_timeout(gateway, self.wire)
        if isinstance(error, httpx.ConnectError):
            return errors.cannot_connect(gateway, detail, self.wire)
        if isinstance(error, httpx.ReadTimeout):
            return errors.nothing_for(gateway, clock.silence)
        if isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)):
            return errors.dropped(gateway, detail)
        return errors.failed(gateway, type(error).__name__, detail)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for the process, as httpx would build it (certifi, or SSL_CERT_FILE or
    SSL_CERT_DIR, read at the first request): building one loads the CA bundle, 50 ms here, and
    every request would otherwise pay for its own."""
    return httpx.create_ssl_context()


def _timed(chunks: Iterable[bytes], clock: Clock) -> Iterator[bytes]:
    """The body's chunks as read from the socket, the deadlines checked after each one's lines
    were read: bytes that complete no data line do not hold off the silence deadline."""
    for chunk in chunks:
        yield chunk
        clock.check()


def _decoded(pieces: Iterable[bytes]) -> Iterator[str]:
    """UTF-8 bytes in pieces -> text in pieces; a character split between two pieces is kept
    whole, and invalid bytes become U+FFFD (an event stream is UTF-8 by definition)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for piece in pieces:
        if text := decoder.decode(piece):
            yield text
    if tail := decoder.decode(b"", final=True):
        yield tail


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)@")


def _without_userinfo(url: str) -> tuple[str, list[str]]:
    """(`url` without its user name and password, those and their parts as secrets to cut)."""
    found = _USERINFO.match(url)
    if found is None:
        return url, []
    userinfo = found[2]
    parts = [userinfo, *userinfo.split(":")]
    return found[1] + url[found.end() :], [part for part in parts if len(part) >= 3]


def _checked_url(base_url: str, wire: WireFormat) -> str:
    """The base URL without its trailing slash, or a GatewayError saying what is wrong with it."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as error:
        # Quoted without what sits before an @ (a user name and password) and its parts.
        shown, credentials = _without_userinfo(base_url)
        detail = redact(str(error), credentials) if credentials else str(error)
        raise GatewayError(errors.bad_url(shown, f"is not a valid URL ({detail})", wire)) from None
    if url.scheme not in ("http", "https"):
        raise GatewayError(errors.bad_url(base_url, "is not an http(s) URL", wire))
    if url.userinfo:
        shown = str(url.copy_with(userinfo=b""))
        reason = f"holds a user name or password; put the key in {wire.key_variable} instead"
        raise GatewayError(errors.bad_url(shown, reason, wire))
    if url.query or url.fragment:
        shown = str(url.copy_with(query=None, fragment=None))
        raise GatewayError(errors.bad_url(shown, "has a ?query or #fragment", wire))
    if not url.host or any(ch.isspace() or not ch.isprintable() for ch in base_url):
        raise GatewayError(errors.bad_url(base_url, "has no valid host name", wire))
    if url.port is not None and not 0 < url.port < 1 << 16:
        raise GatewayError(errors.bad_url(base_url, f"has no valid port ({url.port})", wire))
    return base_url.rstrip("/")
