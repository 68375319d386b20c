"""The read_file tool: a page of numbered lines from one text file, never the whole file in memory.

Lines are split on "\\n" only (so the numbers agree with grep's path:line:), read in fixed-size
chunks, and only the lines shown are kept. Deliberately not handled: encodings other than UTF-8 and
BOM-marked UTF-16/32, and showing binary files in any form.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from ..paths import resolve_inside
from ..protocol import ToolContext, ToolDef, ToolError, ToolResult
from .walk import show_path

__all__ = ["READ_FILE_TOOL", "ReadFileArgs", "run_read_file"]

MAX_LINE_CHARS = 500
SNIFF_BYTES = 8000  # a NUL byte this early means binary, the same test git and ripgrep use
CHUNK = 1 << 20  # 1 MiB: the most of a file held at once, however long its lines

# Checked in this order: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}
# In UTF-8 every character has exactly one byte that is not a continuation byte (0b10xxxxxx).
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file path relative to the working directory, e.g. src/calc.js")
    offset: int = Field(
        1, ge=1, le=1_000_000_000, description="first line to show, counting from 1; default 1"
    )
    limit: int = Field(400, ge=1, le=2000, description="maximum lines to show; default 400")


def _length(piece: bytes | str) -> int:
    """Characters in `piece`: decoded text, or UTF-8 bytes counted without decoding them."""
    if isinstance(piece, str):
        return len(piece)
    return len(piece.translate(None, _CONTINUATION_BYTES))


class _LineReader:
    """Lines split on "\\n" from a `read(n)` function, holding at most one chunk at a time.

    Works on bytes (UTF-8 files) and on str (UTF-16/32 files decoded on the way): the code only
    uses what both have, count, find, slicing and len.
    """

    def __init__(self, read: Callable[[int], Any], newline: Any) -> None:
        self.read = read
        self.newline = newline
        self.buffer = newline[:0]  # the current chunk ...
        self.position = 0  # ... and how far into it we are: slicing it per line would be O(n^2)
        self.at_line_start = True  # False after data that no newline has ended yet

    def _fill(self) -> bool:
        """Make sure unread data is buffered; False at the end of the file."""
        if self.position >= len(self.buffer):
            self.buffer, self.position = self.read(CHUNK), 0
        return self.position < len(self.buffer)

    def skip(self, count: int) -> int:
        """Pass `count` lines (fewer at the end of the file) and return how many were passed."""
        passed = 0
        while passed < count and self._fill():
            newlines = self.buffer.count(self.newline, self.position)
            if passed + newlines < count:  # the whole chunk goes
                passed += newlines
                self.at_line_start = self.buffer.endswith(self.newline)
                self.position = len(self.buffer)
                continue
            for _ in range(count - passed):
                self.position = self.buffer.index(self.newline, self.position) + 1
            passed, self.at_line_start = count, True
        if passed < count and not self.at_line_start:  # a last line without a newline
            passed, self.at_line_start = passed + 1, True
        return passed

    def line(self, keep: int) -> tuple[Any, int] | None:
        """The next line's first `keep` units (bytes or characters) and its full length."""
        if not self._fill():
            return None
        pieces, kept, length = [], 0, 0
        while self._fill():
            end = self.buffer.find(self.newline, self.position)
            stop = len(self.buffer) if end < 0 else end
            piece = self.buffer[self.position : stop]
            if kept < keep:
                pieces.append(piece[: keep - kept])
                kept += len(pieces[-1])
            length += _length(piece)  # the rest of a huge line is counted, never kept
            self.position = stop if end < 0 else end + 1
            if end >= 0:
                break
        self.at_line_start = True
        return self.newline[:0].join(pieces), length

    def count_rest(self) -> int:
        """How many lines remain: newlines counted chunk by chunk, plus a last unended line."""
        lines = 0
        while self._fill():
            lines += self.buffer.count(self.newline, self.position)
            self.at_line_start = self.buffer.endswith(self.newline)
            self.position = len(self.buffer)
        return lines + (not self.at_line_start)


