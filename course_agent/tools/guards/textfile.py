"""Read one page of lines from an open text file, bounded in memory, in bytes read and in time.

Lines are split on "\n" only, read in fixed-size chunks, and only the lines shown are kept; a file
is read up to the size it had when opened (one that says it is empty, as /proc's do, up to
UNSIZED_BYTES), so one that keeps growing still ends. A small file is counted whole; a large one
only as far as the page needed, so its total is a lower bound until some page reaches its end.
What each pass learnt (line starts, how far it counted, the total) is remembered per file identity
(device, inode, size, mtime, ctime), so the next page starts where the last one stopped. Every
call stops at TIME_BUDGET_S and says so. Deliberately not handled: detecting the encoding (the
caller passes it).
"""

from __future__ import annotations

import bisect
import codecs
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = [
    "CHUNK",
    "EXACT_BYTES",
    "INDEXES",
    "TIME_BUDGET_S",
    "UNSIZED_BYTES",
    "IndexCache",
    "LineIndex",
    "Page",
    "read_page",
    "text_encoding",
]

CHUNK = 1 << 20  # 1 MiB: the most of a file held at once, however long its lines
# A file up to this size is counted whole before answering (about 2 ms): its total is exact.
# A larger one is counted as far as its page (and the chunk the page ends in) reaches.
EXACT_BYTES = 4 << 20
# A regular file whose size says 0 may still hold text (/proc/self/status): read up to this.
UNSIZED_BYTES = 4 << 20
# One call's reading, however large the file or its lines (a 100 GB sparse file): past it the
# page ends where it got to and says what is known. 1 MiB chunks keep the check fine-grained.
TIME_BUDGET_S = 0.15
MARKS_PER_FILE = 1024  # line starts remembered per file: a page starts at most size/1024 early
# A file changed this recently may change again within the same tick of the clock without
# changing size: its count is not remembered, as git treats "racily clean" files. Its last
# change is its ctime, which os.utime cannot set back as it sets back the mtime (on Windows,
# where ctime is the creation time, the later of the two).
SETTLED_NS = 2_000_000_000

# Checked in this order: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]

# A file's identity: (device, inode, size, mtime, ctime in ns). A write changes size or mtime,
# and a write whose mtime was set back to hide it still changes the ctime.
Identity = tuple[int, int, int, int, int]


@dataclass
class LineIndex:
    """What passes over a file learnt: where some lines start, how far counting reached, and
    the line count once some pass reached the end.

    `marks` is [(lines before, byte offset)], both increasing: line starts about size/1024 bytes
    apart, so that a page deep in the file is read from the mark just before it. `reach` is how
    far counting got: (lines passed, byte offset, whether a line starts there), possibly inside
    a line too long to pass within one call's time; `total` is None until a pass reached the end.
    """

    total: int | None
    marks: list[tuple[int, int]] = field(default_factory=list)
    reach: tuple[int, int, bool] = (0, 0, True)

    def start_for(self, line: int) -> tuple[int, int, bool] | None:
        """Where to start reading to pass `line` lines: the last mark or the reach with at
        most `line` lines before it (the reach, inside a line, only with fewer)."""
        at = bisect.bisect_right(self.marks, (line, float("inf"))) - 1
        best = (*self.marks[at], True) if at >= 0 else None
        lines, _, at_start = self.reach
        if (lines < line or (lines == line and at_start)) and (best is None or lines > best[0]):
            best = self.reach
        return best if best is not None and best[1] > 0 else None


