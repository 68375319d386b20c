"""The two deadlines of one request: how long the gateway may be silent, and how long in all.

Silence is counted between complete data lines, so neither keep-alive comments nor a line that
never ends hold it off. Before the answer's headers, where httpx bounds each read but not their
series, a Watchdog shuts the connection when the whole request's time is up. Deliberately not
here: reading the clock (http.py checks it as bytes arrive, so a silence is noticed at the next
byte or by the socket's own read timeout).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType
from typing import Any

from course_agent.protocol import GatewayError
from course_agent.providers.defaults import DEFAULT_REQUEST_TIMEOUT, DEFAULT_TIMEOUT
from course_agent.providers.gateway import errors

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "DEFAULT_TIMEOUT", "LONGEST_WAIT", "Clock", "Watchdog"]

# A silent gateway is named within 30 s (60 when it trickles bytes that end no line); a whole
# request ends within 5 minutes: figures a student waits out (app/options.py declares them too).
# A longer timeout is this: sockets overflow (OverflowError) at about 300 years, 1e10 s.
LONGEST_WAIT = 7 * 24 * 3600.0


class Clock:
    """The two deadlines of one request: `silence` seconds without a data line (keep-alive
    comments and part of a line do not count), and `whole` seconds for everything."""

    def __init__(self, silence: float, whole: float, gateway: str) -> None:
        self.silence, self.whole = min(silence, LONGEST_WAIT), min(whole, LONGEST_WAIT)
        self.gateway = gateway
        self.started = self.last_data = time.monotonic()

    def data(self) -> None:
        """A data line arrived (or the answer began): silence starts again from now."""
        self.last_data = time.monotonic()

    def left(self) -> float:
        return self.whole - (time.monotonic() - self.started)

    def check(self) -> None:
        now = time.monotonic()
        if now - self.started > self.whole:
            raise GatewayError(errors.too_slow(self.gateway, self.whole))
        if now - self.last_data > self.silence:
            raise GatewayError(errors.silence(self.gateway, self.silence))


class Watchdog:
    """`with Watchdog(clock) as watchdog:` shuts every connection the request opened once the
    clock's whole time is up, so the read waiting on it ends at once (and the caller, finding no
    time left, says the request was too slow).

    httpx bounds each read by the silence timeout, not the series of reads before the answer's
    headers: a gateway sending "100 Continue" forever, or its headers a byte a second, would
    hold the request for ever. Passed as the request's `trace` extension, `trace` learns each
    socket httpx opens (the TCP one, then the TLS one over it) from httpcore's trace events.
    """

    def __init__(self, clock: Clock) -> None:
        self.connections: list[Any] = []  # httpcore network streams
        self.fired = False
        # A thread's wait has a limit of its own (threading.TIMEOUT_MAX), far above LONGEST_WAIT.
        self.timer = threading.Timer(max(clock.left(), 0.0), self.fire)
        self.timer.daemon = True

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            self.connections.append(info["return_value"])
            if self.fired:  # connected just after the time ran out
                self.fire()

    def fire(self) -> None:
        self.fired = True
        for connection in list(self.connections):
            # A TCP socket under TLS is detached (no descriptor): shutting it down fails quietly.
            with contextlib.suppress(OSError, AttributeError):
                connection.get_extra_info("socket").shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> Watchdog:
        self.timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.timer.cancel()
