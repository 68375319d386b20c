"""Walk a working directory the way a read-only tool should: skip the noise, never leave the root.

`Walk` yields files in sorted order, so a first page needs no full listing, and it counts what it
looked at and what ignore rules hid. Deliberately not handled: matching (glob does that).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from course_agent.paths import open_directory_inside
from course_agent.tools.guards.ignore import KINDS, MAX_RULES_BYTES, Rules
from course_agent.tools.guards.keyfiles import is_key_name

__all__ = [
    "COURSE_SKIPS",
    "SKIP_DIRS",
    "WALK_BUDGET",
    "Visibility",
    "Walk",
    "is_skipped",
    "show_path",
    "walk_files",
]

# Entries a walk may look at for a count once its first page is full: past it, a count that
# would need the whole tree ("the working directory holds N files") is given as a lower bound.
WALK_BUDGET = 20_000

# Skipped at any depth, by every tool, even where no ignore file names them: one call would
# otherwise return ten thousand noise files. The course names the first three.
COURSE_SKIPS = frozenset({".git", "dist", "node_modules"})
SKIP_DIRS = COURSE_SKIPS | {
    ".venv",
    "venv",
    "__pycache__",
    ".ipynb_checkpoints",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
}

_IGNORE_NAMES = frozenset(kind.split("/")[0] for kind in KINDS)  # .gitignore, ..., .git
# A walk lists each folder through a descriptor opened within its parent's (not on Windows:
# there a listing goes by its path). One descriptor is held per level, up to _HELD_LEVELS.
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0)
_HELD_LEVELS = 64
# Bytes of ignore files a Visibility keeps read, over all the folders it was asked about.
_KEPT_BYTES = 4 * MAX_RULES_BYTES

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


def is_skipped(name: str) -> bool:
    """A folder no walk enters: SKIP_DIRS, and a name of a key file (ripgrep's exclusion of
    `.env` skips a folder `.env/` too, often a virtualenv)."""
    return name in SKIP_DIRS or is_key_name(name)


def _open_folder(root: Path, path: str, name: str, parent: int | None) -> int | None:
    """A descriptor for the folder `path` (below `root`), named `name` in the folder `parent`
    is open on; None when it is gone, unreadable or not inside `root`.

    Opened by its name within its parent, itself inside, and not through a symlink
    (O_NOFOLLOW): so it is inside, whatever was swapped since the parent was listed. Without a
    parent descriptor (the top of the walk, very deep folders) the path is opened and checked.
    """
    if parent is None:
        return open_directory_inside(root, path)
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError:
        return None


def _listing(folder: int | str) -> tuple[list[str], frozenset[str]]:
    """A folder's entries (by descriptor, or path where descriptors cannot be listed) as sorted
    keys, a folder's with a "/" appended, so that a depth-first walk yields sorted paths
    ("a.txt" < "a/b" < "a0"); and which ignore files (and .git) it holds. Symlinks are left
    out, as ripgrep leaves them. Unreadable: nothing, as find 2>/dev/null."""
    keys: list[str] = []
    found: set[str] = set()
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                # DirEntry answers from the directory listing itself (d_type): no stat call,
                # which is what keeps this walk close to find's speed.
                name = entry.name
                if name in _IGNORE_NAMES:
                    found.add(name)
                if entry.is_dir(follow_symlinks=False):
                    keys.append(name + "/")
                elif entry.is_file(follow_symlinks=False):
                    keys.append(name)
    except OSError:
        pass
    keys.sort()
    return keys, frozenset(found)


class Walk:
    """Every file below `root`/`top` as a '/'-separated path relative to `top`, in sorted order.

    `root` must be resolved. Symlinks are neither entered nor listed (no loop, no way out, and
    ripgrep never searches them). `max_depth` 0 lists `top` alone, 1 also its subdirectories.
    Skipped folders (`is_skipped`) and what ignore files hide are not entered or listed.
    While and after iterating: `walked` entries looked at, `hidden` per kind of ignore file,
    `complete` once the walk reached its end, `blocked` when `top` itself is skipped or hidden,
    `stopped` when it ended at its `deadline`, `rules_cut` when some ignore file met on the way
    was too large to apply in full. Set `budget` (entries) at any time to stop the walk there.
    """

    def __init__(
        self,
        root: Path,
        top: str = "",
        max_depth: int | None = None,
        deadline: float | None = None,
    ) -> None:
        self.root, self.top, self.max_depth, self.deadline = root, top, max_depth, deadline
        self.budget: int | None = None
        self.walked = 0
        self.hidden: Counter[str] = Counter()
        self.complete = self.stopped = self.rules_cut = False
        self.blocked: str | None = None  # "node_modules" or ".gitignore": why top is not walked

    def _out_of_time(self) -> bool:
        """Whether the deadline (time.monotonic) has passed; then the walk is `stopped`."""
        self.stopped = self.deadline is not None and time.monotonic() >= self.deadline
        return self.stopped

    def __iter__(self) -> Iterator[str]:
        try:
            rules = Visibility(self.root, self.deadline).rules_in(self.top)
        except TimeoutError:
            self.stopped = True
            return
        if isinstance(rules, str):
            self.blocked, self.complete = rules, True
            return
        self.rules_cut = not rules.complete
        base = f"{self.top}/" if self.top else ""  # rules want paths from the root
        keys, _, fd = self._enter(self.top, self.top, None, hold=True)
        # A stack of (prefix relative to top, rules in force, the listing, depth, descriptor):
        # each listing is read whole; a folder's descriptor stays open while its subfolders
        # are opened within it.
        stack = [("", rules, iter(keys), 0, fd)]
        try:
            while stack:
                prefix, rules, keys, depth, fd = stack[-1]
                ruled = bool(rules.files) or rules.parent is not None  # any ignore file in force?
                for key in keys:
                    if self.budget is not None and self.walked >= self.budget:
                        return
                    if not self.walked % 64 and self._out_of_time():  # a cheap, regular check
                        return
                    self.walked += 1
                    is_dir = key[-1] == "/"
                    path = prefix + (key[:-1] if is_dir else key)
                    if is_dir and is_skipped(key[:-1]):
                        continue
                    if ruled and (hidden_by := rules.hidden_by(base + path, is_dir)):
                        self.hidden[hidden_by] += 1
                        continue
                    if not is_dir:
                        yield path
                    elif self.max_depth is None or depth < self.max_depth:
                        hold = depth < _HELD_LEVELS
                        inner, found, inner_fd = self._enter(base + path, key[:-1], fd, hold)
                        below = rules.below(self.root, base + path, found) if found else rules
                        stack.append((path + "/", below, iter(inner), depth + 1, inner_fd))
                        self.rules_cut = self.rules_cut or not below.complete
                        if found and self._out_of_time():  # ignore files may take a while
                            return
                        break  # walk the subdirectory now: its paths sort before the next entry
                else:
                    stack.pop()
                    if fd is not None:
                        os.close(fd)
            self.complete = True
        finally:  # stopped by the budget, or abandoned by the caller: close what is held
            for *_, held in stack:
                if held is not None:
                    os.close(held)

    def _enter(
        self, path: str, name: str, parent: int | None, hold: bool
    ) -> tuple[list[str], frozenset[str], int | None]:
        """The folder `path` (from the root), named `name` in the folder `parent` is open on:
        its keys and ignore files, and its descriptor if `hold` (else None)."""
        where = os.path.join(self.root, path)
        if not _BY_DESCRIPTOR:
            return (*_listing(where), None)
        fd = _open_folder(self.root, where, name, parent)
        if fd is None:
            return [], frozenset(), None
        keys, found = _listing(fd)
        if not hold:
            os.close(fd)
        return keys, found, fd if hold else None

    def hidden_note(self) -> str:
        """`41 paths hidden by .gitignore, 2 by .ignore`; "at least" while the walk is partial."""
        # Most first; a tie in the order of precedence.
        ranked = sorted(self.hidden.items(), key=lambda item: (-item[1], KINDS.index(item[0])))
        (kind, first), *others = ranked
        text = f"{first} path{'' if first == 1 else 's'} hidden by {kind}"
        text += "".join(f", {count} by {kind}" for kind, count in others)
        return text if self.complete else f"at least {text}"


class Visibility:
    """Whether the walk would list a file, for paths found another way (ripgrep's output):
    `visible("src/a.py")`. Each directory's rules are read once and kept, up to _KEPT_BYTES of
    ignore files in all; past `deadline` (time.monotonic) a new directory raises TimeoutError."""

    def __init__(self, root: Path, deadline: float | None = None) -> None:
        self.root, self.deadline = root, deadline
        self._top = Rules().below(root, "")
        self._rules: dict[str, Rules | str] = {"": self._top}
        self._kept = self._top.size  # bytes of ignore files read into the kept rules

    def rules_in(self, directory: str) -> Rules | str:
        """The rules in force in `directory` (relative to the root), or why it is not walked:
        the skipped name ("node_modules") or the ignore file that hides it (".gitignore")."""
        rules, path = self._rules[""], ""
        for part in directory.split("/") if directory else []:
            path = f"{path}/{part}" if path else part
            if path not in self._rules:
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    raise TimeoutError(f"no time left to read the ignore files of {path}")
                if isinstance(rules, str):
                    self._rules[path] = rules
                elif is_skipped(part):
                    self._rules[path] = part
                else:
                    hidden_by = rules.hidden_by(path, is_dir=True)
                    inner = hidden_by or rules.below(self.root, path)
                    if not isinstance(inner, str) and inner is not rules:
                        self._kept += inner.size - rules.size
                        if self._kept > _KEPT_BYTES:  # forget the others; the chain stays
                            self._rules, self._kept = {"": self._top}, inner.size
                    self._rules[path] = inner
            rules = self._rules[path]
        return rules

    def __call__(self, path: str) -> bool:
        rules = self.rules_in(path.rpartition("/")[0])
        return not isinstance(rules, str) and rules.hidden_by(path, is_dir=False) is None


def walk_files(root: Path, top: str = "", max_depth: int | None = None) -> Iterator[str]:
    """The files of `Walk(root, top, max_depth)`, for callers that need nothing else."""
    return iter(Walk(root, top, max_depth))
