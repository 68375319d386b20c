"""Write a file the grader makes (CSV, JSON, report, feedback, LMS file, kept rows) as a new file:
never through a symbolic link, a FIFO or a hard link that was there before.

The text goes into a fresh file (O_CREAT | O_EXCL | O_NOFOLLOW) in the folder, which then takes
the file's name by rename: whatever had that name (a link to the instructor's gradebook, a FIFO, a
second name of a classmate's notebook) is replaced, never opened. Below the folder the instructor
named, each folder is opened without following a link (`write_below`), so a student's link in a
submissions folder does not carry feedback elsewhere.
Deliberately not handled: links in the folder the instructor named (that path is theirs).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

__all__ = ["UnsafeOutput", "write_below", "write_file"]

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeOutput(OSError):
    """A folder on the way to an output is a link or not a folder: nothing was written."""


def _write_in(folder: int, name: str, text: str) -> None:
    """`text` as the file `name` in the open folder `folder`: a fresh file, renamed into place."""
    fresh = f".{name}.{secrets.token_hex(6)}.new"
    fd = os.open(fresh, NEW_FILE, 0o666, dir_fd=folder)  # the umask decides, as for open()
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.rename(fresh, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(fresh, dir_fd=folder)
        raise


def _open_below(root: int, parts: Sequence[str], shown: Path) -> int:
    """The folder `parts` below the open folder `root`, each made if missing, none a link."""
    folder = os.dup(root)
    for part in parts:
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o777, dir_fd=folder)
        try:
            inner = os.open(part, FOLDER | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except OSError as exc:
            os.close(folder)
            raise UnsafeOutput(
                f"{shown}: {part} is a link or not a folder, so nothing was written there; "
                "give an output folder of its own"
            ) from exc
        os.close(folder)
        folder = inner
    return folder


def write_file(path: Path, text: str) -> None:
    """`text` as the file `path` (its folder as the instructor named it), replacing whatever had
    that name without opening it."""
    path = Path(path)
    folder = os.open(path.parent, FOLDER)
    try:
        _write_in(folder, path.name, text)
    finally:
        os.close(folder)


def write_below(root: Path, relative: Path, text: str) -> Path:
    """`text` as `root`/`relative`: `root` as named (made if missing), every folder below it made
    or opened without following a link; UnsafeOutput if one is a link. Returns the path."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    *parts, name = Path(relative).parts
    if Path(relative).is_absolute() or {"..", "."} & {*parts, name}:
        raise UnsafeOutput(f"{relative}: not a path below {root}")
    top = os.open(root, FOLDER)
    try:
        folder = _open_below(top, parts, root / relative)
    finally:
        os.close(top)
    try:
        _write_in(folder, name, text)
    finally:
        os.close(folder)
    return root / relative
