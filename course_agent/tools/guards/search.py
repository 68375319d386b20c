"""grep's search in two passes: count every match with one rg pass, then read only the page's lines.

The counting pass prints one record per file, however many lines match in it; the ignore rules
and key files are applied per file. The page pass asks rg for the lines of the first files by
path only, through descriptors opened and checked inside the root, so a folder swapped for a
symlink meanwhile cannot show a line from outside. A file holding a known key (holders.py) is
withheld from both passes and counted, so what a pattern matches never depends on a key, and the
other files' results are what they would be without it. Deliberately not handled: formatting
(grep_files.py).
"""

from __future__ import annotations

import contextlib
import heapq
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course_agent.protocol import ToolError
from course_agent.safety.redaction import known_secrets
from course_agent.tools.guards.holders import find_holders, names_a_key
from course_agent.tools.guards.keyfiles import is_key_file
from course_agent.tools.guards.opened import open_inside
from course_agent.tools.guards.ripgrep import (
    COUNT_BUDGET,
    Ripgrep,
    Rung,
    climb_down,
    ripgrep_command,
)
from course_agent.tools.guards.walk import Visibility

__all__ = ["PAGE_RESERVE_S", "Found", "Record", "search"]

PAGE_RESERVE_S = 1.0  # of the call's time, kept for the page pass after counting
# rg is handed the page's files as /dev/fd/N, descriptors opened and checked here; where there
# is no /dev/fd (Windows), by their paths.
_BY_DESCRIPTOR = os.name == "posix" and os.path.isdir("/dev/fd")
# Names rg's ASCII-only --iglob may have let through: not ASCII, or spelt as Windows opens them.
_ODD_NAME = (b":", b"./", b" /")


Record = tuple[bytes, int, bytes]  # (path relative to the root, line number, content)


@dataclass
class Found:
    """The first `limit` matching lines by (path, line), and what is known of the rest."""

    lines: list[Record]
    total: int  # matching lines, exact unless `bound` says why it is a lower bound
    bound: str = ""
    stopped: bool = False  # the time ran out while counting
    hidden: Counter[str] = field(default_factory=Counter)  # kind -> matching files it hid
    rung: int = 0  # how far down the memory ladder the counting went
    out_of_memory: bool = False
    code: int = 0  # rg's exit code, counting
    error: str = ""  # and its complaint
    withheld: int = 0  # visible files holding a known key: never searched, whatever the pattern


def _maybe_key(relative: bytes) -> bool:
    """Whether a path rg reported needs read_file's full key-file test (all of Unicode folded,
    Windows spellings): rg's --iglob already left out every plain ASCII key file's name."""
    return (
        not relative.isascii()
        or any(mark in relative for mark in _ODD_NAME)
        or (relative.endswith((b".", b" ")))
    )


class _Counting:
    """The counting pass's reader: matches per visible file, and the first `limit` files."""

    def __init__(self, root: Path, limit: int, holders: set[bytes], deadline: float) -> None:
        self.root, self.limit, self.holders, self.deadline = root, limit, holders, deadline
        self.keys = bool(known_secrets())

    def __call__(self, run: Ripgrep) -> None:
        self.total, self.capped = 0, False
        self.hidden: Counter[str] = Counter()
        self.visible = Visibility(self.root, self.deadline)
        # Every file has a match: the first `limit` files by path hold the page.
        self.files = heapq.nsmallest(self.limit, self._files(run))

    def _files(self, run: Ripgrep) -> Iterator[bytes]:
        for path, rest in run.records():
            relative = path.removeprefix(b"./")
            if not rest.isdigit() or relative in self.holders:
                continue  # a holder of a key is withheld, and counted apart
            name = os.fsdecode(relative)
            if (_maybe_key(relative) and is_key_file(name)) or (self.keys and names_a_key(name)):
                continue
            try:
                hidden_by = self.visible.why_hidden(name)
            except TimeoutError:  # its ignore files took the time left
                run.stopped = True
                return
            if hidden_by:
                self.hidden[hidden_by] += 1
                continue
            count = int(rest)
            self.total += count
            self.capped = self.capped or count > COUNT_BUDGET
            yield relative


def _lines(run: Ripgrep, names: dict[bytes, bytes], into: list[Record]) -> None:
    """The page pass's reader: records of the files in `names` (rg's name -> the path)."""
    into.clear()
    for path, rest in run.records():
        number, _, content = rest.partition(b":")
        if number.isdigit() and path in names:
            into.append((names[path], int(number), content))


def _page(
    rg: str, root: Path, pattern: str, limit: int, files: list[bytes], deadline: float, rung: int
) -> list[Record]:
    """The matching lines of `files` (at most `limit` each), read through descriptors opened
    inside the root: a file that now leads outside is left out."""
    fds: dict[bytes, bytes] = {}
    try:
        for relative in files:
            name = os.fsdecode(relative)
            with contextlib.suppress(OSError, ToolError):
                fd = open_inside(root, root / name, name)
                fds[f"/dev/fd/{fd}".encode() if _BY_DESCRIPTOR else relative] = relative
                if not _BY_DESCRIPTOR:
                    os.close(fd)
        records: list[Record] = []
        paths = [os.fsdecode(name) for name in fds]

        def command(step: Rung) -> list[str]:
            return ripgrep_command(rg, pattern, limit=limit, rung=step, paths=paths)

        if paths:
            held = [int(name.rpartition(b"/")[2]) for name in fds] if _BY_DESCRIPTOR else []
            climb_down(
                command,
                root,
                deadline,
                lambda run: _lines(run, fds, records),
                rung=rung,
                pass_fds=held,
            )
        return records
    finally:
        if _BY_DESCRIPTOR:
            for name in fds:
                os.close(int(name.rpartition(b"/")[2]))


def _withheld(holders: set[bytes], visible: Visibility) -> int:
    """The holders grep would search but for their key: visible, not key files, and not named
    after a key (those are left out unsaid, so a glob matched against names cannot count them)."""
    count = 0
    for relative in holders:
        name = os.fsdecode(relative)
        with contextlib.suppress(TimeoutError):
            count += not is_key_file(name) and not names_a_key(name) and visible(name)
    return count


def search(
    rg: str, root: Path, pattern: str, glob: str | None, limit: int, deadline: float
) -> Found:
    """Count every match (per file, one pass), then read the first `limit` lines by path."""
    holders = find_holders(rg, root, glob, deadline) if known_secrets() else set()
    counting = _Counting(root, limit, holders, deadline)

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, pattern, glob, mode="count", rung=rung)

    # The page needs a moment after counting: kept back unless the budget is too short for it.
    spare = deadline - time.monotonic() > 2 * PAGE_RESERVE_S
    count_deadline = deadline - PAGE_RESERVE_S if spare else deadline
    run, rung = climb_down(command, root, count_deadline, counting)
    lines = _page(rg, root, pattern, limit, sorted(counting.files), deadline, rung)
    lines = heapq.nsmallest(limit, lines, key=lambda record: record[:2])  # rg's order is its own
    total = counting.total
    withheld = _withheld(holders, counting.visible)
    bound = f"counting stopped past {COUNT_BUDGET} matches in one file" if counting.capped else ""
    return Found(
        lines=lines,
        total=max(total, len(lines)),
        bound=bound,
        stopped=run.stopped,
        hidden=counting.hidden,
        rung=rung,
        out_of_memory=run.out_of_memory and not run.stopped,
        code=run.code,
        error=run.error(),
        withheld=withheld,
    )
