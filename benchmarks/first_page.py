"""glob's first page on a wide tree of 300,000 empty files, against `find` and `rg --files`
piped into `head`, which stop as soon as they have printed a page.

This is the cost the walk budget bounds: the page itself fills after a few hundred entries, and
every entry walked past it is spent on the withheld count. Deliberately not handled: deep or
ignore-ridden trees (search.py's real tree has those) and cold caches.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from measure import run_command, time_together
from report import Row, budget_stops

from course_agent.protocol import ToolContext
from course_agent.tools import GLOB_TOOL
from course_agent.tools.glob_files import WALK_BUDGET
from course_agent.tools.grep_files import find_rg

__all__ = ["FOLDERS", "PER_FOLDER", "first_page_rows", "make_wide_tree"]

FOLDERS, PER_FOLDER = 300, 1000  # 300,000 files: d000/f0000.txt ... d299/f0999.txt
PAGE = 200  # glob's default limit


def make_wide_tree(root: Path) -> float:
    """FOLDERS x PER_FOLDER empty files under `root` (inodes only, no data); seconds taken."""
    start = time.perf_counter()
    for folder in range(FOLDERS):
        where = root / f"d{folder:03d}"
        where.mkdir(parents=True)
        for file in range(PER_FOLDER):
            os.close(os.open(where / f"f{file:04d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    return time.perf_counter() - start


def _head(command: str, root: Path) -> bytes:
    return run_command(["sh", "-c", f"{command} | head -n {PAGE}"], root)


def first_page_rows(scratch: Path, repeat: int, notes: list[str]) -> list[Row]:
    root = scratch / "wide"
    seconds = make_wide_tree(root)
    rg = find_rg() or "rg"
    metas: list[dict[str, Any]] = []
    arguments = GLOB_TOOL.args.model_validate({"pattern": "**/*.txt"})  # the page fills at once

    def ours_call() -> None:
        metas.append(GLOB_TOOL.run(arguments, ToolContext(root)).meta)

    find = "find . -name '*.txt' -type f"
    files = f"{rg} --no-config --files -uu --glob='*.txt'"
    ours, theirs_find, theirs_rg = time_together(
        [
            ours_call,
            lambda: _head(find, root),
            lambda: _head(files, root),
        ],
        repeat,
    )
    invalid = budget_stops(metas)
    label = f"glob: first page of `**/*.txt` on {FOLDERS * PER_FOLDER:,} files"
    rows = [
        Row.timed(
            label, ours, f"`{find} \\| head -{PAGE}`", theirs_find, under=0.020, invalid=invalid
        ),
        Row.timed(label, ours, f"`rg --files -uu \\| head -{PAGE}`", theirs_rg, invalid=invalid),
    ]
    meta = metas[-1]
    notes.append(
        f"glob first page: {FOLDERS * PER_FOLDER:,} empty files built in {seconds:.0f} s; "
        f"{meta['shown']} shown, {meta['matches']:,} counted "
        f"({'exact' if meta['exact'] else f'a bound: WALK_BUDGET is {WALK_BUDGET:,} entries'})"
    )
    return rows
