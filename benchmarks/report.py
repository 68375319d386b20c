"""One row per figure, printed as a Markdown table: ours, a peer measured in the same run, ratio.

A target is either a ratio to the peer (`at_most=1.5`) or a bound on our own figure
(`under=100` in the row's unit). Timed rows carry CPU time beside wall time. A row whose calls
stopped at a budget did less work than asked: it is marked INVALID and meets no target.
Deliberately not handled: saving results or comparing runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from measure import Sample, Timing

__all__ = ["Row", "budget_stops", "format_table"]


def budget_stops(metas: Sequence[Mapping[str, Any]]) -> str:
    """Why a figure is invalid ("" when it is not): some of its calls stopped at a budget (a
    tool result's `meta["stopped"]`), so they skipped part of the work the peer did."""
    stopped = sum(bool(meta.get("stopped")) for meta in metas)
    return f"{stopped} of {len(metas)} calls stopped at the time budget" if stopped else ""


@dataclass(frozen=True)
class Row:
    figure: str
    ours: Sample
    peer: str
    theirs: Sample
    at_most: float | None = None  # target: ours / theirs <= at_most
    under: float | None = None  # target: ours < under, in the unit of `ours`
    ours_cpu: Sample | None = None  # user + sys, children included
    theirs_cpu: Sample | None = None
    invalid: str = ""  # why the figure cannot be trusted; "" when it can

    @classmethod
    def timed(cls, figure: str, ours: Timing, peer: str, theirs: Timing, **target: Any) -> Row:
        """A row of wall times with the CPU times of the same runs beside them."""
        return cls(
            figure, ours.wall, peer, theirs.wall, ours_cpu=ours.cpu, theirs_cpu=theirs.cpu, **target
        )

    @property
    def ratio(self) -> float:
        return self.ours.median / self.theirs.median if self.theirs.median else float("inf")

    @property
    def cpu_ratio(self) -> float | None:
        if self.ours_cpu is None or self.theirs_cpu is None:
            return None
        return self.ours_cpu.median / self.theirs_cpu.median if self.theirs_cpu.median else None

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
        if self.invalid:
            return None
        if self.at_most is not None:
            return self.ratio <= self.at_most
        if self.under is not None:
            return self.ours.median < self.under
        return None


def format_table(rows: Iterable[Row]) -> str:
    """A Markdown table: medians with their spread (min-max) in parentheses."""
    lines = [
        "| figure | ours | peer | peer's | ratio | CPU ours / peer's | CPU ratio | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        verdict = {True: " met", False: " MISSED", None: ""}[row.met]
        target = f"**INVALID: {row.invalid}**" if row.invalid else f"{row.target}{verdict}"
        cpu = cpu_ratio = ""
        if row.ours_cpu is not None and row.theirs_cpu is not None:
            cpu = f"{row.ours_cpu.show()} / {row.theirs_cpu.show()}"
            cpu_ratio = "" if row.cpu_ratio is None else f"{row.cpu_ratio:.2f}x"
        lines.append(
            f"| {row.figure} | {row.ours.show()} | {row.peer} | {row.theirs.show()} "
            f"| {row.ratio:.2f}x | {cpu} | {cpu_ratio} | {target} |"
        )
    return "\n".join(lines)
