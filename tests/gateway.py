"""A loopback gateway for tests: real HTTP on 127.0.0.1, scripted replies, every request kept.

Each POST takes the next queued Reply; faults are replies too (a status, an HTML page, a dropped
or reset connection, keep-alives forever, a body written lazily without end, bytes before the
status line). `Gateway(tls=...)` serves HTTPS with a certificate from `self_signed`. Deliberately
not handled: HTTP/2, connection reuse.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import ssl
import struct
import subprocess
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "STREAMS",
    "Gateway",
    "Received",
    "Reply",
    "endless",
    "fixture_reply",
    "gzipped",
    "html_reply",
    "packed",
    "self_signed",
    "sse_reply",
    "status_reply",
]

STREAMS = Path(__file__).parent / "data" / "streams"

# How a reply's body ends: "close" finishes the chunked body properly; "drop" closes the socket
# mid-body (httpx: RemoteProtocolError); "reset" sends a TCP RST (httpx: ReadError); "keepalive"
# sends ": keep-alive" comments until `hold` runs out; "stall" sends nothing until then; "abort"
# resets the connection before anything at all is sent (no status line, no parts).
Ending = Literal["close", "drop", "reset", "keepalive", "stall", "abort"]


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/event-stream"})
    # Written one chunk at a time; an iterator is written lazily (see `endless`), so a test can
    # send a gigabyte without building it: writing stops when the client hangs up.
    parts: Iterable[bytes] = field(default_factory=list)
    ending: Ending = "close"
    hold: float = 30.0  # upper bound for writing parts, "keepalive" and "stall": no test can hang
    interval: float = 0.0  # seconds between two parts (or preamble pieces): a gateway that trickles
    # Raw bytes written before the status line, e.g. `endless(b"HTTP/1.1 100 Continue\r\n\r\n")`;
    # past `hold` they stop and the reply follows (after a header that never ended: a bad one).
    preamble: Iterable[bytes] = ()
    # "{authorization}" in a part becomes the Authorization header received, as leaky gateways do
    echo_authorization: bool = False


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any  # the parsed JSON, or the raw text when it was not JSON


def sse_reply(*events: str, ending: Ending = "close", hold: float = 30.0) -> Reply:
    """A 200 event stream whose parts are `events` verbatim (include your own "\\n\\n")."""
    return Reply(parts=[event.encode() for event in events], ending=ending, hold=hold)


def fixture_reply(name: str, piece: int | None = None) -> Reply:
    """A recorded stream from tests/data/streams. A .sse file is sent as it is; a .jsonl file as
    "data: <line>\\n\\n" per line plus "data: [DONE]\\n\\n", as the Vercel harness replays it.
    `piece` cuts the body into that many bytes per write (inside lines, inside UTF-8 sequences)."""
    text = (STREAMS / name).read_text(encoding="utf-8")
    if name.endswith(".jsonl"):
        text = "".join(f"data: {line}\n\n" for line in text.splitlines() if line.strip())
        text += "data: [DONE]\n\n"
    body = text.encode()
    if piece is None:
        parts = [line.encode() for line in text.splitlines(keepends=True)]
    else:
        parts = [body[i : i + piece] for i in range(0, len(body), piece)]
    return Reply(parts=parts)


def status_reply(
    status: int, body: str = "", headers: dict[str, str] | None = None, **options: Any
) -> Reply:
    """An error status with a JSON (when it looks like JSON) or plain-text body."""
    kind = "application/json" if body.lstrip().startswith("{") else "text/plain"
    return Reply(status, {"Content-Type": kind, **(headers or {})}, [body.encode()], **options)


def endless(part: bytes, times: int = 1 << 40) -> Iterator[bytes]:
    """`part` again and again, made as it is written: a body far larger than memory."""
    for _ in range(times):
        yield part


def gzipped(parts: Iterable[bytes]) -> Iterator[bytes]:
    """`parts` gzip-compressed as they are written: with `endless`, a gzip bomb made lazily."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    for part in parts:
        if packed := packer.compress(part):
            yield packed
    yield packer.flush()


def packed(reply: Reply, piece: int = 5) -> Reply:
    """`reply` sent gzip-compressed (Content-Encoding: gzip), `piece` bytes per write."""
    body = b"".join(gzipped([b"".join(reply.parts)]))
    headers = {**reply.headers, "Content-Encoding": "gzip"}
    parts = [body[i : i + piece] for i in range(0, len(body), piece)]
    return Reply(reply.status, headers, parts, reply.ending, reply.hold)


