"""The glob tool: list the files whose relative path matches a wildcard, sorted and bounded.

The walk starts at the wildcard's literal directory prefix (src/**/*.js walks src only) and
wildcard.py matches each path in linear time. Deliberately not handled: directories as results,
negation (!pattern) and case-insensitive matching.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..paths import resolve_inside
from ..protocol import ToolContext, ToolDef, ToolError, ToolResult
from .walk import SKIP_DIRS, count_files, show_path, walk_files
from .wildcard import MAX_PATTERN_CHARS, Wildcard

__all__ = ["GLOB_TOOL", "GlobArgs", "run_glob"]

_SPECIAL = set("*?[{\\")  # a path segment without these is literal: the walk can start below it


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="wildcard matched against the whole relative path, e.g. **/*.js, "
        "src/**/*.{js,ts} or test/*.test.js",
        max_length=MAX_PATTERN_CHARS,
    )
    limit: int = Field(200, ge=1, le=2000, description="maximum paths returned; default 200")


def _split_prefix(pattern: str) -> tuple[str, str]:
    """`src/lib/**/*.js` -> (`src/lib`, `**/*.js`): the literal directories, then the rest."""
    segments = pattern.split("/")
    literal = 0
    # The last segment is always matched (it names the files), never walked into.
    while literal < len(segments) - 1 and not _SPECIAL & set(segments[literal]):
        literal += 1
    prefix = "/".join(segments[:literal])
    if pattern.startswith("/") and not prefix:
        prefix = "/"  # "/*" names the filesystem root, which resolve_inside will refuse
    return prefix, "/".join(segments[literal:])


def _plan(pattern: str, root: Path) -> tuple[str, Wildcard, int | None]:
    """Where to start walking, what to match below it, and how deep a match can be."""
    if not pattern.strip():
        raise ToolError("pattern is empty: give a wildcard such as **/*.js or src/*")
    if "\0" in pattern:
        raise ToolError("pattern contains a NUL byte: no file name can; check how it was built")
    original = pattern
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.endswith("/"):
        pattern += "**"  # "src/" almost always means "everything in src"
    prefix, rest = _split_prefix(pattern)
    if ".." in rest.split("/"):
        raise ToolError(
            f"pattern {original} has .. after a wildcard; glob lists files inside the working "
            "directory only, so write .. only before the first wildcard, or not at all"
        )
    # The one boundary check: the literal prefix is a path like any other.
    top = resolve_inside(root, prefix).relative_to(root).as_posix() if prefix else "."
    matcher = Wildcard(rest, shown=original)
    # Without "**" a match is at most as deep as the slashes in the pattern: prune deeper walks.
    max_depth = None if "**" in rest else rest.count("/")
    return ("" if top == "." else top), matcher, max_depth


def run_glob(args: GlobArgs, ctx: ToolContext) -> ToolResult:
    """Matching paths, sorted, one per line, then `(37 more withheld; ...)` past the limit; or
    `no files match **/*.py (the working directory holds 12 files)`."""
    root = ctx.root.resolve()
    top, matcher, max_depth = _plan(args.pattern, root)
    walked = matched = 0  # both exact: "37 more withheld", "the directory holds 12 files"

    def matches() -> Iterator[str]:
        nonlocal walked, matched
        for path in walk_files(root, top, max_depth):
            walked += 1
            if matcher.match(path):
                matched += 1
                yield path

    # nsmallest keeps `limit` paths in a heap, whatever the tree holds; the result is sorted.
    shown = heapq.nsmallest(args.limit, matches())
    lines = [show_path(f"{top}/{path}" if top else path) for path in shown]
    if not lines:
        whole_tree = not top and max_depth is None  # then the walk above counted every file
        total = walked if whole_tree else count_files(root)
        notes = [f"the working directory holds {total} file{'' if total == 1 else 's'}"]
        if top and not Path(root, top).is_dir():
            notes.insert(0, f"{top}/ is not a directory")
        if SKIP_DIRS & set(args.pattern.split("/")):
            *others, last = sorted(SKIP_DIRS)
            notes.append(f"{', '.join(others)} and {last} are never listed")
        content = f"no files match {args.pattern} ({'; '.join(notes)})"
        return ToolResult(content, meta={"matches": 0, "shown": 0})
    if matched > len(lines):
        lines.append(f"({matched - len(lines)} more withheld; narrow the pattern or raise limit)")
    return ToolResult("\n".join(lines), meta={"matches": matched, "shown": len(shown)})


GLOB_TOOL = ToolDef(
    name="glob",
    # Three things in a description: what it is for, the syntax, the limits.
    description=(
        "List files in the working directory whose relative path matches a wildcard, sorted, "
        "one per line. ** matches across directories, * any characters within one directory, "
        "? one character, [abc] one of a set, {js,ts} either alternative: for example **/*.js, "
        "src/**/*.{js,ts} or test/*.test.js. Lists files only, dotfiles included; skips "
        "node_modules, .git and dist at any depth."
    ),
    args=GlobArgs,
    run=run_glob,
    read_only=True,
)
