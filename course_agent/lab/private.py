"""A kernel's one writable folder: made fresh for it, the notebook's helper modules copied in
(bounded), and discarded afterwards without following anything the kernel left there.

No later step reads, copies or chmods what a kernel wrote: its answers arrive as messages, and
its folder is removed with the descriptor-based walk of shutil.rmtree, which follows no link.
Deliberately not handled: data files beside a notebook (only `*.py` modules come along; a folder
of classmates' notebooks is not theirs to read) and packages (folders) of helpers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["HELPER_BYTES", "HELPER_FILES", "discard", "private_folder"]

HELPER_FILES = 32  # at most this many helper modules are copied, in name order
HELPER_BYTES = 1_000_000  # each at most this size (a lab's own module is a few kilobytes)


def _read_helper(path: Path) -> bytes | None:
    """The bytes of a regular file at `path` itself (no link, FIFO or device), within
    HELPER_BYTES; None otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > HELPER_BYTES:
            return None
        data = os.read(fd, HELPER_BYTES + 1)  # one read: a regular file gives what it has
    finally:
        os.close(fd)
    return data if len(data) <= HELPER_BYTES else None


def private_folder(
    beside: Path | None = None, inside: str | None = None, prefix: str = "course-agent-private-"
) -> Path:
    """A new empty folder (in `inside`, default the temporary folder), with the `*.py` modules
    directly in `beside` (the notebook's folder) copied in: regular files only, none hidden, at
    most HELPER_FILES of HELPER_BYTES each, as JupyterLab's kernel would import them there."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=inside)).resolve()
    if beside is None:
        return folder
    try:
        names = sorted(entry.name for entry in os.scandir(beside) if entry.name.endswith(".py"))
    except OSError:
        return folder
    copied = 0
    for name in names:
        if name.startswith(".") or copied >= HELPER_FILES:
            continue
        data = _read_helper(Path(beside, name))
        if data is not None:
            (folder / name).write_bytes(data)
            copied += 1
    return folder


def _unlock(function: object, path: str, *_: object) -> None:
    """rmtree's error handler: a folder the kernel made unwritable (mode 000) is opened up,
    never through a link, and the removal retried once."""
    parent = os.path.dirname(path)
    with contextlib.suppress(OSError):
        for place in (parent, path):
            if stat.S_ISDIR(os.lstat(place).st_mode):
                os.chmod(place, 0o700)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def discard(folder: Path) -> None:
    """Remove `folder` and all a kernel left in it (links, FIFOs, hard links, mode-000 folders),
    following no link: each entry is unlinked where it is."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder, onerror=_unlock)
