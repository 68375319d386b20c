"""Show a run in a notebook: the model's text streams, each call gets a card, the stop is reported.

Without a live kernel a card is displayed when its call finishes (plain IPython prints each display
once). With one, `LiveCards` makes a widget card when the call starts and updates that one display
in place. Deliberately not handled: choosing the model or running the loop (that is magics).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from course_agent.notebook.cards.fragments import FragmentLog
from course_agent.notebook.cards.live import LiveCard
from course_agent.notebook.cards.static import ToolCard
from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResult,
    ToolStarted,
    TurnStarted,
)
from course_agent.render.terminal import printable

__all__ = ["INTERRUPTED", "LiveCards", "show_events"]

INTERRUPTED = "the run was interrupted before this call finished"


class Handle(Protocol):
    """What `display(obj, display_id=True)` returns: IPython's DisplayHandle."""

    def update(self, obj: Any) -> None: ...


@dataclass
class LiveCards:
    """Makes the widget cards of one run: `replay` executes an edited call, `log` has the
    fragments of the conversation's turns."""

    replay: Callable[[ToolCall], ToolResult]
    log: FragmentLog | None = None
    hold: float = 0.0  # seconds a card shows "running" before its call runs (paced runs only)

    def start(self, call: ToolCall, position: int) -> LiveCard:
        """The card of the `position`-th call of the turn the log saw last."""
        turn = self.log.turns[-1] if self.log is not None and self.log.turns else None
        return LiveCard(call, self.replay, turn, position)


def show_events(
    events: Iterable[AgentEvent],
    display: Callable[..., Any],
    out: TextIO,
    err: TextIO,
    live: LiveCards | None = None,
) -> AgentStopped:
    """Stream the model's text to `out`, show a card per call, report the stop; return it.

    Text and messages are written with their control characters escaped, as the terminal does:
    plain IPython writes them to a terminal, where an OSC 52 in a model's answer would set the
    clipboard. (Keys were cut where the text entered: providers/, the tools' readers.)

    The notebook twin of render.terminal.print_events. With `live`, `display` must accept
    `display_id=True` and return a handle (IPython's does).
    """
    mid_line = False  # streamed text has no newline; a card or a message must start a fresh line
    stopped = AgentStopped("error", "the loop ended without saying why")
    running: tuple[LiveCard, Handle] | None = None  # the loop runs one call at a time
    position = 0  # calls started in this turn

    def fresh_line() -> None:
        # Flushed before every display: a kernel sends buffered text only every 0.2 s, and the
        # card must come after the words written before it.
        nonlocal mid_line
        if mid_line:
            out.write("\n")
            mid_line = False
        out.flush()

    try:
        for event in events:
            if isinstance(event, TextDelta):
                # No flush per delta: the kernel's 0.2 s flush still streams it, and a saved
                # notebook keeps a few stream outputs instead of one per word.
                out.write(printable(event.text))
                mid_line = not event.text.endswith("\n")
            elif isinstance(event, TurnStarted):
                position = 0
            elif isinstance(event, ToolStarted) and live is not None:
                fresh_line()
                card = live.start(event.call, position)
                position += 1
                running = (card, display(card, display_id=True))
                time.sleep(live.hold)  # the loop runs the call only when asked for the next event
            elif isinstance(event, ToolFinished):
                fresh_line()
                if running is not None and running[0].card.call == event.call:
                    card, handle = running
                    running = None
                    card.finish(event.result)
                    handle.update(card)  # the saved form follows: it is the display's text
                else:
                    display(ToolCard(event.call, event.result))
            elif isinstance(event, AgentStopped):
                fresh_line()
                stopped = event
                if event.message:
                    stream = out if event.reason == "done" else err
                    stream.write(
                        ("! " if event.reason != "done" else "") + printable(event.message) + "\n"
                    )
                    stream.flush()
    finally:
        if running is not None:  # interrupted mid-call: the card must not say "running" forever
            card, handle = running
            card.stop(INTERRUPTED)
            handle.update(card)
    return stopped
