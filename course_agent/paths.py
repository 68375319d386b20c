"""The one boundary every tool shares: a path the model names must resolve inside the root.

The course's rule: resolve to an absolute path, then compare with the root plus a separator
(never scan the string for ".."). Deliberately not handled here: what was opened after the check
(tools/guards/opened.py re-checks the descriptor), and what kind of file it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.protocol import ToolError

__all__ = ["is_inside", "resolve_inside"]


def is_inside(root: Path, target: Path) -> bool:
    """True when the already-resolved `target` is `root` itself or below it.

    The separator matters: without it /work/app-old would pass as "inside" /work/app.
    """
    return target == root or str(target).startswith(str(root).rstrip(os.sep) + os.sep)


def resolve_inside(root: Path, path: str) -> Path:
    """Resolve `path` (relative to `root`, or absolute) and refuse it unless it stays inside.

    Only the resolved path decides: `~notes.txt` is a name in the root like any other (nothing
    here expands `~`). Raises ToolError with a message the model can act on.
    """
    if not path.strip():
        raise ToolError("path is empty: give a path relative to the working directory, e.g. a.js")
    if len(path) > MAX_FIELD_CHARS:  # Python's departure: no file has a longer path
        raise ToolError(
            f"path is {len(path):,} characters long; at most {MAX_FIELD_CHARS} are accepted"
        )
    root = root.resolve()
    target = _resolved(root / path, path)  # root / "/etc/passwd" is /etc/passwd: judged too
    if not is_inside(root, target):
        raise ToolError(
            f"{path} is outside the working directory; paths must stay inside {root.name}/"
        )
    return target


def _resolved(path: Path, shown: str) -> Path:
    """`path` with every symlink followed, or a ToolError for what Python cannot resolve: a NUL
    byte, a lone surrogate, a symlink loop (where non-strict resolve hands back the rest
    unresolved: "loop/../link-out" would come back as "link-out", still pointing out)."""
    if "\0" in shown:
        raise ToolError("path contains a NUL byte: no file name can; check how it was built")
    try:
        target = path.resolve()
        settled = os.path.realpath(target) == str(target)  # resolved paths resolve to themselves
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop on Python < 3.13
        settled = False
    except ValueError:  # UnicodeEncodeError: a lone surrogate such as "\ud800" names no file
        raise ToolError(
            "path is not valid text (a lone surrogate?): no file has that name"
        ) from None
    if not settled:
        raise ToolError(f"{shown} cannot be resolved: it runs through a symlink loop")
    return target
