"""The grader's unix sockets to a sandboxed kernel: the kernel makes them in the one folder it may
write, the grader hard-links each into a folder only it can write and connects there alone.

A link is made without following a symlink and checked where it lands (a socket of this user),
so a kernel that later swaps a name for a symlink or another socket steers no (re)connection.
Deliberately not handled: TCP (the sandbox has no network the grader shares) and restarts.
"""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["SOCKET_WAIT", "ChannelError", "grader_side", "kernel_side", "new_channel", "take"]

SOCKET_WAIT = 60.0  # seconds a kernel may take to make its five sockets (it takes about 0.3)


class ChannelError(RuntimeError):
    """A kernel's socket was not one it made where the grader expects it."""


def new_channel() -> Path:
    """A fresh folder of the grader's (mode 700) holding the kernel's side and the grader's.
    A unix socket's path has at most 107 bytes: it is short, in /tmp when it may be."""
    short = "/tmp" if os.access("/tmp", os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="course-agent-kernel-", dir=short))
    kernel_side(folder).mkdir(mode=0o700)
    grader_side(folder).mkdir(mode=0o700)
    return folder


def kernel_side(channel: Path) -> Path:
    """The folder bound writable into the sandbox: the connection file, the kernel's sockets."""
    return channel / "kernel"


def grader_side(channel: Path) -> Path:
    """The folder never bound into a sandbox: the grader's links to the kernel's sockets."""
    return channel / "grader"


def _open_folder(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def _take_one(name: str, kernel: int, grader: int) -> bool:
    """Link `name` from the kernel's folder into the grader's (False: not made yet), then require
    the link, which only the grader can change, to be a socket of this user."""
    try:  # linkat without AT_SYMLINK_FOLLOW: a symlink is linked as itself, never its target
        os.link(name, name, src_dir_fd=kernel, dst_dir_fd=grader, follow_symlinks=False)
    except FileNotFoundError:
        return False
    info = os.lstat(name, dir_fd=grader)
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        os.unlink(name, dir_fd=grader)
        raise ChannelError(f"the kernel's {name} is not a socket it made; nothing connects to it")
    return True


async def take(channel: Path, names: Sequence[str], alive: Callable[[], bool]) -> None:
    """Wait until the kernel made each socket of `names` on its side of `channel`, and link each
    onto the grader's side (ChannelError if one is not a socket, or none came in SOCKET_WAIT s).
    A kernel that died first is left to the caller: its client finds it dead."""
    kernel, grader = _open_folder(kernel_side(channel)), _open_folder(grader_side(channel))
    try:
        waiting, ends = list(names), time.monotonic() + SOCKET_WAIT
        while waiting and alive():
            waiting = [name for name in waiting if not _take_one(name, kernel, grader)]
            if waiting and time.monotonic() > ends:
                raise ChannelError(f"the kernel made no socket {waiting[0]} in {SOCKET_WAIT:g} s")
            if waiting:
                await asyncio.sleep(0.01)
    finally:
        os.close(kernel)
        os.close(grader)