def html_reply(status: int = 200) -> Reply:
    """What a wrong base URL often gets: a web page instead of an API."""
    page = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\n<body>Hi</body></html>\n"
    return Reply(status, {"Content-Type": "text/html; charset=utf-8"}, [page.encode()])


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) for 127.0.0.1, made by the openssl command in `folder`: a client
    trusts it with `ssl.create_default_context(cafile=certificate)`."""
    cert, key = folder / "gateway.pem", folder / "gateway.key"
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
    name = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    files = ["-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        ["openssl", "req", "-x509", *curve, *name, *files], check=True, capture_output=True
    )
    return cert, key


class Gateway:
    """`with Gateway() as gateway:` serves on `gateway.url` (ending in /v1) until the block ends;
    over HTTPS when given `tls=(certificate, key)` (see `self_signed`)."""

    def __init__(
        self,
        respond: Callable[[Received], Reply] | None = None,
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        # Queued replies go first; then `respond`, for a gateway that answers what it is asked.
        self.respond = respond
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.received = threading.Event()  # set at the first request: wait on it, never sleep
        self.stopping = threading.Event()  # ends "keepalive" and "stall" replies at shutdown
        # Set when a client hangs up while a reply's preamble is still being written to it.
        self.hung_up = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.gateway = self  # type: ignore[attr-defined]
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}/v1"
        # A short poll interval: shutdown() waits for it, once per test.
        serve = lambda: self.server.serve_forever(poll_interval=0.02)  # noqa: E731
        self.thread = threading.Thread(target=serve, daemon=True)

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> Gateway:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked bodies, as real gateways stream them

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        gateway: Gateway = self.server.gateway  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        gateway.requests.append(Received(self.path, headers, body))
        gateway.received.set()
        missing = status_reply(500, '{"error": {"message": "the test queued no reply"}}')
        received = gateway.requests[-1]
        if gateway.replies:
            reply = gateway.replies.popleft()
        else:
            reply = gateway.respond(received) if gateway.respond else missing
        self.close_connection = True
        # OSError: the client hung up first, which is what several faults are for.
        with contextlib.suppress(OSError):
            self.send_reply(reply, headers.get("authorization", ""), gateway.stopping)

    def send_reply(self, reply: Reply, authorization: str, stopping: threading.Event) -> None:
        if reply.ending == "abort":
            self.reset()
            return
        deadline = time.monotonic() + reply.hold
        for number, piece in enumerate(reply.preamble):
            if number and reply.interval and stopping.wait(reply.interval):
                return
            if time.monotonic() > deadline:
                break  # and the reply follows: a client still waiting gets an answer after all
            try:
                self.wfile.write(piece)
                self.wfile.flush()
            except OSError:
                self.server.gateway.hung_up.set()  # type: ignore[attr-defined]
                raise
        deadline = time.monotonic() + reply.hold
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for number, part in enumerate(reply.parts):
            if number and reply.interval and stopping.wait(reply.interval):
                return
            if time.monotonic() > deadline:
                break
            if reply.echo_authorization:
                part = part.replace(b"{authorization}", authorization.encode())
            self.write_chunk(part)
        if reply.ending == "keepalive":
            while time.monotonic() < deadline and not stopping.wait(0.05):
                self.write_chunk(b": keep-alive\n\n")
        elif reply.ending == "stall":
            stopping.wait(reply.hold)
        if reply.ending == "reset":
            time.sleep(0.2)  # let the client read what was sent, so the reset lands mid-stream
            self.reset()
        elif reply.ending != "drop":
            self.wfile.write(b"0\r\n\r\n")  # the last chunk: the body is complete

    def reset(self) -> None:
        """Close the connection with a TCP RST instead of a FIN."""
        linger = struct.pack("ii", 1, 0)  # linger on, 0 s: close() sends RST, not FIN
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        self.wfile.close()
        self.rfile.close()  # no file holds the socket now, so close() really closes it
        self.connection.close()
        # http.server flushes and closes these after do_POST: give it harmless stand-ins.
        self.wfile, self.rfile = io.BytesIO(), io.BytesIO()

    def write_chunk(self, data: bytes) -> None:
        if data:  # an empty chunk would end the body
            self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
            self.wfile.flush()
