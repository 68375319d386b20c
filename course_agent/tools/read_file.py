"""The read_file tool: a page of numbered lines from one text file, never the whole file in memory.

It checks what it opens (inside the root, a regular file, not a key file, text) and leaves the
bounded reading to textfile.py. Deliberately not handled: encodings other than UTF-8 and
BOM-marked UTF-16/32, and showing binary files in any form.
"""

from __future__ import annotations

from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.paths import resolve_inside
from course_agent.protocol import ToolContext, ToolDef, ToolError, ToolResult
from course_agent.tools.guards.keyfiles import refuse_key_file
from course_agent.tools.guards.opened import open_regular
from course_agent.tools.guards.shown import keep_for, shown_line, shown_name
from course_agent.tools.guards.textfile import TIME_BUDGET_S, Page, read_page, text_encoding

__all__ = ["MAX_LINE_CHARS", "READ_FILE_TOOL", "ReadFileArgs", "run_read_file"]

MAX_LINE_CHARS = 500


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="file path relative to the working directory, e.g. src/calc.js",
        max_length=MAX_FIELD_CHARS,
    )
    offset: int = Field(
        1, ge=1, le=1_000_000_000, description="first line to show, counting from 1; default 1"
    )
    limit: int = Field(400, ge=1, le=2000, description="maximum lines to show; default 400")


def _show_line(number: int, width: int, text: str, length: int, at_least: bool = False) -> str:
    """`text` is the line's start (as much as was kept), `length` the whole line's characters
    without its line break (or what was read of it, `at_least`)."""
    text, cut = shown_line(text, MAX_LINE_CHARS, was_cut=length > len(text))
    if cut:
        of = f"at least {length:,}" if at_least else f"{length}"
        text = f"{text}… [line cut at {MAX_LINE_CHARS} of {of} characters]"
    return f"{number:>{width}}  {text}"


def _size(size: int) -> str:
    """1073741824 -> "1.1 GB"; 2048 -> "2.0 kB"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _not_reached(shown: str, page: Page, size: int) -> str:
    """What a call says when the time ran out before its first line: what is known, and how
    to go on (the next call starts where this one stopped)."""
    return (
        f"{shown} ({_size(size)}): line {page.first:,} was not reached within "
        f"{TIME_BUDGET_S:g} s; the file has at least {page.total:,} lines. Call again with "
        f"offset={page.first} to read on from there, or find the place with grep"
    )


def _answer(shown: str, page: Page, size: int) -> ToolResult:
    """The page under its header: `src/calc.js (lines 1-13 of 13)` when the total is known,
    `big.txt (lines 1-400 of at least 16,384; the file is 1.1 GB)` when it is not."""
    first, lines, total = page.first, page.lines, page.total
    if total == 0 and page.exact:
        return ToolResult(f"{shown} (empty file)", meta={"lines": 0})
    if not lines and page.stopped:
        meta = {"lines": total, "exact": False, "stopped": True, "reached": False}
        return ToolResult(_not_reached(shown, page, size), meta=meta)
    if not lines:
        raise ToolError(
            f"offset {first} is past the end of {shown}, which has {total} lines; "
            f"use an offset from 1 to {total}"
        )
    last = first + len(lines) - 1
    width = len(str(last))
    body = [
        _show_line(first + i, width, text, length, page.stopped and first + i == last)
        for i, (text, length) in enumerate(lines)
    ]
    meta: dict[str, object] = {"lines": total, "first": first, "last": last}
    if page.exact:
        parts = [f"{shown} (lines {first}-{last} of {total})", *body]
        if last < total:
            parts.append(f"(lines {last + 1}-{total} remain; read on with offset={last + 1})")
        return ToolResult("\n".join(parts), meta=meta)
    # A large file is not counted before answering: what is known, and its size.
    meta |= {"exact": False, "stopped": page.stopped}
    header = f"{shown} (lines {first}-{last} of at least {total:,}; the file is {_size(size)}"
    header += f"; reading stopped after {TIME_BUDGET_S:g} s)" if page.stopped else ")"
    more = "more lines remain" if last < total else "more lines may remain"
    footer = f"({more}; read on with offset={last + 1})"
    return ToolResult("\n".join([header, *body, footer]), meta=meta)


def run_read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    """`src/calc.js (lines 1-13 of 13)`, then `{n:>width}  {text}` per line, width being the
    digits of the last number shown, then `(lines 401-1000 remain; read on with offset=401)`
    when lines remain. The path shown is the resolved one, relative to the root."""
    root = ctx.root.resolve()
    target = resolve_inside(root, args.path)
    shown = shown_name(target.relative_to(root).as_posix())
    refuse_key_file(PurePath(args.path), target.relative_to(root), shown)  # values reach a model
    file, info = open_regular(root, target, shown)  # guards: what was opened is inside, regular
    with file:
        encoding = text_encoding(file)  # UTF-8, or UTF-16/32 by its byte-order mark
        page = read_page(file, info, encoding, args.offset, args.limit, keep_for(MAX_LINE_CHARS))
    if page.binary:
        raise ToolError(
            f"{shown} is a binary file ({info.st_size:,} bytes); read_file shows text only"
        )
    return _answer(shown, page, info.st_size)


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