def _check_regular(mode: int, shown: str) -> None:
    """Refuse directories, FIFOs, devices and sockets with a message naming what to do instead."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        example = "*" if shown == "." else f"{shown}/*"
        raise ToolError(f"{shown} is a directory; list its files with glob, e.g. {example}")
    kind = _KINDS.get(stat.S_IFMT(mode), "a special file")
    raise ToolError(f"{shown} is {kind}, not a regular file; read_file reads text files only")


def _open_regular(target: Path, shown: str) -> tuple[IO[bytes], int]:
    """Open a regular file for reading; refuse anything else without ever reading from it."""
    try:
        _check_regular(os.stat(target).st_mode, shown)
        # O_NONBLOCK: should the path become a FIFO after the stat, opening it still cannot hang.
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"{shown} does not exist; find files with glob, e.g. **/*.js") from None
    except OSError as exc:  # permission denied, a symlink loop (Python 3.13 resolves those)...
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    try:
        _check_regular(info.st_mode, shown)  # it could have been swapped since the stat
    except ToolError:
        os.close(fd)
        raise
    return open(fd, "rb"), info.st_size


def _show_line(number: int, width: int, head: bytes | str, length: int) -> str:
    text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    text = text.removesuffix("\r")  # CRLF: the \r belongs to the line break
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [line cut at {MAX_LINE_CHARS} of {length} characters]"
    return f"{number:>{width}}  {text}"


def run_read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    """`src/calc.js (lines 1-13 of 13)`, then `{n:>width}  {text}` per line, width being the
    digits of the last number shown, then `(lines 401-1000 remain; read on with offset=401)`
    when lines remain. The path shown is the resolved one, relative to the root."""
    root = ctx.root.resolve()
    target = resolve_inside(root, args.path)
    shown = show_path(target.relative_to(root).as_posix())
    file, size = _open_regular(target, shown)
    with file:
        head = file.read(SNIFF_BYTES)
        encoding = next((name for bom, name in _BOMS if head.startswith(bom)), None)
        if encoding is None and b"\0" in head:
            raise ToolError(f"{shown} is a binary file ({size:,} bytes); read_file shows text only")
        file.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
        if encoding is None:
            # UTF-8, read as bytes: 4 bytes per character is enough to fill MAX_LINE_CHARS + 1.
            reader, keep = _LineReader(file.read, b"\n"), 4 * (MAX_LINE_CHARS + 1)
        else:
            # newline="\n": split on "\n" only, and hand "\r" back untranslated.
            text = io.TextIOWrapper(file, encoding=encoding, errors="replace", newline="\n")
            reader, keep = _LineReader(text.read, "\n"), MAX_LINE_CHARS + 1
        first = args.offset
        passed = reader.skip(first - 1)
        lines = []
        while len(lines) < args.limit and (line := reader.line(keep)) is not None:
            lines.append(line)
        total = passed + len(lines) + reader.count_rest()

    if total == 0:
        return ToolResult(f"{shown} (empty file)", meta={"lines": 0})
    if not lines:
        raise ToolError(
            f"offset {first} is past the end of {shown}, which has {total} lines; "
            f"use an offset from 1 to {total}"
        )
    last = first + len(lines) - 1
    width = len(str(last))
    body = [_show_line(first + i, width, head, length) for i, (head, length) in enumerate(lines)]
    parts = [f"{shown} (lines {first}-{last} of {total})", *body]
    if last < total:
        parts.append(f"(lines {last + 1}-{total} remain; read on with offset={last + 1})")
    return ToolResult("\n".join(parts), meta={"lines": total, "first": first, "last": last})


READ_FILE_TOOL = ToolDef(
    name="read_file",
    description=(
        "Read a text file in the working directory as numbered lines under a header such as "
        "'src/calc.js (lines 1-13 of 13)'; each line is its number, two spaces, then the text. "
        "Shows 400 lines by default: for a long file page on with offset, e.g. offset=401. "
        "Lines over 500 characters are cut. Directories and binary files are refused: use glob "
        "to find files and grep to find lines."
    ),
    args=ReadFileArgs,
    run=run_read_file,
    read_only=True,
)
