"""A tool card's static form: the `text/plain` line and the inline-styled `<details>` HTML.

It reads the same in IPython, an untrusted notebook, nbconvert and GitHub, and it is what a saved
notebook keeps of a live card. Its HTML escapes what its text form escapes (`text_html`): a bidi
override reorders a browser's line as it does a terminal's. Deliberately not handled: anything that
needs a kernel or a script.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from course_agent.protocol import ToolCall, ToolResult
from course_agent.render.terminal import card_line, first_line, printable

__all__ = ["ARGS_CHARS", "NAME_CHARS", "ToolCard", "ToolsView", "clip", "text_html"]

ARGS_CHARS = 200  # arguments this long fit a summary line; the card's body holds them whole
NAME_CHARS = 60  # a tool name is the model's to invent: cut like the arguments
BODY_ARGS_CHARS = 8_000  # the body's copy is bounded too: a model may send a megabyte of them
OK_COLOUR, FAILED_COLOUR, RUNNING_COLOUR = "#1a7f37", "#cf222e", "#9a6700"
BOX = "border:1px solid #d0d7de;border-radius:4px;margin:3px 0;padding:2px 8px;font-size:12px"
# line-height: a widget's HTML inherits one input row's height (28px) for every wrapped line
MONO = "font-family:SFMono-Regular,Menlo,Consolas,'Liberation Mono',monospace;font-size:12px;"
MONO += "line-height:1.45"
RESULT_BOX = f"white-space:pre-wrap;max-height:24em;overflow:auto;margin:4px 0;{MONO}"
# nowrap: "[truncated from 38000]" reads as one token, never split over two lines
BADGE = "background:#fff8c5;border:1px solid #d4a72c;border-radius:8px;padding:0 6px;"
BADGE += "white-space:nowrap"

Bundle = dict[str, str]  # MIME type -> representation


def text_html(text: str) -> str:
    """`text` as HTML text: its controls shown as the text form shows them (`\\u202e`), then `<`,
    `&` and quotes escaped. Every card, fragment list and demo table writes outside text with it."""
    return html.escape(printable(text))


def clip(text: str, limit: int) -> str:
    """The first line of `text`, at most `limit` characters; `…` says something was left out."""
    line = text.split("\n", 1)[0]
    if line == text and len(text) <= limit:
        return text
    return line[: limit - 1] + "…"


@dataclass(frozen=True)
class ToolCard:
    """One call: running (no result yet), finished, or stopped before its result came.

    `display(card)` shows it; `str(card)` is the terminal's card line with the arguments added.
    """

    call: ToolCall
    result: ToolResult | None = None
    stopped: str = ""  # why there will be no result (an interrupt); "" while running or done

    def __str__(self) -> str:
        # Controls escaped, as the terminal prints them: plain IPython writes this to a terminal.
        call = printable(f"{clip(self.call.name, NAME_CHARS)}({clip(self.call.args, ARGS_CHARS)})")
        if self.result is None:
            state = f"not run: {self.stopped}" if self.stopped else "running"
            return f"{'!' if self.stopped else '>'} {call} {state}"
        # card_line is `v name fed back ...`: the arguments go right after the name.
        line = card_line(self.call, self.result)
        rest = line[len(printable(f"v {self.call.name}")) :]
        return f"{line[0]} {call}{rest}"

    def _summary(self) -> tuple[str, str]:
        """The summary line as HTML, and the colour of the card's left edge."""
        call = (
            f"<b>{text_html(clip(self.call.name, NAME_CHARS))}</b>"
            f"(<code>{text_html(clip(self.call.args, ARGS_CHARS))}</code>)"
        )
        if self.result is None:
            state = f"not run: {self.stopped}" if self.stopped else "running"
            mark = f'<b style="color:{RUNNING_COLOUR}">{"!" if self.stopped else "…"}</b>'
            return f"{mark} {call} {text_html(state)}", RUNNING_COLOUR
        ok = self.result.ok
        colour = OK_COLOUR if ok else FAILED_COLOUR
        # The same words in the same order as the text/plain line, so the card reads right
        # unstyled; only the ok mark differs: a tick, since a bold `v` reads as a letter.
        summary = (
            f'<b style="color:{colour}" title="{"ok" if ok else "failed"}">'
            f"{'✓' if ok else 'x'}</b> {call} "
            f"fed back {len(self.result.content)} chars - "
            f"{text_html(first_line(self.result.content))}"
        )
        if self.result.meta.get("truncated"):
            original = text_html(str(self.result.meta.get("originalChars")))
            summary += f' <span style="{BADGE}">[truncated from {original}]</span>'
        return summary, colour

    def _repr_html_(self) -> str:
        summary, colour = self._summary()
        body = ""
        if clip(self.call.args, ARGS_CHARS) != self.call.args:
            args = self.call.args
            if len(args) > BODY_ARGS_CHARS:
                args = f"{args[:BODY_ARGS_CHARS]}… ({len(args) - BODY_ARGS_CHARS} more chars)"
            body += f'<div style="{MONO}">arguments: <code>{text_html(args)}</code></div>'
        if self.result is not None:
            body += f'<pre style="{RESULT_BOX}">{text_html(self.result.content)}</pre>'
        return (
            f'<details style="{BOX};border-left:4px solid {colour}">'
            f'<summary style="cursor:pointer;{MONO}">{summary}</summary>{body}</details>'
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
                f"<summary><b>{text_html(function['name'])}</b> - "
                f"{text_html(function['description'])}</summary>"
                f'<pre style="{RESULT_BOX}">{text_html(schema)}</pre></details>'
            )
        return "".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return {"text/plain": str(self), "text/html": self._repr_html_()}
