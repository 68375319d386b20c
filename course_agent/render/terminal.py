"""The course's terminal cards: `> name(args)` when a call starts, `v`/`x` when its result is in.

Consumes loop events only; the notebook's cards reuse these lines as their text/plain form. Text
from outside (model text, arguments, results, gateway errors) is printed with control characters,
bidi overrides and lone surrogates escaped, so a repository file cannot retitle, clear or beep the
terminal, reorder what it shows, hide a character, or stop the run with an encoding error. Keys
were cut where the text entered (providers/, the tools' readers). Deliberately not handled: colour,
widths, look-alikes (homoglyphs), and the joiners U+200C and U+200D, which scripts and emoji need.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TextIO

from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResult,
    ToolStarted,
)

__all__ = ["call_line", "card_line", "first_line", "print_events", "printable"]

FIRST_LINE_CHARS = 100  # enough to recognise a result, short enough for one terminal line
# What a terminal acts on instead of showing: C0 controls (ESC starts a sequence, BEL beeps, CR
# rewrites the line) but newline and tab, DEL, and the C1 controls (0x9b is a one-byte ESC [); the
# explicit bidi controls and marks, which reorder what is shown ("Trojan Source"); the line and
# paragraph separators U+2028/U+2029, which some terminals and editors break a line at; the
# invisible characters that join nothing (zero-width space U+200B, word joiner U+2060, the
# invisible operators U+2061-U+2064, zero-width no-break space U+FEFF), which make two different
# paths look the same; and lone surrogates (JSON can spell one, a file name that is not UTF-8
# holds one), which no terminal encoding can print.
CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with each control character shown as its escape: ESC becomes the four chars `\\x1b`,
    a right-to-left override the six chars `\\u202e`.

    One character at a time, so pieces of a stream escape exactly as their whole would.
    """
    return CONTROL.sub(_escape, text)


def first_line(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def call_line(call: ToolCall) -> str:
    """`> read_file({"path":"src/calc.js"})`: the arguments as the model sent them (escaped)."""
    return printable(f"> {call.name}({call.args})")


def card_line(call: ToolCall, result: ToolResult) -> str:
    """`v read_file fed back 386 chars - src/calc.js (lines 1-13 of 13)`; `x` when it failed.

    The count is of the characters the model got; the line shown has its controls escaped.
    """
    mark = "v" if result.ok else "x"
    line = f"{mark} {call.name} fed back {len(result.content)} chars - {first_line(result.content)}"
    if result.meta.get("truncated"):
        line += f" [truncated from {result.meta['originalChars']}]"
    return printable(line)


def print_events(events: Iterable[AgentEvent], out: TextIO) -> AgentStopped:
    """Print a run as it happens and return how it stopped. Ctrl-C (KeyboardInterrupt) ends the
    line being written and goes on up to the caller.
    """
    mid_line = False  # model text streams without newlines; a card must start on a fresh line
    stopped = AgentStopped("error", "the loop ended without saying why")
    try:
        for event in events:
            if isinstance(event, TextDelta):
                out.write(printable(event.text))
                mid_line = not event.text.endswith("\n")
            else:
                if mid_line:
                    out.write("\n")
                    mid_line = False
                line = ""
                if isinstance(event, ToolStarted):
                    line = call_line(event.call)
                elif isinstance(event, ToolFinished):
                    line = card_line(event.call, event.result)
                elif isinstance(event, AgentStopped):
                    stopped = event
                    if event.message:
                        mark = "! " if event.reason != "done" else ""
                        line = mark + printable(event.message)
                if line:
                    out.write(line + "\n")
            out.flush()
    finally:
        if mid_line:
            out.write("\n")
            out.flush()
    return stopped
