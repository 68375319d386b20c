"""The context-cost view: one bar per model request, split by the kind of message it re-sent.

Shows the course's "paid every turn" arithmetic with plain HTML and CSS (no plotting library);
the figures come from render.cost. Deliberately not handled: tokens and prices (characters only).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from course_agent.render.cost import KINDS, RequestCost, cost_lines, request_costs

__all__ = ["COLOURS", "CostView"]

# kind -> bar colour; the legend names each kind, so colour is never the only signal
COLOURS = {"system": "#8250df", "user": "#0969da", "assistant": "#1a7f37", "tool": "#bc4c00"}
ROW = "display:flex;align-items:center;gap:6px;margin:2px 0;font-family:monospace;font-size:12px"
LABEL = "flex:none;width:7em;white-space:nowrap"
# A fixed width, the same on every row: bars are only comparable against the same scale.
TRACK = "flex:none;width:45%;display:flex;height:14px;background:#f6f8fa"
# One line per request whatever the width: a row that wraps breaks the column of bars. What does
# not fit ends in "…" and stays whole in the title (and in the text, for readers without styles).
FIGURES = "flex:1;min-width:0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis"


class CostView:
    """Context cost of a conversation. `display(CostView(messages))` shows the bars."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.costs: list[RequestCost] = request_costs(messages)

    def __str__(self) -> str:
        return "\n".join(cost_lines(self.costs))

    def _bar(self, cost: RequestCost, widest: int) -> str:
        segments = "".join(
            f'<span title="{kind}: {cost.chars[kind]} chars" style="width:'
            f'{100 * cost.chars[kind] / widest:.2f}%;flex:none;background:{COLOURS[kind]}"></span>'
            for kind in KINDS
            if cost.chars.get(kind)
        )
        # The figures are written out as text too: styles may be stripped (GitHub does).
        figures = ", ".join(f"{kind} {cost.chars[kind]}" for kind in KINDS if cost.chars.get(kind))
        return (
            f'<div style="{ROW}"><span style="{LABEL}">request {cost.number}</span>'
            f'<span style="{TRACK}">{segments}</span>'
            f'<span style="{FIGURES}" title="{html.escape(figures)}">'
            f"{cost.total} chars ({html.escape(figures)})</span></div>"
        )

    def _repr_html_(self) -> str:
        if not self.costs:
            return "<p>no model request yet</p>"
        widest = max(cost.total for cost in self.costs) or 1
        legend = " ".join(
            f'<span style="color:{COLOURS[kind]}">&#9632; {kind}</span>' for kind in KINDS
        )
        bars = "".join(self._bar(cost, widest) for cost in self.costs)
        summary = html.escape(cost_lines(self.costs)[-1])
        return f"<div><div>{legend}</div>{bars}<p>{summary}</p></div>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self._repr_html_()}
