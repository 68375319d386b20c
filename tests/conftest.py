"""Shared fixtures. Keep each small; add yours below with a line saying what it is for."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gateway import Gateway
from hypothesis import settings
from IPython.core.interactiveshell import InteractiveShell

from course_agent.notebook.magics import register
from course_agent.safety import redaction

# Every variable that settings.choose reads: a test sets the ones it means, and no other leaks in.
SETTINGS = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "COURSE_AGENT_MODEL",
    "COURSE_AGENT_REQUEST_TIMEOUT",
    "COURSE_AGENT_TIMEOUT",
    "INJECT",
    "MOCK",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SELFTEST",
]


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    """A loopback gateway (tests/gateway.py): queue replies, point a model at `gateway.url`."""
    with Gateway() as server:
        yield server


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`cli(*args, env={...})` runs `python -m course_agent ARGS` in tmp_path (or `cwd=`) as a user
    would: a real process whose settings are only those in `env` (none leak in from the test's)."""
    base = {name: value for name, value in os.environ.items() if name not in SETTINGS}

    def run(
        *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "course_agent", *args],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            cwd=cwd or tmp_path,
            timeout=60,
        )

    return run


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InteractiveShell:
    """A real IPython shell with the extension loaded afresh, in a folder with no .env.

    `shell.magics` is the AgentMagics object; its `conversation.messages` is the transcript.
    """
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # offline sandboxes land in tmp_path
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "course_agent")
    ipython.magics = register(ipython)  # a fresh conversation for every test
    return ipython


# Hypothesis's per-example deadline is a timing assertion, and timings belong in benchmarks/:
# on a loaded 2-core CI machine it only makes property tests flaky.
settings.register_profile("course_agent", deadline=None)
settings.load_profile("course_agent")


@pytest.fixture(autouse=True)
def _forget_remembered_keys() -> Iterator[None]:
    """Keys are remembered process-wide (safety.redaction): each test starts with none, so the
    keys one test configures are never cut from another's text."""
    before = set(redaction._KNOWN)
    redaction._KNOWN.clear()
    yield
    redaction._KNOWN.clear()
    redaction._KNOWN.update(before)
