"""A Model that streams from any OpenAI-compatible `/chat/completions` endpoint over httpx.

Every failure becomes one GatewayError line naming the cause, the gateway and what to do next, with
the key redacted. Deliberately not handled: non-streaming replies, Azure's `api-key` header.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, TextIO

import httpx

from ..protocol import GatewayError, ModelEvent
from ..sse import split_lines
from .openai_chunks import error_summary, events_from_lines

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "MAX_RETRY_WAIT",
    "OpenAICompatModel",
    "retry_delay",
    "status_message",
]

DEFAULT_IDLE_TIMEOUT = 60.0  # seconds without a data event; SSE keep-alive comments do not count
MAX_RETRY_WAIT = 20.0  # a 429 asking for longer than this is reported instead of waited out
_SHORT_KEY = 16  # characters: API keys are 40 to 100+; shorter ones are local placeholders


class OpenAICompatModel:
    """`stream()` POSTs the transcript with `stream: true` and yields the events as they arrive.

    `timeout` bounds connecting and each read; `idle_timeout` bounds the time between data events,
    which a gateway sending only keep-alive comments would otherwise stretch forever. A 429 is
    retried `max_retries` times. `record` (a path or an open text file) receives one JSON line per
    call to `stream()`: the format is described in `replay.py`, which plays it back.

    A client for another wire format (anthropic.py) overrides `_request`, `_headers` and `_parse`,
    and names its own settings below; retries, timeouts, redaction and recording stay here.
    """

    # The settings error messages point people at.
    key_variable = "OPENAI_API_KEY"
    url_variable = "OPENAI_BASE_URL"
    url_advice = "OPENAI_BASE_URL (it usually ends in /v1)"
    url_example = "https://api.openai.com/v1"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        record: Path | str | TextIO | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise GatewayError(
                f"{self.url_variable} {base_url!r} is not an http(s) URL; "
                f"set it to the gateway's API root, e.g. {self.url_example}"
            )
        if any(not (" " < ch <= "~") for ch in api_key):
            raise GatewayError(
                f"{self.key_variable} contains a space, newline or non-ASCII character; "
                "copy it again"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.label = f"{model} via {self.base_url}"
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.max_retries = max_retries
        self.record = record
        self._api_key = api_key  # only ever read by _headers and _cut_key
        self._transport = transport

    def __repr__(self) -> str:
        return f"OpenAICompatModel(base_url={self.base_url!r}, model={self.model!r})"

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        # The one exit for errors: whatever went wrong leaves as one redacted line. Raised after
        # the except clause, not in it: there `from None` would only hide the original from
        # tracebacks, while __context__ still held its unredacted text and the request (the key
        # in its headers) for anyone who inspects the exception.
        try:
            yield from self._stream(messages, tools)
            return
        except GatewayError as error:
            message = str(error)
        except httpx.HTTPError as error:
            message = self._explain(error)
        raise GatewayError(self._redact(message)) from None

    def _stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        url, body = self._request(messages, tools)
        with httpx.Client(timeout=self.timeout, transport=self._transport) as client:
            for attempt in range(self.max_retries + 1):
                with client.stream("POST", url, json=body, headers=self._headers()) as response:
                    if response.status_code == 429 and attempt < self.max_retries:
                        time.sleep(retry_delay(response.headers.get("retry-after"), attempt))
                        continue
                    received: list[str] = []  # the body lines as they came, for `record`
                    try:
                        yield from self._read(response, received)
                    finally:
                        self._save(len(messages), response.status_code, received)
                    return

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, Any]]:
        """The URL and JSON body of one streamed request."""
        # No stream_options: usage is not used here, and some compatible gateways reject it.
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if tools:  # some gateways reject "tools": []
            body["tools"] = tools
        return f"{self.base_url}/chat/completions", body

    def _parse(self, lines: Iterable[str]) -> Iterator[ModelEvent]:
        """The body's lines -> events; raises GatewayError for what the stream itself reports."""
        return events_from_lines(lines, self.base_url)

    def _read(self, response: httpx.Response, received: list[str]) -> Iterator[ModelEvent]:
        lines = self._watch(split_lines(response.iter_text()), received)
        if response.status_code >= 400:
            status, body = response.status_code, "\n".join(lines)
            raise GatewayError(
                status_message(
                    self.base_url,
                    status,
                    body,
                    self.model,
                    key_variable=self.key_variable,
                    url_advice=self.url_advice,
                )
            )
        content_type = response.headers.get("content-type", "")
        if "html" in content_type:
            raise GatewayError(
                f"gateway {self.base_url} answered with an HTML page, not an event stream; "
                f"check {self.url_advice}"
            )
        if "json" in content_type:
            body = "\n".join(lines)
            raise GatewayError(
                f"gateway {self.base_url} answered with JSON, not an event stream "
                f"({_body_summary(body)}); check that it supports stream: true"
            )
        yield from self._parse(lines)

    def _watch(self, lines: Iterable[str], received: list[str]) -> Iterator[str]:
        """Keep each line for the recording, and enforce the idle deadline: a keep-alive comment
        resets httpx's read timeout, so a gateway sending only those would never time out."""
        last_data = time.monotonic()
        for line in lines:
            received.append(line)
            if line.startswith("data:"):
                last_data = time.monotonic()
            elif time.monotonic() - last_data > self.idle_timeout:
                raise GatewayError(
                    f"gateway {self.base_url} sent only keep-alives and no data for "
                    f"{self.idle_timeout:g} s; try again later, or wait longer with "
                    "COURSE_AGENT_TIMEOUT"
                )
            yield line

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:  # local gateways (Ollama, vLLM) may need none
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _explain(self, error: httpx.HTTPError) -> str:
        gateway, detail = self.base_url, str(error) or type(error).__name__
        if isinstance(error, httpx.ConnectTimeout):
            return f"timed out connecting to gateway {gateway}; check {self.url_variable}"
        if isinstance(error, httpx.ConnectError):
            return f"cannot connect to gateway {gateway} ({detail}); check {self.url_variable}"
        if isinstance(error, httpx.ReadTimeout):
            return (
                f"gateway {gateway} sent nothing for {self.timeout:g} s; "
                "try again, or wait longer with COURSE_AGENT_TIMEOUT"
            )
        if isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)):
            return f"gateway {gateway} dropped the connection mid-stream ({detail}); try again"
        return f"request to gateway {gateway} failed ({type(error).__name__}: {detail}); try again"

    def _redact(self, text: str) -> str:
        """One line, with the key cut out: gateways sometimes echo the Authorization header."""
        return self._cut_key(" ".join(text.split()))

    def _cut_key(self, text: str) -> str:
        """`text` with every occurrence of the key replaced by [redacted]."""
        if not self._api_key:
            return text
        key = re.escape(self._api_key)
        if len(self._api_key) < _SHORT_KEY:
            # A placeholder for a local gateway ("x", "EMPTY") is cut only as a whole word, or
            # it would eat the x of every word; a real key is too long to match anything by chance.
            key = rf"(?<![A-Za-z0-9]){key}(?![A-Za-z0-9])"
        return re.sub(key, "[redacted]", text)

    def _save(self, n_messages: int, status: int, lines: list[str]) -> None:
        if self.record is None:
            return
        entry = {
            "request": {"gateway": self.base_url, "model": self.model, "n_messages": n_messages},
            "status": status,
            "lines": [self._cut_key(line) for line in lines],
        }
        text = json.dumps(entry, ensure_ascii=False) + "\n"
        if not isinstance(self.record, (str, Path)):
            self.record.write(text)
            self.record.flush()
            return
        try:
            with Path(self.record).open("a", encoding="utf-8") as file:
                file.write(text)
        except OSError as error:  # stream() promises GatewayError and nothing else
            raise GatewayError(
                f"cannot write the recording {self.record} ({error.strerror or error}); "
                "record to a file in a folder that exists and is writable"
            ) from None