class IndexCache:
    """The line indexes of the last `size` files read, least recently used dropped first.

    `hits` and `misses` count lookups, so a test can see the cache at work without timing it.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = self.misses = 0
        self._indexes: OrderedDict[Identity, LineIndex] = OrderedDict()

    def get(self, identity: Identity) -> LineIndex | None:
        index = self._indexes.get(identity)
        if index is None:
            self.misses += 1
            return None
        self.hits += 1
        self._indexes.move_to_end(identity)
        return index

    def put(self, identity: Identity, index: LineIndex) -> None:
        self._indexes[identity] = index
        self._indexes.move_to_end(identity)
        while len(self._indexes) > self.size:
            self._indexes.popitem(last=False)

    def __len__(self) -> int:
        return len(self._indexes)


INDEXES = IndexCache(64)  # 64 files, at most MARKS_PER_FILE marks each: a few MB at worst


def text_encoding(file: IO[bytes]) -> str | None:
    """The encoding a byte-order mark names ("utf-16", "utf-32"), else None for UTF-8; the file
    is left where its text starts (past a UTF-8 BOM, at a UTF-16/32 one for its decoder)."""
    head = file.read(4)
    encoding = next((name for bom, name in _BOMS if head.startswith(bom)), None)
    file.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
    return encoding


class _Length:
    """Characters in a line that arrives in pieces, as "replace" decoding would show them: an
    ASCII piece by its length, anything else through one incremental decoder, so a character
    (or an invalid byte) split over two pieces counts as it shows."""

    def __init__(self) -> None:
        self.count, self._decoder = 0, None

    def add(self, piece: bytes | str) -> None:
        if isinstance(piece, str) or (self._decoder is None and piece.isascii()):
            self.count += len(piece)
            return
        if self._decoder is None:
            self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.count += len(self._decoder.decode(piece))

    def end(self) -> int:
        if self._decoder is not None:
            self.count += len(self._decoder.decode(b"", final=True))
        return self.count


class _LineReader:
    """Lines split on "\\n" from a `read(n)` function, holding at most one chunk at a time.

    Works on bytes (UTF-8 files) and on str (UTF-16/32 files decoded on the way): the code only
    uses what both have, count, find, slicing and len. `lines` counts the lines passed so far;
    with `marks` (bytes only) it notes line starts on the way for a LineIndex, and `reach` the
    last line start passed. Past `deadline` (time.monotonic) it reads once more, only to see
    whether the file has ended, and counts no more: `stopped` unless it had.
    """

    def __init__(
        self,
        read: Callable[[int], Any],
        newline: Any,
        *,
        lines: int = 0,
        offset: int = 0,
        marks: list[tuple[int, int]] | None = None,
        spacing: int = CHUNK,
        deadline: float | None = None,
        at_line_start: bool = True,
    ) -> None:
        self.read = read
        self.newline = newline
        self.buffer = newline[:0]  # the current chunk ...
        self.position = 0  # ... and how far into it we are: slicing it per line would be O(n^2)
        self.base = offset  # where the chunk starts in the file (bytes only)
        self.lines = lines
        self.at_line_start = at_line_start  # False after data no newline has ended yet
        self.marks, self.spacing = marks, spacing
        self.reach = (lines, offset, at_line_start)
        self.deadline, self.stopped, self.ended = deadline, False, False
        self.binary = False  # a NUL byte in what was read (UTF-8 only): grep's rule too

    def _fill(self) -> bool:
        """Make sure unread data is buffered; False at the end of the file or of the time."""
        if self.position < len(self.buffer):
            return True
        if self.ended or self.stopped:
            return False
        # Late or not, one more read tells whether the file has ended: a 2-byte file on a busy
        # machine is whole, not "stopped after 0.15 s". Past the deadline, what it brings stays
        # unread (uncounted: `reach` is where counting stopped).
        late = self.deadline is not None and time.monotonic() >= self.deadline
        self.base += len(self.buffer)
        self.buffer, self.position = self.read(CHUNK), 0
        self.ended = not self.buffer
        if isinstance(self.buffer, bytes) and b"\0" in self.buffer:  # binary: read no further
            self.binary, self.ended, self.buffer = True, True, self.buffer[:0]
        if late and not self.ended:
            self.stopped, self.buffer = True, self.buffer[:0]
            return False
        return not self.ended

    def _pass_chunk(self, newlines: int) -> None:
        """Pass the rest of the chunk, which holds `newlines` newlines, noting a line start."""
        if newlines:
            start = self.base + self.buffer.rindex(self.newline) + 1
            if self.marks is not None and (
                not self.marks or start - self.marks[-1][1] >= self.spacing
            ):
                self.marks.append((self.lines + newlines, start))
        self.lines += newlines
        self.at_line_start = self.buffer.endswith(self.newline)
        self.position = len(self.buffer)
        self.reach = (self.lines, self.base + self.position, self.at_line_start)

    def _end_last_line(self) -> None:
        if self.ended and not self.at_line_start:  # a last line without a newline is a line too
            self.lines, self.at_line_start = self.lines + 1, True

    def skip_to(self, target: int) -> int:
        """Pass lines until `target` lines are behind us (fewer at the end of the file or of
        the time)."""
        while self.lines < target and self._fill():
            newlines = self.buffer.count(self.newline, self.position)
            if self.lines + newlines < target:  # the whole chunk goes
                self._pass_chunk(newlines)
                continue
            for _ in range(target - self.lines):
                self.position = self.buffer.index(self.newline, self.position) + 1
            self.lines, self.at_line_start = target, True
        if self.lines < target:
            self._end_last_line()
        return self.lines

    def line(self, keep: int) -> tuple[Any, int] | None:
        """The next line's first `keep` units (bytes or characters) and its full length in
        characters (what was passed of it, if the time ran out inside it). The "\r" of a CRLF
        belongs to the line break: it is neither kept nor counted."""
        if not self._fill():
            return None
        pieces, kept, passed, length, last = [], 0, 0, _Length(), self.newline[:0]
        while self._fill():
            end = self.buffer.find(self.newline, self.position)
            stop = len(self.buffer) if end < 0 else end
            piece = self.buffer[self.position : stop]
            if kept < keep:
                pieces.append(piece[: keep - kept])
                kept += len(pieces[-1])
            length.add(piece)  # the rest of a huge line is counted, never kept
            passed += len(piece)
            last = piece[-1:] or last
            self.position = stop if end < 0 else end + 1
            if end >= 0:
                break
        self.lines, self.at_line_start = self.lines + 1, not self.stopped
        head, count = self.newline[:0].join(pieces), length.end()
        if last in ("\r", b"\r") and end >= 0:  # a CRLF line: its "\r" is not content
            count -= 1
            head = head[:-1] if passed == kept else head  # kept whole: its end is the "\r"
        return head, count

    def count_buffered(self) -> int:
        """The lines passed, plus those ending in the chunk already read: a lower bound of the
        file's lines, for free."""
        rest = self.buffer.count(self.newline, self.position)
        return self.lines + rest + (self.ended and not self.at_line_start)

    def count_rest(self) -> int:
        """Pass every remaining line (until the time runs out); return how many were passed."""
        while self._fill():
            self._pass_chunk(self.buffer.count(self.newline, self.position))
        self._end_last_line()
        return self.lines


