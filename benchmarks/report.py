"""One row per figure, printed as a Markdown table: ours, a peer measured in the same run, ratio.

A target is either a ratio to the peer (`at_most=1.5`) or a bound on our own figure
(`under=100` in the row's unit). Deliberately not handled: saving results or comparing runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from measure import Sample

__all__ = ["Row", "format_table"]


@dataclass(frozen=True)
class Row:
    figure: str
    ours: Sample
    peer: str
    theirs: Sample
    at_most: float | None = None  # target: ours / theirs <= at_most
    under: float | None = None  # target: ours < under, in the unit of `ours`

    @property
    def ratio(self) -> float:
        return self.ours.median / self.theirs.median if self.theirs.median else float("inf")

    @property
    def target(self) -> str:
        if self.at_most is not None:
            return f"<= {self.at_most:g}x"
        if self.under is not None and self.ours.unit == "s" and self.under < 1:
            return f"< {self.under * 1000:g} ms"
        if self.under is not None:
            return f"< {self.under:g} {self.ours.unit}"
        return ""

    @property
    def met(self) -> bool | None:
        if self.at_most is not None:
            return self.ratio <= self.at_most
        if self.under is not None:
            return self.ours.median < self.under
        return None


def format_table(rows: Iterable[Row]) -> str:
    """A Markdown table: medians with their spread (min-max) in parentheses."""
    lines = [
        "| figure | ours | peer | peer's | ratio | target |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        verdict = {True: " met", False: " MISSED", None: ""}[row.met]
        lines.append(
            f"| {row.figure} | {row.ours.show()} | {row.peer} | {row.theirs.show()} "
            f"| {row.ratio:.2f}x | {row.target}{verdict} |"
        )
    return "\n".join(lines)
