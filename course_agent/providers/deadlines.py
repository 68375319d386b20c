"""The two deadlines of one request: how long the gateway may be silent, and how long in all.

Silence is counted between complete data lines, so neither keep-alive comments nor a line that
never ends hold it off. Deliberately not here: reading the clock (http.py checks it as bytes
arrive, so a silence is noticed at the next byte or by the socket's own read timeout).
"""

from __future__ import annotations

import time

from ..protocol import GatewayError
from . import errors

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "DEFAULT_TIMEOUT", "Clock"]

DEFAULT_TIMEOUT = 60.0  # COURSE_AGENT_TIMEOUT: the longest silence, in seconds
DEFAULT_REQUEST_TIMEOUT = 600.0  # COURSE_AGENT_REQUEST_TIMEOUT: one whole request, retries included


class Clock:
    """The two deadlines of one request: `silence` seconds without a data line (keep-alive
    comments and part of a line do not count), and `whole` seconds for everything."""

    def __init__(self, silence: float, whole: float, gateway: str) -> None:
        self.silence, self.whole, self.gateway = silence, whole, gateway
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