def _bounded(file: IO[bytes], size: int) -> Callable[[int], bytes]:
    """`file.read`, but never past byte `size`: what was appended after opening is not read."""
    remaining = size - file.tell()

    def read(n: int) -> bytes:
        nonlocal remaining
        data = file.read(min(n, remaining)) if remaining > 0 else b""
        remaining -= len(data)
        return data

    return read


def _decoded(read: Callable[[int], bytes], encoding: str) -> Callable[[int], str]:
    """`read`, decoded on the way ("\\r" kept as it is); "" only at the end of the file."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def read_text(n: int) -> str:
        while True:  # a chunk may end inside a character and decode to nothing yet
            data = read(n)
            text = decoder.decode(data, final=not data)
            if text or not data:
                return text

    return read_text


@dataclass(frozen=True)
class Page:
    """Lines `first` to `first + len(lines) - 1` of a file with `total` lines: exactly, or at
    least that many when `exact` is False.

    Each line is (its first `keep` characters, decoded, and its full length in characters).
    `stopped`: the time budget ran out, so the page ends early, and its last line's length (if
    the time ran out inside it) is what was read of it.
    """

    first: int
    lines: list[tuple[str, int]]
    total: int
    exact: bool = True
    stopped: bool = False
    binary: bool = False  # a NUL byte was read: the file is not text, whatever the page shows


def read_page(
    file: IO[bytes],
    info: os.stat_result,
    encoding: str | None,
    first: int,
    limit: int,
    keep: int,
) -> Page:
    """Up to `limit` lines from line `first` (counting from 1) of the open `file`, whose text
    starts at its current position: UTF-8 read as bytes when `encoding` is None, or decoded.

    Only the first `info.st_size` bytes are read (UNSIZED_BYTES when it says 0). A file up to
    EXACT_BYTES is counted whole; a larger one up to the end of its page, unless a remembered
    index (from the nearest line start an earlier call passed) says more. Within TIME_BUDGET_S.
    """
    deadline = time.monotonic() + TIME_BUDGET_S
    size = info.st_size or UNSIZED_BYTES
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    # A file that says it is empty (/proc) may read differently each time: never remembered.
    index = INDEXES.get(identity) if info.st_size else None
    lines, offset, at_start = 0, file.tell(), True
    if index is not None and encoding is None and (mark := index.start_for(first - 1)):
        lines, offset, at_start = mark
        file.seek(offset)
    read = _bounded(file, size)
    if encoding is None:
        spacing = max(CHUNK, size // MARKS_PER_FILE)
        reader = _LineReader(
            read,
            b"\n",
            lines=lines,
            offset=offset,
            marks=[],
            spacing=spacing,
            deadline=deadline,
            at_line_start=at_start,
        )
        keep_units = 4 * keep  # 4 bytes per character at most: `keep` characters fit
    else:
        reader, keep_units = _LineReader(_decoded(read, encoding), "\n", deadline=deadline), keep
    reader.skip_to(first - 1)
    shown = []
    while len(shown) < limit and (line := reader.line(keep_units)) is not None:
        head, length = line
        text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
        shown.append((text[:keep], length))
    if index is not None and index.total is not None:
        total, exact = index.total, True
    else:
        if size <= EXACT_BYTES:
            reader.count_rest()
        exact = reader.ended and reader.at_line_start and not reader.stopped
        total = reader.lines if exact else reader.count_buffered()
    settled = time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NS
    if info.st_size and settled and not reader.binary:  # a binary file is read afresh each time
        INDEXES.put(identity, _learnt(index, reader, total if exact else None))
    return Page(first, shown, total, exact, reader.stopped, reader.binary)


def _learnt(index: LineIndex | None, reader: _LineReader, total: int | None) -> LineIndex:
    """The index `index` was, with what `reader` passed added: its marks, its reach, the total."""
    marks = sorted(set((index.marks if index else []) + (reader.marks or [])))
    if len(marks) > MARKS_PER_FILE:  # keep every other one: still spread over the file
        marks = marks[::2]
    reach = max(index.reach if index else (0, 0, True), reader.reach, key=lambda at: at[:2])
    known = index.total if index is not None and index.total is not None else total
    return LineIndex(known, marks, reach)
