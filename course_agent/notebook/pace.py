"""Slow an offline model down to a readable pace, so a class can watch a run stream without a key.

`paced(model, seconds)` waits before each streamed piece (a word of text, a call fragment); the
default comes from COURSE_AGENT_PACE, else DEFAULT_PACE in a notebook frontend (JupyterLab).
Deliberately not handled: real gateways (they have their own pace), the CLI, the self-test.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from typing import Any

from course_agent.protocol import Model, ModelEvent, TextDelta, ToolCallDelta

__all__ = ["DEFAULT_PACE", "MAX_PACE", "PACE_VARIABLE", "choose_pace", "paced"]

PACE_VARIABLE = "COURSE_AGENT_PACE"
DEFAULT_PACE = 0.05  # seconds per piece: the offline question's run takes about 5 s
MAX_PACE = 2.0  # slower than this is a typo, not a teaching choice


def choose_pace(given: float | None, env: Mapping[str, str], live: bool) -> float:
    """--pace if given, else $COURSE_AGENT_PACE, else DEFAULT_PACE where people watch (`live`),
    0 elsewhere.

    Raises ValueError naming the bad value and the range.
    """
    source, value = "--pace", given
    if value is None and env.get(PACE_VARIABLE, "").strip():
        source, text = PACE_VARIABLE, env[PACE_VARIABLE].strip()
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{source}={text!r} is not a number of seconds") from None
    if value is None:
        return DEFAULT_PACE if live else 0.0
    if not (math.isfinite(value) and 0 <= value <= MAX_PACE):
        raise ValueError(f"{source} must be between 0 and {MAX_PACE} seconds, not {value}")
    return value


class _Paced:
    """A model whose text and call fragments arrive `seconds` apart."""

    def __init__(self, model: Model, seconds: float) -> None:
        self.model, self.seconds = model, seconds
        self.label = model.label

    def __repr__(self) -> str:
        return f"{self.model!r} at {self.seconds} s per piece"

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        for event in self.model.stream(messages, tools):
            if isinstance(event, (TextDelta, ToolCallDelta)):
                time.sleep(self.seconds)
            yield event


def paced(model: Model, seconds: float) -> Model:
    """`model` at `seconds` per streamed piece; the model itself when `seconds` is 0."""
    return _Paced(model, seconds) if seconds > 0 else model
