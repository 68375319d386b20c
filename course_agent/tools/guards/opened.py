"""What was opened is checked, not only what was named: a descriptor's real path must be inside.

paths.resolve_inside judges a name; between that check and the open, a folder on the way can be
swapped for a symlink leading out. So each open here re-checks the descriptor (/proc/self/fd on
Linux, F_GETPATH on macOS, else device and inode against the path resolved afresh), and refuses
what is not a regular file. Deliberately not handled: reading what was opened (textfile.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from course_agent.paths import is_inside, resolve_inside
from course_agent.protocol import ToolError

__all__ = ["open_directory_inside", "open_inside", "open_regular"]

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


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

    O_NOFOLLOW refuses a last component that became a symlink; O_NONBLOCK keeps a file that
    became a FIFO from blocking the open; the descriptor's own path must be inside `root`.
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


def _check_regular(mode: int, shown: str) -> None:
    """Refuse directories, FIFOs, devices and sockets with a message naming what to do instead."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        example = "*" if shown == "." else f"{shown}/*"
        raise ToolError(f"{shown} is a directory; list its files with glob, e.g. {example}")
    kind = _KINDS.get(stat.S_IFMT(mode), "a special file")
    raise ToolError(f"{shown} is {kind}, not a regular file; read_file reads text files only")


def open_regular(root: Path, target: Path, shown: str) -> tuple[IO[bytes], os.stat_result]:
    """Open a regular file inside `root` for reading; refuse anything else without reading it
    (checked before the open, so a FIFO is never opened, and again on the descriptor)."""
    try:
        _check_regular(os.stat(target).st_mode, shown)
        fd = open_inside(root, target, shown)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"{shown} does not exist; find files with glob, e.g. **/*.js") from None
    except OSError as exc:  # permission denied, a symlink loop (Python 3.13 resolves those)...
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    try:
        _check_regular(info.st_mode, shown)  # it could have been swapped since the stat
    except ToolError:
        os.close(fd)
        raise
    return open(fd, "rb"), info
