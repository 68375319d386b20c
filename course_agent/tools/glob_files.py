"""The glob tool: list the files whose relative path matches a wildcard, sorted and bounded.

The wildcard is translated once into a regular expression and the walk starts at its literal
directory prefix (src/**/*.js walks src only). Deliberately not handled: directories as results,
negation (!pattern) and case-insensitive matching.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..paths import resolve_inside
from ..protocol import ToolContext, ToolDef, ToolError, ToolResult
from .walk import SKIP_DIRS, count_files, show_path, walk_files

__all__ = ["GLOB_TOOL", "GlobArgs", "run_glob", "translate_wildcard"]

_SPECIAL = set("*?[{\\")  # a path segment without these is literal: the walk can start below it


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="wildcard matched against the whole relative path, e.g. **/*.js, "
        "src/**/*.{js,ts} or test/*.test.js"
    )
    limit: int = Field(200, ge=1, le=2000, description="maximum paths returned; default 200")


def _translate_class(pattern: str, start: int) -> tuple[str, int]:
    """`[abc]`, `[!abc]` or `[^a-z]` starting at `start` -> (regex, index after the `]`)."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    i += negate
    end = pattern.find("]", i + 1)  # a `]` right after `[` or `[!` is a member, not the end
    if end < 0:
        raise ToolError(f"pattern {pattern} has a [ without a closing ]: write [abc], or \\[ for [")
    members = "".join(f"\\{c}" if c in "\\[]" else c for c in pattern[i:end])
    # Like * and ?, a class never matches "/": negated classes exclude it, others look ahead.
    regex = f"[^/{members}]" if negate else f"(?!/)[{members}]"
    return regex, end + 1


def translate_wildcard(pattern: str) -> str:
    """A wildcard -> a regular expression for re.fullmatch over a '/'-separated relative path.

    `**` as a whole segment crosses directories (zero or more); `*` and `?` stay within one;
    `[abc]` is a class; `{a,b}` an alternative (nestable); a backslash makes the next character
    literal. `**/*.{js,ts}` -> `(?:[^/]+/)*[^/]*\\.(?:js|ts)`.
    """
    out: list[str] = []
    depth = 0  # how many { are open: inside them "," separates alternatives
    i = 0
    while i < len(pattern):
        char = pattern[i]
        # A segment starts after "/", at the start, or at an alternative's start inside braces.
        at_segment_start = i == 0 or pattern[i - 1] == "/" or (depth and pattern[i - 1] in "{,")
        if pattern.startswith("**", i) and at_segment_start:
            after = pattern[i + 2 : i + 3]
            if after == "/":
                out.append("(?:[^/]+/)*")  # "**/": any number of directories, including none
                i += 3
                continue
            if after == "" or (depth and after in "},"):
                out.append(".*")  # a trailing "**": everything below
                i += 2
                continue
        if char == "*":
            out.append("[^/]*")
            i += 2 if pattern.startswith("**", i) else 1  # "a**b" means what "a*b" means
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            regex, i = _translate_class(pattern, i)
            out.append(regex)
        elif char == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        elif char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    if depth:
        raise ToolError(f"pattern {pattern} has a {{ without a closing }}: write {{js,ts}}")
    return "".join(out)


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


def _plan(pattern: str, root: Path) -> tuple[str, re.Pattern[str], int | None]:
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
    try:
        matcher = re.compile(translate_wildcard(rest), re.DOTALL)
    except re.error as exc:  # e.g. a class with a reversed range, [z-a]
        raise ToolError(f"pattern {original} is not a valid wildcard: {exc}") from None
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
            if matcher.fullmatch(path):
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
