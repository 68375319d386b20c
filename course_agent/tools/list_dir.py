"""What the extension lab's list_dir tool runs: one directory's entries, sorted, bounded.

The lab's students write the tool's name, description and schema (labs/day03-extensions.ipynb)
with two parameters, `path` and `limit`; this is the body they plug in. Deliberately not handled:
recursion (glob lists a tree), sizes and dates, and ignore files (node_modules, .git and dist are
skipped, as glob and grep skip them; .gitignore is not read).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator
from typing import Any

from course_agent.paths import resolve_inside
from course_agent.protocol import ToolContext, ToolError, ToolResult
from course_agent.tools.guards.walk import COURSE_SKIPS, show_path

__all__ = ["ENTRY_BUDGET", "run_list_dir"]

# Entries counted in one directory: past it, the number withheld is a lower bound. The page itself
# (the `limit` first names) is always right among the entries counted.
ENTRY_BUDGET = 20_000


def _entries(folder: str) -> Iterator[str]:
    """Names in `folder`, directories with a trailing "/"; a symlink is a name, not followed."""
    with os.scandir(folder) as scan:
        for entry in scan:
            if entry.name in COURSE_SKIPS:
                continue
            yield entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")


def run_list_dir(args: Any, ctx: ToolContext) -> ToolResult:
    """`args.path`'s entries, sorted, one per line, at most `args.limit`, then how many were
    withheld; a file, a missing path or one outside the working directory is refused."""
    target = resolve_inside(ctx.root, args.path)
    if not target.is_dir():
        if target.exists():
            raise ToolError(f"{args.path} is a file, not a directory: read it with read_file")
        raise ToolError(f"{args.path} does not exist: list its parent, or glob for its name")
    counted = 0

    def counting() -> Iterator[str]:
        nonlocal counted
        for name in _entries(str(target)):
            counted += 1
            yield name
            if counted == ENTRY_BUDGET:
                return

    page = heapq.nsmallest(args.limit, counting())
    if not page:
        return ToolResult(f"{args.path} is empty", meta={"entries": 0})
    lines = [show_path(name) for name in page]
    withheld = counted - len(page)
    if counted == ENTRY_BUDGET:
        lines.append(f"(at least {withheld} more withheld; counting stopped at {ENTRY_BUDGET})")
    elif withheld:
        lines.append(f"({withheld} more withheld; raise limit, or glob for what you need)")
    return ToolResult("\n".join(lines), meta={"entries": counted, "shown": len(page)})
