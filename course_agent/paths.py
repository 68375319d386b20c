"""The one boundary every tool shares: a path the model names must resolve inside the root.

Resolve first (symlinks included, loops refused), then compare with the resolved root plus a
separator; after opening, check the same of what was opened, since a directory on the way may
have become a symlink in between. Deliberately not handled here: what kind of file it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from course_agent.protocol import ToolError

__all__ = ["MAX_PATH_CHARS", "is_inside", "open_directory_inside", "open_inside", "resolve_inside"]

MAX_PATH_CHARS = 4096  # Linux's PATH_MAX: no longer path can be opened anyway
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def is_inside(root: Path, target: Path) -> bool:
    """True when the already-resolved `target` is `root` itself or below it.

    The separator matters: without it /work/app-old would pass as "inside" /work/app.
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
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(
            f"path is {len(path):,} characters long; at most {MAX_PATH_CHARS} are accepted"
        )
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


def _opened_path(fd: int) -> str | None:
    """Where the kernel says the open descriptor `fd` is; None where it cannot say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")  # Linux
    except OSError:
        pass
    try:
        import fcntl

        return os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
    except (ImportError, AttributeError, OSError):  # not macOS: no F_GETPATH, or no fcntl
        return None


def _opened_inside(root: Path, fd: int, target: Path) -> bool:
    """Whether the descriptor `fd`, opened at `target`, is inside the resolved `root`: by its
    real path, or where the system cannot tell one, by its device and inode against `target`
    resolved afresh."""
    opened = _opened_path(fd)
    if opened is not None:
        return is_inside(root, Path(opened))
    info, fresh = os.fstat(fd), os.stat(resolve_inside(root, str(target)))
    return (info.st_dev, info.st_ino) == (fresh.st_dev, fresh.st_ino)


def open_inside(root: Path, target: Path, shown: str) -> int:
    """Open `target` (as resolve_inside returned it) read-only; return the descriptor.

    The check and the open are two steps: between them a directory on the way can be swapped
    for a symlink leading out. So the descriptor is checked too: its real path must be inside
    `root` (or, where the system cannot tell a descriptor's path, its device and inode must be
    those of the path resolved afresh). O_NOFOLLOW refuses a last component that became a
    symlink; O_NONBLOCK keeps a file that became a FIFO from blocking the open.
    """
    fd = os.open(target, _OPEN_FLAGS)
    try:
        inside = _opened_inside(root.resolve(), fd, target)
    except BaseException:
        os.close(fd)
        raise
    if not inside:
        os.close(fd)
        raise ToolError(
            f"{shown} changed while it was being opened and now leads outside the working "
            f"directory; paths must stay inside {root.name}/"
        )
    return fd


def open_directory_inside(root: Path, directory: str) -> int | None:
    """Open `directory` (a path below the resolved `root`) for listing, checked as open_inside
    checks a file: None when it is gone, unreadable, or no longer inside `root` (a folder on the
    way swapped for a symlink since it was seen). The root comes resolved; paths stay strings."""
    try:
        fd = os.open(directory, _OPEN_FLAGS | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        opened = _opened_path(fd)
        if opened is not None:
            top = str(root)
            inside = opened == top or opened.startswith(top.rstrip(os.sep) + os.sep)
        else:
            inside = _opened_inside(root, fd, Path(directory))
    except (OSError, ToolError):
        inside = False
    if inside:
        return fd
    os.close(fd)
    return None