def status_message(
    gateway: str,
    status: int,
    body: str,
    model: str,
    *,
    key_variable: str = "OPENAI_API_KEY",
    url_advice: str = "OPENAI_BASE_URL (it usually ends in /v1)",
) -> str:
    """One line for an HTTP error status: the cause, the gateway, and what to check next."""
    head = f"gateway {gateway} answered HTTP {status} ({_body_summary(body)})"
    if status in (401, 403):
        return f"{head}: the API key was refused; check {key_variable}"
    if status == 404:
        return f"{head}: no such endpoint or model; check {url_advice} and the model name {model!r}"
    if status == 429:
        return f"{head}: still rate-limited; wait a minute and try again, or check your quota"
    if status >= 500:
        return f"{head}: the gateway itself failed; try again in a minute"
    return f"{head}: the request was refused; check the model name {model!r} and the tool schemas"


def _body_summary(body: str) -> str:
    """What an error body says, in one short line: its error message, or that it is HTML."""
    try:
        return error_summary(json.loads(body))
    except json.JSONDecodeError:
        if body.lstrip().startswith("<"):
            return "an HTML page"
        return error_summary(body) if body.strip() else "empty body"


def retry_delay(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before retrying a 429: Retry-After in seconds or as an HTTP date, capped at
    MAX_RETRY_WAIT; without one, 1, 2, 4, ... seconds."""
    try:
        seconds = float(retry_after)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        try:
            when = parsedate_to_datetime(retry_after)  # type: ignore[arg-type]
            seconds = (when - datetime.now(timezone.utc)).total_seconds()
        except (TypeError, ValueError, IndexError):
            seconds = 2.0**attempt
    return min(max(seconds, 0.0), MAX_RETRY_WAIT) if math.isfinite(seconds) else MAX_RETRY_WAIT
