"""Shared fixtures. Keep each small; add yours below with a line saying what it is for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gateway import Gateway
from hypothesis import settings


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    """A loopback gateway (tests/gateway.py): queue replies, point a model at `gateway.url`."""
    with Gateway() as server:
        yield server


# Hypothesis's per-example deadline is a timing assertion, and timings belong in benchmarks/:
# on a loaded 2-core CI machine it only makes property tests flaky.
settings.register_profile("course_agent", deadline=None)
settings.load_profile("course_agent")
