"""How a grading run is going: a tqdm bar on a terminal, one plain line per notebook elsewhere.

Both say how many are done of how many, how many so far scored below full marks, how many could not
be scored (no notebook is in both counts) and about how long is left; the plain lines are for CI
logs and pipes, where a bar redrawn with carriage returns is noise.
Deliberately not handled: which rows count (grade.py hands each one over when it is done).
"""

from __future__ import annotations

import os
import time
from types import TracebackType
from typing import Any, Protocol, TextIO

from course_agent.lab.rows import one_line

# tqdm belongs to the `lab` extra, as nbclient does: imported where a run starts, so the CLI
# starts without it.

__all__ = ["GradeProgress", "Row"]

# How long it has run and about how long is left, in tqdm's words: "00:42 elapsed, 03:10 left".
TIMES = "{elapsed} elapsed, about {remaining} left"


class Row(Protocol):
    """What progress reads of a GradeRow."""

    @property
    def submission(self) -> str: ...
    @property
    def passed(self) -> int | None: ...
    @property
    def total(self) -> int | None: ...
    @property
    def score(self) -> str: ...


def _below(row: Row) -> bool:
    """Scored, below full marks."""
    return row.passed is not None and row.passed < (row.total or 0)


def _columns(out: TextIO) -> int:
    """The terminal's width; 0 when it has none (a pty nobody sized, as some CI runners make)."""
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (OSError, ValueError):
        return 0


class GradeProgress:
    """`with GradeProgress(total, out) as progress: progress.update(row)` for each row done.

    A bar when `out` is a terminal (unless `bar` says otherwise), else one line per row.
    """

    def __init__(self, total: int, out: TextIO, bar: bool | None = None) -> None:
        from tqdm import tqdm

        self.total, self.out, self.done, self.below, self.unscored = total, out, 0, 0, 0
        self.started = time.monotonic()
        self.bar: Any = None
        if out.isatty() if bar is None else bar:
            width = _columns(out)
            self.bar = tqdm(
                total=total,
                file=out,
                unit="notebook",
                desc="grading",
                dynamic_ncols=width > 0,  # follow the window as it is resized
                # A terminal of 0 rows and columns: tqdm would draw nothing at all in it.
                ncols=None if width > 0 else 100,
                nrows=None if width > 0 else 24,
                postfix=self._failures(),
            )
        self._meter = tqdm.format_meter

    def _failures(self) -> str:
        return f"{self.below} below full marks, {self.unscored} not scored"

    def update(self, row: Row) -> None:
        """Count `row` as done, and show it."""
        self.done += 1
        self.below += _below(row)
        self.unscored += row.passed is None
        if self.bar is not None:
            self.bar.set_postfix_str(self._failures(), refresh=False)
            self.bar.update(1)
            return
        elapsed = time.monotonic() - self.started
        times = self._meter(self.done, self.total, elapsed, bar_format=TIMES)
        name = one_line(row.submission)  # a file name may hold escape codes, even a newline
        line = f"graded {self.done}/{self.total} {name}: {row.score} | {self._failures()} | {times}"
        print(line, file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> GradeProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
