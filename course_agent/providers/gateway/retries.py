"""When to try a request again, and how long to wait first: the official SDKs' rules.

Transient statuses and a connection dropped before any answer are retried, waiting as the gateway
asks, else backing off with jitter. Deliberately not here: the retry loop itself (http.py), and
anything after the answer has started (a broken stream is never retried).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

__all__ = [
    "FIRST_BACKOFF",
    "MAX_BACKOFF",
    "MAX_RETRIES",
    "MAX_RETRY_WAIT",
    "RETRY_STATUSES",
    "retry_delay",
]

# What the official SDKs retry: timeout, conflict, rate limit, the gateway's own failures, and
# Anthropic's 529 "overloaded". Anything else is the request's fault and would fail again.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_RETRIES = 2  # as the SDKs: three tries in all
FIRST_BACKOFF = 0.5  # seconds before the first retry when the gateway says nothing; doubles
MAX_BACKOFF = 8.0
MAX_RETRY_WAIT = 20.0  # a gateway asking for a longer pause is reported at once, not waited out


def retry_delay(headers: Mapping[str, str], attempt: int, first: float = FIRST_BACKOFF) -> float:
    """Seconds to wait before retrying after try number `attempt` (from 0).

    What the gateway asks for (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date),
    not capped: the caller reports a wait it will not make. Without a usable header, `first`
    seconds doubled per attempt up to MAX_BACKOFF, less up to a quarter at random so that the
    kernels of a whole class, limited at once, do not all retry at once.
    """
    asked = _asked_delay(headers)
    if asked is not None:
        return max(asked, 0.0)
    return min(first * 2**attempt, MAX_BACKOFF) * (1 - 0.25 * random.random())


def _asked_delay(headers: Mapping[str, str]) -> float | None:
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            if math.isfinite(seconds := float(milliseconds) / 1000):
                return seconds
        except ValueError:
            pass
    text = headers.get("retry-after")
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    return seconds if math.isfinite(seconds) else None
