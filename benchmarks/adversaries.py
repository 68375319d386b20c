"""Hostile gateways against the HTTP client: the time and the peak memory each one costs.

Run by hand: `.venv/bin/python benchmarks/adversaries.py [CASE ...]`. Each case runs in a fresh
process (its max RSS is the figure), against tests/gateway.py's loopback server in that process.
Deliberately not handled: comparing with a peer; the README compares with the code before the caps.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from gateway import Gateway, Reply, endless, gzipped  # noqa: E402

from course_agent.protocol import GatewayError  # noqa: E402
from course_agent.providers.http import HttpModel  # noqa: E402
from course_agent.providers.openai_wire import OPENAI  # noqa: E402

__all__ = ["CASES", "main", "run_case"]

MB = 1 << 20
TIMEOUT = 5.0  # COURSE_AGENT_TIMEOUT for every case, so the trickle ends in seconds


def _text(size: int) -> bytes:
    choice = {"index": 0, "delta": {"content": "a" * size}}
    return f"data: {json.dumps({'choices': [choice]})}\n\n".encode()


CASES: dict[str, Callable[[], Reply]] = {
    "endless text": lambda: Reply(parts=endless(_text(1000))),
    "1 GB error body": lambda: Reply(
        500, {"Content-Type": "text/plain"}, endless(b"x" * 65536, 16384)
    ),
    "gzip bomb, error body": lambda: Reply(
        500,
        {"Content-Type": "text/plain", "Content-Encoding": "gzip"},
        gzipped(endless(b"x" * MB, 1024)),
    ),
    "gzip bomb, stream": lambda: Reply(
        200,
        {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"},
        gzipped(endless(b"\0" * MB, 1024)),
    ),
    "a byte a second, no newline": lambda: Reply(parts=endless(b"x"), interval=1.0, hold=60),
}


def run_case(name: str) -> str:
    """One case in this process: how long it took, the max RSS, and the line it ended in."""
    with Gateway() as gateway:
        gateway.queue(CASES[name]())
        model = HttpModel(OPENAI, gateway.url, "sk-bench", "m", timeout=TIMEOUT, max_retries=0)
        start = time.monotonic()
        try:
            list(model.stream([{"role": "user", "content": "hi"}], []))
            outcome = "no error"
        except GatewayError as error:
            outcome = str(error)
        took = time.monotonic() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return f"{name}: {took:.1f} s, max RSS {rss:.0f} MB; {outcome[:110]}"


def main(names: list[str]) -> None:
    for name in names or list(CASES):
        if name not in CASES:
            raise SystemExit(f"unknown case {name!r}; the cases: {', '.join(CASES)}")
        code = f"import adversaries; print(adversaries.run_case({name!r}))"
        here = str(Path(__file__).resolve().parent)
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=here, capture_output=True, text=True, check=True
        )
        print(done.stdout.strip())


if __name__ == "__main__":
    main(sys.argv[1:])
