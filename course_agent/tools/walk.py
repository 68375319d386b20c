"""Walk a working directory the way a read-only tool should: skip the noise, never leave the root.

`walk_files` is shared by glob and by the "the working directory holds N files" count; `show_path`
turns any file name into one printable line. Deliberately not handled: .gitignore rules (only the
SKIP_DIRS are skipped) and matching (glob does that).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..paths import resolve_inside
from ..protocol import ToolError

__all__ = ["SKIP_DIRS", "count_files", "show_path", "walk_files"]

# Skipped at any depth, by every tool: one call would otherwise return ten thousand noise files.
SKIP_DIRS = frozenset({".git", "dist", "node_modules"})

# Control characters would break "one path per line"; they are shown as escapes instead.
_ESCAPES = {code: f"\\x{code:02x}" for code in [*range(32), 127]} | {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}


def show_path(relative: str) -> str:
    """`relative` as one printable line: "a\\nb.txt" for a name with a newline in it.

    Names that are not valid UTF-8 arrive with surrogate escapes (os.fsdecode); they are shown
    as \\xNN too, so the result can always be encoded and sent to the model.
    """
    if relative.isprintable():
        return relative
    text = relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text.translate(_ESCAPES)


def _is_file_inside(root: Path, link: str) -> bool:
    """A symlink counts as a file only when it ends at a regular file inside the root."""
    try:
        return resolve_inside(root, link).is_file()  # the one boundary check, loops refused
    except ToolError:
        return False


def walk_files(root: Path, top: str = "", max_depth: int | None = None) -> Iterator[str]:
    """Yield every file below `root`/`top` as a '/'-separated path relative to `top`, unordered.

    `root` must be resolved. Symlinked directories are never entered (so no loop and no way out);
    a symlinked file is listed only if it resolves inside `root`. `max_depth` 0 lists `top` alone,
    1 also its subdirectories, and so on. Unreadable directories are skipped silently, as with
    find 2>/dev/null.
    """
    if any(part in SKIP_DIRS for part in top.split("/")):
        return
    # A stack of (prefix relative to top, absolute directory, depth): depth-first, one open fd.
    stack = [("", os.path.join(root, top), 0)]
    while stack:
        prefix, directory, depth = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    # DirEntry answers from the directory listing itself (d_type): no stat call,
                    # which is what keeps this walk close to find's speed.
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS and (max_depth is None or depth < max_depth):
                            stack.append((f"{prefix}{entry.name}/", entry.path, depth + 1))
                    elif entry.is_file(follow_symlinks=False) or (
                        entry.is_symlink() and _is_file_inside(root, entry.path)
                    ):
                        yield prefix + entry.name
        except OSError:
            continue


def count_files(root: Path) -> int:
    """How many files glob could list at all: the figure an empty result reports."""
    return sum(1 for _ in walk_files(root))
