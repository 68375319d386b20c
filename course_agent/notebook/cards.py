"""Tool cards for notebooks: one per finished call, a `<details>` that opens onto the full result.

Each card is plain data with a text/plain form (the terminal's card line, exactly) and an escaped,
inline-styled text/html form, so it reads the same in IPython, an untrusted notebook, nbconvert
and GitHub. Deliberately not handled: widgets and scripts (a saved card must need neither).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from ..protocol import AgentEvent, AgentStopped, TextDelta, ToolCall, ToolFinished, ToolResult
from ..render.terminal import card_line, first_line

__all__ = ["ToolCard", "ToolsView", "show_events"]

OK_COLOUR, FAILED_COLOUR = "#1a7f37", "#cf222e"
BOX = "border:1px solid #d0d7de;border-radius:4px;margin:3px 0;padding:2px 8px;font-size:12px"
RESULT_BOX = "white-space:pre-wrap;max-height:24em;overflow:auto;margin:4px 0;font-size:12px"
BADGE = "background:#fff8c5;border:1px solid #d4a72c;border-radius:8px;padding:0 6px"

Bundle = dict[str, str]  # MIME type -> representation


@dataclass(frozen=True)
class ToolCard:
    """One finished call. `display(card)` shows it; `str(card)` is the terminal line."""

    call: ToolCall
    result: ToolResult

    def __str__(self) -> str:
        return card_line(self.call, self.result)

    def _repr_html_(self) -> str:
        ok = self.result.ok
        colour = OK_COLOUR if ok else FAILED_COLOUR
        # Same words in the same order as the text/plain line, so the card reads right unstyled.
        summary = (
            f'<b style="color:{colour}">{"v" if ok else "x"}</b> '
            f"<b>{html.escape(self.call.name)}</b>"
            f"(<code>{html.escape(self.call.args)}</code>) "
            f"fed back {len(self.result.content)} chars - "
            f"{html.escape(first_line(self.result.content))}"
        )
        if self.result.meta.get("truncated"):
            original = html.escape(str(self.result.meta.get("originalChars")))
            summary += f' <span style="{BADGE}">[truncated from {original}]</span>'
        return (
            f'<details style="{BOX};border-left:4px solid {colour}">'
            f'<summary style="cursor:pointer;font-family:monospace">{summary}</summary>'
            f'<pre style="{RESULT_BOX}">{html.escape(self.result.content)}</pre>'
            "</details>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return {"text/plain": str(self), "text/html": self._repr_html_()}


@dataclass(frozen=True)
class ToolsView:
    """The `tools` array exactly as the model receives it; text/plain is that JSON verbatim."""

    tools: list[dict[str, Any]]

    def __str__(self) -> str:
        return json.dumps(self.tools, indent=2, ensure_ascii=False)

    def _repr_html_(self) -> str:
        parts = []
        for tool in self.tools:
            function = tool["function"]
            schema = json.dumps(function["parameters"], indent=2, ensure_ascii=False)
            parts.append(
                f'<details open style="{BOX}">'
                f"<summary><b>{html.escape(function['name'])}</b> - "
                f"{html.escape(function['description'])}</summary>"
                f'<pre style="{RESULT_BOX}">{html.escape(schema)}</pre></details>'
            )
        return "".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return {"text/plain": str(self), "text/html": self._repr_html_()}


def show_events(
    events: Iterable[AgentEvent],
    display: Callable[[Any], None],
    out: TextIO,
    err: TextIO,
) -> AgentStopped:
    """Stream the model's text to `out`, `display` a card per finished call, report the stop.

    The notebook twin of render.terminal.print_events: the same lines, cards instead of `v`/`x`.
    """
    mid_line = False  # streamed text has no newline; a card or a message must start a fresh line
    stopped = AgentStopped("error", "the loop ended without saying why")
    for event in events:
        if isinstance(event, TextDelta):
            # No flush per delta: a kernel sends buffered text every 0.2 s, so it still streams,
            # and a saved notebook keeps a few stream outputs instead of one per word.
            out.write(event.text)
            mid_line = not event.text.endswith("\n")
            continue
        if mid_line and isinstance(event, (ToolFinished, AgentStopped)):
            out.write("\n")
            out.flush()
            mid_line = False
        if isinstance(event, ToolFinished):
            display(ToolCard(event.call, event.result))
        elif isinstance(event, AgentStopped):
            stopped = event
            if event.message:
                stream = out if event.reason == "done" else err
                stream.write(("! " if event.reason != "done" else "") + event.message + "\n")
                stream.flush()
    return stopped
