"""The one boundary every tool shares: a path the model names must resolve inside the root.

Resolve first (symlinks included, loops refused), then compare with the resolved root plus a
separator. Deliberately not handled here: whether the file exists or what kind it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from .protocol import ToolError

__all__ = ["is_inside", "resolve_inside"]


def is_inside(root: Path, target: Path) -> bool:
    """True when the already-resolved `target` is `root` itself or below it.

    The separator matters: without it /work/app-secrets would pass as "inside" /work/app.
    """
    return target == root or str(target).startswith(str(root).rstrip(os.sep) + os.sep)


def resolve_inside(root: Path, path: str) -> Path:
    """Resolve `path` (relative to `root`, or absolute) and refuse it unless it stays inside.

    Raises ToolError with a message the model can act on; never returns a path outside `root`.
    """
    if not path or not path.strip():
        raise ToolError(
            "path is empty: give a path relative to the working directory, e.g. src/a.js"
        )
    if "\0" in path:
        raise ToolError("path contains a NUL byte: no file name can; check how it was built")
    if path.startswith("~"):
        # Nothing expands ~ here; the model almost certainly means a home directory: outside.
        raise ToolError(f"{path} is outside the working directory: ~ is a home directory, not here")
    root = root.resolve()
    try:
        # root / "/etc/passwd" is "/etc/passwd": an absolute path is judged on where it points.
        target = (root / path).resolve()
        # Non-strict resolve gives up at a symlink loop and hands back the rest unresolved, then
        # normalised: "loop/../link-out" comes back as "link-out", a symlink still pointing out.
        # A fully resolved path resolves to itself; one that does not is refused.
        settled = os.path.realpath(target) == str(target)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python < 3.13
        raise ToolError(
            f"{path} cannot be resolved ({type(exc).__name__}): a symlink loop?"
        ) from None
    except ValueError:  # UnicodeEncodeError: a lone surrogate such as "\ud800" names no file
        raise ToolError(
            "path is not valid text (a lone surrogate?): no file has that name"
        ) from None
    if not settled:
        raise ToolError(f"{path} cannot be resolved: it runs through a symlink loop")
    if not is_inside(root, target):
        raise ToolError(
            f"{path} is outside the working directory; paths must stay inside {root.name}/"
        )
    return target
