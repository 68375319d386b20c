"""The course's terminal cards: `> name(args)` when a call starts, `v`/`x` when its result is in.

Consumes loop events only; the notebook's cards reuse these lines as their text/plain form.
Deliberately not handled: colour, widths, anything a dumb terminal or a log file could not show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from ..protocol import (
    AgentEvent,
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResult,
    ToolStarted,
)

__all__ = ["call_line", "card_line", "first_line", "print_events"]

FIRST_LINE_CHARS = 100  # enough to recognise a result, short enough for one terminal line


def first_line(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def call_line(call: ToolCall) -> str:
    """`> read_file({"path":"src/calc.js"})`: the arguments exactly as the model sent them."""
    return f"> {call.name}({call.args})"


def card_line(call: ToolCall, result: ToolResult) -> str:
    """`v read_file fed back 248 chars - src/calc.js (lines 1-13 of 13)`; `x` when it failed."""
    mark = "v" if result.ok else "x"
    line = f"{mark} {call.name} fed back {len(result.content)} chars - {first_line(result.content)}"
    if result.meta.get("truncated"):
        line += f" [truncated from {result.meta['originalChars']}]"
    return line


def print_events(events: Iterable[AgentEvent], out: TextIO) -> AgentStopped:
    """Print a run as it happens and return how it stopped."""
    mid_line = False  # model text streams without newlines; a card must start on a fresh line
    stopped = AgentStopped("error", "the loop ended without saying why")
    for event in events:
        if isinstance(event, TextDelta):
            out.write(event.text)
            mid_line = not event.text.endswith("\n")
        else:
            if mid_line:
                out.write("\n")
                mid_line = False
            if isinstance(event, ToolStarted):
                out.write(call_line(event.call) + "\n")
            elif isinstance(event, ToolFinished):
                out.write(card_line(event.call, event.result) + "\n")
            elif isinstance(event, AgentStopped):
                stopped = event
                if event.message:
                    out.write(("! " if event.reason != "done" else "") + event.message + "\n")
        out.flush()
    if mid_line:
        out.write("\n")
    return stopped
