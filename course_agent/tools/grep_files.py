"""The grep tool: search file contents with ripgrep, returning sorted `path:line:content` lines.

ripgrep's regex engine runs in linear time, so no pattern can hang the kernel. One rg pass counts
the matches of every file; only the first files by path are then read for their lines, so memory
and Python's work stay bounded whatever the tree holds (guards/search.py). Deliberately not
handled: context lines, multiline patterns.
"""

from __future__ import annotations

import os
import time

from pydantic import BaseModel, ConfigDict, Field

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.protocol import ToolContext, ToolDef, ToolError, ToolResult
from course_agent.tools.guards.ripgrep import (
    BIG_FILE,
    LADDER,
    RG_MEMORY,
    find_rg,
    matched_text,
    ripgrep_command,
)
from course_agent.tools.guards.search import Found, search
from course_agent.tools.guards.shown import shown_line, shown_name

__all__ = ["GREP_TOOL", "MAX_LINE_CHARS", "GrepArgs", "find_rg", "ripgrep_command", "run_grep"]

MAX_LINE_CHARS = 120
TIME_BUDGET_S = 10.0  # after this rg is killed and the matches seen so far are reported


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="regular expression (ripgrep syntax), e.g. divide\\( or class \\w+Error; "
        "case-sensitive, start with (?i) to ignore case",
        max_length=MAX_FIELD_CHARS,
    )
    glob: str | None = Field(
        None,
        description="only search files matching this wildcard, e.g. *.js (any depth) or "
        "src/**/*.ts; default all files",
        max_length=MAX_FIELD_CHARS,
    )
    limit: int = Field(50, ge=1, le=500, description="maximum matching lines returned; default 50")


def _show_match(path: bytes, number: int, content: bytes) -> str:
    """One `path:line:content` line, content cut at 120 characters."""
    text, was_cut = matched_text(content)  # ripgrep's preview of a long line, CRLF's \r gone
    shown, cut = shown_line(text, MAX_LINE_CHARS, was_cut=was_cut)
    return f"{shown_name(os.fsdecode(path))}:{number}:{shown}{'…' if cut else ''}"


def run_grep(args: GrepArgs, ctx: ToolContext) -> ToolResult:
    """`path:line:content` sorted by (path, line), then notes in parentheses: matches withheld,
    a search stopped by the time budget, files rg could not read. Or `no matches for PATTERN`."""
    pattern, glob = args.pattern, args.glob
    if not pattern:
        raise ToolError("pattern is empty: give a regular expression, e.g. divide\\(")
    if "\0" in pattern or "\0" in (glob or ""):
        raise ToolError("pattern or glob contains a NUL byte; remove it")
    rg = find_rg()
    if rg is None:
        raise ToolError("grep needs ripgrep, which is not installed: run `pip install ripgrep`")
    deadline = time.monotonic() + TIME_BUDGET_S
    found = search(rg, ctx.root.resolve(), pattern, glob, args.limit, deadline)
    lines = [_show_match(*record) for record in found.lines]
    # Exit code 2 with nothing found and no "(os error N)" is rg refusing the pattern or glob.
    if found.code == 2 and not lines and not found.stopped and "(os error" not in found.error:
        raise ToolError(f"grep failed: {found.error or 'ripgrep exited with code 2'}")
    if not lines:
        lines = [f"no matches for {pattern}" + (f" in files matching {glob}" if glob else "")]
    meta = {
        "matches": found.total,
        "shown": len(found.lines),
        "stopped": found.stopped,
        "exact": not found.bound and not found.stopped,
        "big_files_left": found.rung == len(LADDER) - 1,
    }
    return ToolResult("\n".join(lines + _notes(found)), meta=meta)


def _notes(found: Found) -> list[str]:
    """What the lines do not show, one note each: matches withheld (and why the number is a
    bound), files left out for memory, files rg could not read, matches in hidden files."""
    notes, more = [], found.total - len(found.lines)
    advice = "narrow with glob or a stricter pattern"
    if found.stopped:
        notes.append(
            f"search stopped after {TIME_BUDGET_S:g} s with {found.total} matches seen so far; "
            f"{advice}"
        )
    elif found.bound:
        withheld = f"at least {more} more matches" if more else "more matches may be"
        notes.append(f"{withheld} withheld: {found.bound}; {advice}")
    elif more:
        notes.append(f"{more} more matches withheld; {advice}")
    if found.out_of_memory:
        notes.append(
            f"ripgrep ran out of its {RG_MEMORY >> 20} MB of memory even with files over "
            f"{BIG_FILE}B left out: the matches above may be incomplete"
        )
    elif found.rung == len(LADDER) - 1:
        notes.append(
            f"files over {BIG_FILE}B were not searched: one of them holds a line too long to "
            f"search within {RG_MEMORY >> 20} MB of memory"
        )
    if found.code == 2 and found.error:
        # The first complaint is enough: "rg: ./private.txt: Permission denied (os error 13)".
        notes.append(f"some files could not be read: {found.error.splitlines()[0]}")
    if found.withheld:  # whatever the pattern: no match in them is told, nor its absence
        files = f"{found.withheld} file{'' if found.withheld == 1 else 's'}"
        notes.append(f"{files} withheld: each holds a configured key, so none is searched")
    if found.hidden and not found.lines:  # where the matches are, if not where they may look
        (kind, first), *others = sorted(found.hidden.items(), key=lambda item: (-item[1], item[0]))
        hidden = f"{first} matching file{'' if first == 1 else 's'} hidden by {kind}"
        notes.append("not shown: " + hidden + "".join(f", {n} by {k}" for k, n in others))
    return [f"({note})" for note in notes]


GREP_TOOL = ToolDef(
    name="grep",
    description=(
        "Search the contents of files in the working directory with a regular expression "
        "(ripgrep syntax), returning matching lines as path:line:content sorted by path and "
        'line. Examples: pattern "divide\\(" (escape ( . [ for literal text), "TODO|FIXME", '
        '"(?i)error"; glob "*.js" or "src/**/*.ts" narrows the files searched. At most 50 '
        "lines by default, each cut at 120 characters; binary files and node_modules, .git and "
        "dist are skipped."
    ),
    args=GrepArgs,
    run=run_grep,
    read_only=True,
)
