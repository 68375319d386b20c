"""How long to wait before a retry: the gateway's headers first, else backoff with jitter.

The retries themselves, over loopback HTTP, are in test_http.py.
"""

import pytest

from course_agent.providers.gateway.retries import (
    MAX_RETRIES,
    MAX_RETRY_WAIT,
    RETRY_STATUSES,
    retry_delay,
)


def test_the_figures_the_readme_states() -> None:
    assert sorted(RETRY_STATUSES) == [408, 409, 429, 500, 502, 503, 504, 529]
    assert (MAX_RETRIES, MAX_RETRY_WAIT) == (2, 20.0)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "3600"}, 3600.0),  # not capped here: the caller reports it
        ({"retry-after": "-5"}, 0.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),  # OpenAI's, preferred when both are sent
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ],
)
def test_retry_delay_reads_the_headers(headers: dict[str, str], seconds: float) -> None:
    assert retry_delay(headers, attempt=0, first=0.5) == seconds


@pytest.mark.parametrize("headers", [{}, {"retry-after": "soon"}, {"retry-after": "nan"}])
@pytest.mark.parametrize("attempt", [0, 1, 2, 6])
def test_without_a_usable_header_the_delay_backs_off_with_jitter(
    headers: dict[str, str], attempt: int
) -> None:
    full = min(0.5 * 2**attempt, 8.0)
    assert 0.75 * full <= retry_delay(headers, attempt=attempt, first=0.5) <= full
