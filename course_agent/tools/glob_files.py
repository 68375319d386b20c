"""The glob tool: list the files whose relative path matches a wildcard, sorted and bounded.

The walk starts at the wildcard's literal directory prefix (src/**/*.js walks src only) and
wildcard.py matches each path in linear time. Deliberately not handled: directories as results,
negation (!pattern) and case-insensitive matching.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.paths import resolve_inside
from course_agent.protocol import ToolContext, ToolDef, ToolError, ToolResult
from course_agent.tools.guards.keyfiles import is_key_name
from course_agent.tools.guards.shown import name_test, shown_name
from course_agent.tools.guards.walk import COURSE_SKIPS, SKIP_DIRS, Walk, linked_prefix
from course_agent.tools.guards.wildcard import Wildcard

__all__ = ["GLOB_TOOL", "TIME_BUDGET_S", "WALK_BUDGET", "GlobArgs", "run_glob"]

# Entries a walk may look at in all, unless the first page fills later: past it, counts become
# lower bounds. 5,000 keeps a first page on 300,000 files near 10 ms (20,000 took 40 ms) and the
# counts exact on a project of a few thousand files (benchmarks/first_page.py measures it).
WALK_BUDGET = 5_000
TIME_BUDGET_S = 10.0  # the whole call, page and counts: past it the walk stops and says so
RULES_CUT = "some ignore files were too large to apply in full: paths they hide may be listed"

_SPECIAL = set("*?[{\\")  # a path segment without these is literal: the walk can start below it


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="wildcard matched against the whole relative path, e.g. **/*.js, "
        "src/**/*.{js,ts} or test/*.test.js",
        max_length=MAX_FIELD_CHARS,
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


def run_glob(
    args: GlobArgs, ctx: ToolContext, *, budget: int = WALK_BUDGET, seconds: float = TIME_BUDGET_S
) -> ToolResult:
    """Matching paths, sorted, one per line, then `(37 more withheld; ...)` past the limit; or
    `no files match **/*.py (the working directory holds 12 files)`. Counts are exact within
    `budget` entries walked, lower bounds past it; the page is complete unless the walk ran
    out of its `seconds`, which the result then says."""
    root = ctx.root.resolve()
    top, matcher, max_depth = _plan(args.pattern, root)
    if link := linked_prefix(root, _split_prefix(args.pattern)[0]):  # the walk's symlink rule
        meta = {"matches": 0, "shown": 0, "exact": True, "stopped": False}
        return ToolResult(_through_link(args.pattern, link), meta=meta)
    walk = Walk(root, top, max_depth, time.monotonic() + seconds, names=name_test(matcher.names_in))
    shown: list[str] = []
    matched = 0
    # The walk is in sorted order: the first `limit` matches are the page. Once it is full,
    # counting the rest goes on only while the budget lasts.
    for path in walk:
        matched += 1
        if len(shown) < args.limit:
            shown.append(path)
            if len(shown) == args.limit:
                walk.budget = max(walk.walked, budget)
    meta = {
        "matches": matched,
        "shown": len(shown),
        "exact": walk.complete,
        "stopped": walk.stopped,
    }
    if not shown:
        return ToolResult(_nothing_found(args.pattern, root, top, walk, budget), meta=meta)
    lines = [shown_name(f"{top}/{path}" if top else path) for path in shown]
    notes = [_withheld(walk, matched - len(shown), len(shown) == args.limit, seconds)]
    notes += [walk.hidden_note()] if walk.hidden else []
    notes += [RULES_CUT] if walk.rules_cut else []
    return ToolResult("\n".join(lines + [f"({note})" for note in notes if note]), meta=meta)


def _through_link(pattern: str, link: str) -> str:
    """No walk through a symlink, even one the pattern names: as `**` and grep never do."""
    return (
        f"no files match {pattern} ({shown_name(link)} is a symlink: glob neither enters nor "
        "lists symlinks; name the folder it points to)"
    )


def _withheld(walk: Walk, withheld: int, page_full: bool, seconds: float) -> str:
    """The one note on what the page does not show: how many more match, and why that number
    is a bound when it is one (a budget in entries or in time)."""
    if walk.stopped and not page_full:  # the page itself may miss some
        return (
            f"listing stopped after {seconds:g} s and {walk.walked} entries walked: more "
            "files may match; narrow the pattern, e.g. start it with a folder"
        )
    if walk.complete:
        return f"{withheld} more withheld; narrow the pattern or raise limit" if withheld else ""
    more = f"at least {withheld} more withheld" if withheld else "more may be withheld"
    why = f"{seconds:g} s and {walk.walked} entries" if walk.stopped else f"{walk.walked} entries"
    return f"{more}; counting stopped after {why} walked; narrow the pattern or raise limit"


def _nothing_found(pattern: str, root: Path, top: str, walk: Walk, budget: int) -> str:
    """`no files match PATTERN (notes)`: how many files there are where the walk looked, and
    why some are not listed. Only when the walk looked nowhere (its top is not a folder, or
    hidden) is the whole working directory counted, within `budget` entries."""
    if walk.stopped:
        return (
            f"no files match {pattern} in the {walk.walked} entries walked before the time "
            "budget ran out; narrow the pattern, e.g. start it with a folder such as src/"
        )
    notes = []
    if walk.blocked and is_key_name(walk.blocked):
        notes.append(f"{top}/ is never listed: its name is a key file's, as grep never searches it")
    elif walk.blocked and walk.blocked not in SKIP_DIRS:  # a skipped name gets its note below
        notes.append(f"{top}/ is hidden by {walk.blocked}")
    elif top and not Path(root, top).is_dir():
        notes.append(f"{top}/ is not a directory")
    counted, where = walk, (f"{top}/" if top else "the working directory")
    if walk.blocked or (top and not Path(root, top).is_dir()):  # nothing walked: count it all
        counted, where = Walk(root, deadline=walk.deadline), "the working directory"
        counted.budget = budget
        for _ in counted:
            pass
    notes.append(_holds(counted, where))
    if counted.hidden:
        notes.append(counted.hidden_note())
    if counted.rules_cut or walk.rules_cut:
        notes.append(RULES_CUT)
    named = set(pattern.split("/"))
    if COURSE_SKIPS & named:
        *others, last = sorted(COURSE_SKIPS)
        notes.append(f"{', '.join(others)} and {last} are never listed")
    if python_skips := sorted((SKIP_DIRS - COURSE_SKIPS) & named):
        *others, last = python_skips
        names = f"{', '.join(others)} and {last} are" if others else f"{last} is"
        notes.append(f"{names} never listed")
    return f"no files match {pattern} ({'; '.join(notes)})"


def _holds(walk: Walk, where: str) -> str:
    """`the working directory holds 12 files`, for what `walk` covered: its levels when the
    pattern limited its depth, and what it could not know (a budget, unreadable folders)."""
    files = f"{walk.files} file{'' if walk.files == 1 else 's'}"
    known = walk.complete and not walk.unreadable
    text = f"{where} holds {files}" if known else f"{where} holds at least {files}"
    if walk.max_depth is not None:
        levels = (
            "at its top level" if walk.max_depth == 0 else f"in its top {walk.max_depth + 1} levels"
        )
        text += f" {levels}"
        if walk.beyond:  # the files below were never looked at: say where to look
            folders = f"{walk.beyond} folder{'' if walk.beyond == 1 else 's'}"
            text += f", and {folders} below: a pattern starting with **/ looks in them too"
    if walk.unreadable:
        text += (
            f"; {walk.unreadable} folder{'' if walk.unreadable == 1 else 's'} could not be "
            "read (no permission, or too deep to open)"
        )
    return text


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
