"""Ignore rules as ripgrep ranks them and git reads their lines, so what glob lists is what grep
searches.

A directory's .rgignore, .ignore and .gitignore (and .git/info/exclude when it holds a .git folder)
hide paths below it, a deeper file before a shallower one, and the kinds ranked as ripgrep ranks
them; each file's lines are read as git reads them and matched in linear time (ignore_file.py).
Deliberately not handled: ignore files above the working directory, the user's global gitignore,
and case-insensitive matching.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from course_agent.tools.guards.ignore_file import (
    MAX_LINE_CHARS,
    MAX_LINE_WILDCARDS,
    MAX_WILDCARD_LINES,
    IgnoreFile,
)
from course_agent.tools.guards.ignore_lines import ignore_lines

__all__ = [
    "KINDS",
    "MAX_IGNORE_FILE",
    "MAX_LINE_CHARS",
    "MAX_LINE_WILDCARDS",
    "MAX_RULES_BYTES",
    "MAX_WILDCARDS_IN_FORCE",
    "MAX_WILDCARD_LINES",
    "IgnoreFile",
    "Rules",
    "read_ignore_file",
]

# ripgrep's precedence, highest first: a "!" line in .ignore re-includes what .gitignore hides.
KINDS = (".rgignore", ".ignore", ".gitignore", ".git/info/exclude")
MAX_IGNORE_FILE = 1 << 20  # bytes read from one ignore file; the lines past it are not applied
# Wildcard lines in force at once in one folder, over the files along its chain: each entry
# costs at most this many segment tests. A file that would pass it is not applied.
MAX_WILDCARDS_IN_FORCE = 1024
# Bytes of ignore files in force at once in one folder, its own and those of the folders above:
# a file past it is not applied. In memory a byte of names takes about 15: 60 MB at most.
MAX_RULES_BYTES = 4 << 20
# Per folder, per is_dir: (line, a test of the name) for each wildcard line that can match.


def read_ignore_file(path: str, limit: int = MAX_IGNORE_FILE) -> IgnoreFile | None:
    """The ignore file at `path`, read up to `limit` bytes (its last whole line), or None when
    it is missing, a symlink, not a regular file or unreadable.

    Opened without blocking, so a FIFO named .gitignore cannot hang the walk, and without
    following a symlink, so one to /dev/zero or to rules outside the working directory is not
    applied (git does not follow a symlinked .gitignore either).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            data = file.read(limit + 1)
    except OSError:
        return None
    cut = len(data) > limit
    if cut:  # the last whole line is the last line applied
        data = data[: data.rfind(b"\n", 0, limit) + 1]
    # Names arrive from os.fsdecode with surrogate escapes; decoding the same way lets them match.
    lines = ignore_lines(data.decode("utf-8", "surrogateescape").removeprefix("\ufeff"))
    return IgnoreFile(lines, size=len(data), cut=cut)


@dataclass(frozen=True)
class Rules:
    """The ignore files in force in one directory: a chain from the deepest directory that has
    some up to the working directory. `directory` is where `files` sit, relative to the root
    ("" for the root itself); a directory without ignore files shares its parent's Rules.
    `size` is the bytes of ignore files in force here, these and those above (at most
    MAX_RULES_BYTES), `wildcards` their wildcard lines (at most MAX_WILDCARDS_IN_FORCE);
    `complete` is False once some file in force was not applied in full."""

    directory: str = ""
    files: tuple[tuple[str, IgnoreFile], ...] = ()
    parent: Rules | None = None
    size: int = 0
    complete: bool = True
    wildcards: int = 0

    def below(self, root: Path, directory: str, names: frozenset[str] | None = None) -> Rules:
        """The Rules for `directory` (relative to `root`, inside this one), reading its ignore
        files. `names`, the directory's entries if already listed, spares the failed opens."""
        found, size, complete, wildcards = [], self.size, self.complete, self.wildcards
        for kind in KINDS:
            if names is None or kind.split("/")[0] in names:
                path = os.path.join(root, directory, kind)
                room = min(MAX_IGNORE_FILE, MAX_RULES_BYTES - size)
                if room <= 0:  # nothing more is held in this folder: what exists is not applied
                    complete = complete and not os.path.lexists(path)
                    continue
                loaded = read_ignore_file(path, room)
                if loaded is not None and wildcards + loaded.wildcards > MAX_WILDCARDS_IN_FORCE:
                    complete = False  # every entry below would pay for its lines: not applied
                elif loaded is not None:
                    found.append((kind, loaded))
                    size, complete = size + loaded.size, complete and loaded.complete
                    wildcards += loaded.wildcards
        if not found and complete == self.complete:
            return self
        return Rules(directory, tuple(found), self, size, complete, wildcards)

    def hidden_by(self, path: str, is_dir: bool) -> str | None:
        """The kind of ignore file that hides `path` (relative to the root), or None.

        Each kind is asked from the deepest directory up, and the first file of that kind with a
        matching line answers for it; then the kinds rank as in KINDS.
        """
        verdicts: dict[str, bool] = {}
        node: Rules | None = self
        while node is not None:
            relative = path[len(node.directory) + 1 :] if node.directory else path
            for kind, file in node.files:
                if kind not in verdicts and (verdict := file.verdict(relative, is_dir)) is not None:
                    verdicts[kind] = verdict
            node = node.parent
        for kind in KINDS:
            if kind in verdicts:
                return kind if verdicts[kind] else None
        return None
