"""grep's search in two passes: count every match with one rg pass, then read only the page's lines.

The counting pass prints one record per file, however many lines match in it; the ignore rules
and key files are applied per file. The page pass asks rg for the lines of the first files by
path only, through descriptors opened and checked inside the root, so a folder swapped for a
symlink meanwhile cannot show a line from outside. A file holding a known key is searched in its
redacted form in both passes, so whether a pattern matches never depends on the key. Deliberately
not handled: formatting (grep_files.py), and a key split over two lines of a file (a real file
holds a key on one line; a PEM block is a key file, never searched).
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
from course_agent.safety.redaction import encoded_forms, known_secrets, redact
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

__all__ = ["MAX_BINARY_NAMED", "MAX_REDACTED_BYTES", "PAGE_RESERVE_S", "Found", "Record", "search"]

MAX_REDACTED_BYTES = 8 << 20  # a file holding a known key is read whole to redact it, up to this
PAGE_RESERVE_S = 1.0  # of the call's time, kept for the page pass after counting
# rg is handed the page's files as /dev/fd/N, descriptors opened and checked here; where there
# is no /dev/fd (Windows), by their paths.
_BY_DESCRIPTOR = os.name == "posix" and os.path.isdir("/dev/fd")
# Names rg's ASCII-only --iglob may have let through: not ASCII, or spelt as Windows opens them.
_ODD_NAME = (b":", b"./", b" /")

_EARLY = 8192  # bytes in which a NUL makes a file binary at a glance (git's and grep's rule)
MAX_BINARY_NAMED = 1000  # files checked for a late NUL, when the page has room

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
    binary: int = 0  # files not searched for a NUL byte in them that hold matches as bytes


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
                continue  # a holder of a key is counted from its redacted text
            name = os.fsdecode(relative)
            if _maybe_key(relative) and is_key_file(name):
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


def _holders(rg: str, root: Path, glob: str | None, deadline: float) -> set[bytes]:
    """The files (in the glob) that hold a known key in any of its spellings: a fixed-string
    pass, cheap, and only when some key is known."""
    forms = sorted({form for key in known_secrets() for form in encoded_forms(key)})
    if not forms:
        return set()
    found: set[bytes] = set()

    def read(run: Ripgrep) -> None:
        found.clear()
        found.update(_paths(run))

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, forms, glob, mode="holders", rung=rung)

    climb_down(command, root, deadline, read)
    return found


def _paths(run: Ripgrep) -> list[bytes]:
    """--files-with-matches with --null prints `path\\0` records, no newline between them."""
    assert run.process.stdout is not None
    data = run.process.stdout.read(64 << 20)  # 64 MiB of paths at most
    return [path.removeprefix(b"./") for path in data.split(b"\0") if path]


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


def _redacted(
    rg: str, root: Path, pattern: str, holders: set[bytes], visible: Visibility, deadline: float
) -> tuple[list[Record], int]:
    """The matching lines and count of each file holding a known key, searched by rg in its
    redacted form (fed on stdin). A file over MAX_REDACTED_BYTES is left out, as its key might
    lie past what is read."""
    records: list[Record] = []
    total = 0
    for relative in sorted(holders):
        name = os.fsdecode(relative)
        if is_key_file(name) or not visible(name):
            continue
        found = _search_redacted(rg, root, pattern, relative, deadline)
        total += len(found)
        records += found
    return records, total


def _search_redacted(
    rg: str, root: Path, pattern: str, relative: bytes, deadline: float
) -> list[Record]:
    """All matching lines of one file, searched with its known keys cut out."""
    name = os.fsdecode(relative)
    try:
        fd = open_inside(root, root / name, name)
    except (OSError, ToolError):
        return []
    with open(fd, "rb") as file:
        data = file.read(MAX_REDACTED_BYTES + 1)
    if len(data) > MAX_REDACTED_BYTES:
        return []
    text = redact(data.decode("utf-8", "surrogateescape"), known_secrets())
    found: list[Record] = []

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, pattern, limit=COUNT_BUDGET, rung=rung, paths=["-"])

    def read(run: Ripgrep) -> None:
        _lines(run, {b"<stdin>": relative}, found)

    stdin = text.encode("utf-8", "surrogateescape")
    climb_down(command, root, deadline, read, stdin=stdin)
    return found


def _binary(
    rg: str,
    root: Path,
    pattern: str,
    glob: str | None,
    counting: _Counting,
    holders: set[bytes],
    deadline: float,
) -> int:
    """How many files that look like text (no NUL in their first 8 KB) rg passed over as
    binary for a NUL further on, though they would match as text. Two more rg passes, run only
    when the page has room: so a log with one late NUL does not give a silent "no matches"."""
    found: list[bytes] = []

    def read(run: Ripgrep) -> None:
        found[:] = _paths(run)

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, pattern, glob, mode="binary", rung=rung)

    climb_down(command, root, deadline, read)
    counted = set(counting.files)
    candidates = []
    for relative in found[:MAX_BINARY_NAMED]:
        name = os.fsdecode(relative)
        if relative in counted or relative in holders or is_key_file(name):
            continue
        with contextlib.suppress(TimeoutError):
            if counting.visible(name) and not _nul_early(root, name):
                candidates.append(name)
    if not candidates:  # a NUL early on: binary at a glance, as the tool's description says
        return 0

    def nul(rung: Rung) -> list[str]:  # which of them do hold a NUL (not some other reason)
        return ripgrep_command(rg, r"\x00", mode="text", rung=rung, paths=candidates)

    climb_down(nul, root, deadline, read)
    return len(found)


def _nul_early(root: Path, name: str) -> bool:
    try:
        fd = open_inside(root, root / name, name)
    except (OSError, ToolError):
        return True  # not to be read: not counted
    with open(fd, "rb") as file:
        return b"\0" in file.read(_EARLY)


def search(
    rg: str, root: Path, pattern: str, glob: str | None, limit: int, deadline: float
) -> Found:
    """Count every match (per file, one pass), then read the first `limit` lines by path."""
    holders = _holders(rg, root, glob, deadline) if known_secrets() else set()
    counting = _Counting(root, limit, holders, deadline)

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, pattern, glob, mode="count", rung=rung)

    # The page needs a moment after counting: kept back unless the budget is too short for it.
    spare = deadline - time.monotonic() > 2 * PAGE_RESERVE_S
    count_deadline = deadline - PAGE_RESERVE_S if spare else deadline
    run, rung = climb_down(command, root, count_deadline, counting)
    lines = _page(rg, root, pattern, limit, sorted(counting.files), deadline, rung)
    total = counting.total
    if holders:
        more, counted = _redacted(rg, root, pattern, holders, counting.visible, deadline)
        lines, total = lines + more, total + counted
    lines = heapq.nsmallest(limit, lines, key=lambda record: record[:2])
    binary = 0
    if total < limit and not run.stopped:  # the page has room: say what binary files hide
        binary = _binary(rg, root, pattern, glob, counting, holders, deadline)
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
        binary=binary,
    )
