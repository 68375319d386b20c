"""Walk a working directory the way a read-only tool should: skip the noise, never leave the root.

`Walk` yields files in sorted order, so a first page needs no full listing, and it counts what it
looked at and what ignore rules hid. Deliberately not handled: matching (glob does that).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from course_agent.tools.guards.ignore import KINDS, MAX_RULES_BYTES, Rules
from course_agent.tools.guards.keyfiles import is_key_name
from course_agent.tools.guards.opened import open_directory_inside

__all__ = [
    "COURSE_SKIPS",
    "SKIP_DIRS",
    "Visibility",
    "Walk",
    "is_skipped",
    "linked_prefix",
    "show_path",
]

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

_IGNORE_KEYS = frozenset(kind.split("/")[0] + "/" * ("/" in kind) for kind in KINDS)  # ".git/"
_NONE: frozenset[str] = frozenset()
# A walk lists each folder through a descriptor opened within its parent's (not on Windows:
# there a listing goes by its path). One descriptor is held per level, up to _HELD_LEVELS.
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0)
_HELD_LEVELS = 64
# Bytes of ignore files a Visibility keeps read, over all the folders it was asked about.
_KEPT_BYTES = 4 * MAX_RULES_BYTES

# A folder being walked: (prefix relative to top, rules in force, its listing, depth, its
# descriptor, the test of wanted names).
_Frame = tuple[str, Rules, Iterator[str], int, int | None, Callable[[str], bool] | None]

# Control characters would break "one path per line"; they are shown as escapes instead.
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def _escape(char: str) -> str:
    """One character that is not printable as itself: "\\x1b", "\\u202e"."""
    code = ord(char)
    if code in _ESCAPES:
        return _ESCAPES[code]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def show_path(relative: str) -> str:
    """`relative` as one printable line: "a\\nb.txt" for a name with a newline in it.

    Every character Python does not call printable is escaped: controls, and the format
    characters too, such as U+202E, which would turn the rest of the line around on screen and
    make `gpj.exe` read as `exe.jpg`, and U+2028, a line break to some readers. Names that are
    not valid UTF-8 arrive with surrogate escapes (os.fsdecode); they are shown as \\xNN too, so
    the result can always be encoded and sent to the model.
    """
    if relative.isprintable():
        return relative
    text = relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def is_skipped(name: str) -> bool:
    """A folder no walk enters: SKIP_DIRS, and a name of a key file (ripgrep's exclusion of
    `.env` skips a folder `.env/` too, often a virtualenv)."""
    return name in SKIP_DIRS or is_key_name(name)


def linked_prefix(root: Path, prefix: str) -> str | None:
    """The first folder of `prefix` (a path relative to `root`, as the model wrote it) that is a
    symlink, or None: the walk neither enters nor lists symlinks, so a pattern that names one
    (`pkg/*.js` with `pkg -> lib`) must not list the target's files either."""
    parts: list[str] = []
    for part in prefix.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
        with contextlib.suppress(OSError, ValueError):
            if os.path.islink(os.path.join(root, *parts)):
                return "/".join(parts)
    return None


def _open_folder(root: Path, path: str, name: str, parent: int | None) -> int | None:
    """A descriptor for the folder `path` (relative to `root`), named `name` in the folder
    `parent` is open on; None when it is gone, unreadable or not inside `root`.

    Opened by its name within its parent, itself inside, and not through a symlink
    (O_NOFOLLOW): so it is inside, whatever was swapped since the parent was listed. Without a
    parent descriptor (the top of the walk, very deep folders) the path is opened and checked.
    """
    if parent is None:
        return open_directory_inside(root, os.path.join(root, path))
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError:
        return None


def _listing(folder: int | str) -> tuple[list[str], frozenset[str]] | None:
    """A folder's entries (by descriptor, or path where descriptors cannot be listed) as sorted
    keys, a folder's with a "/" appended, so that a depth-first walk yields sorted paths
    ("a.txt" < "a/b" < "a0"); and which ignore files (and .git) it holds. Symlinks are left
    out, as ripgrep leaves them. None when it cannot be listed."""
    keys: list[str] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                # DirEntry answers from the directory listing itself (d_type): no stat call,
                # which is what keeps this walk close to find's speed.
                if entry.is_dir(follow_symlinks=False):
                    keys.append(entry.name + "/")
                elif entry.is_file(follow_symlinks=False):
                    keys.append(entry.name)
    except OSError:
        return None
    keys.sort()
    # Ignore files are files, .git a folder: both looked up in one pass over the names.
    found = _IGNORE_KEYS.intersection(keys)
    return keys, frozenset(key.rstrip("/") for key in found) if found else _NONE


class Walk:
    """Every file below `root`/`top` as a '/'-separated path relative to `top`, in sorted order.

    `root` must be resolved. Symlinks are neither entered nor listed (no loop, no way out, and
    ripgrep never searches them). `max_depth` 0 lists `top` alone, 1 also its subdirectories.
    Skipped folders (`is_skipped`) and what ignore files hide are not entered or listed.
    `names(folder)`, if given, says which file names in a folder (relative to `top`) are
    wanted: the others are counted, never joined into paths nor yielded.
    While and after iterating: `walked` entries looked at, `files` listed (wanted or not),
    `beyond` folders not entered for `max_depth`, `unreadable` folders that could not be listed
    (gone, no permission, too deep for a path), `hidden` per kind of ignore file, `complete`
    once the walk reached its end, `blocked` when `top` itself is skipped or hidden, `stopped`
    when it ended at its `deadline`, `rules_cut` when some ignore file met on the way was too
    large to apply in full. Set `budget` (entries) at any time to stop the walk there.
    """

    def __init__(
        self,
        root: Path,
        top: str = "",
        max_depth: int | None = None,
        deadline: float | None = None,
        names: Callable[[str], Callable[[str], bool]] | None = None,
    ) -> None:
        self.root, self.top, self.max_depth, self.deadline = root, top, max_depth, deadline
        self.names = names
        self.budget: int | None = None
        self.walked = self.files = self.beyond = self.unreadable = 0
        self.hidden: Counter[str] = Counter()
        self.complete = self.stopped = self.rules_cut = False
        self.blocked: str | None = None  # "node_modules" or ".gitignore": why top is not walked

    def _out_of_time(self) -> bool:
        """Whether the deadline (time.monotonic) has passed; then the walk is `stopped`."""
        self.stopped = self.deadline is not None and time.monotonic() >= self.deadline
        return self.stopped

    def __iter__(self) -> Iterator[str]:
        first = self._first_frame()
        if first is None:
            return
        base = f"{self.top}/" if self.top else ""  # rules want paths from the root
        # A stack of (prefix relative to top, rules in force, the listing, depth, descriptor,
        # the test of wanted names): each listing is read whole; a folder's descriptor stays
        # open while its subfolders are opened within it.
        stack = [first]
        try:
            while stack:
                prefix, rules, keys, _, fd, wanted = stack[-1]
                ruled = bool(rules.files) or rules.parent is not None  # any ignore file in force?
                for key in keys:
                    if self.budget is not None and self.walked >= self.budget:
                        return
                    # A cheap, regular check: an entry costs at most MAX_WILDCARDS_IN_FORCE
                    # segment tests (a few ms), so the budget is overrun by well under 0.1 s.
                    if not self.walked % 16 and self._out_of_time():
                        return
                    self.walked += 1
                    if key[-1] != "/":  # a file: the common case, kept short
                        if ruled and (hidden_by := rules.hidden_by(base + prefix + key, False)):
                            self.hidden[hidden_by] += 1
                            continue
                        self.files += 1
                        if wanted is None or wanted(key):
                            yield prefix + key
                        continue
                    if (frame := self._descend(stack[-1], key[:-1], base, ruled)) is None:
                        continue
                    stack.append(frame)  # held on the stack: closed however the walk ends
                    if self.stopped:
                        return
                    break  # walk the subdirectory now: its paths sort before the next entry
                else:
                    stack.pop()
                    if fd is not None:
                        os.close(fd)
            self.complete = True
        finally:  # stopped by the budget, or abandoned by the caller: close what is held
            _close_all(stack)

    def _first_frame(self) -> _Frame | None:
        """The top folder's frame, or None when it is not walked (blocked, or out of time)."""
        try:
            rules = Visibility(self.root, self.deadline).rules_in(self.top)
        except TimeoutError:
            self.stopped = True
            return None
        if isinstance(rules, str):
            self.blocked, self.complete = rules, True
            return None
        self.rules_cut = not rules.complete
        keys, _, fd = self._enter(self.top, self.top, None, hold=True)
        return ("", rules, iter(keys), 0, fd, self._wanted(""))

    def _descend(self, parent: _Frame, name: str, base: str, ruled: bool) -> _Frame | None:
        """The frame of the subfolder `name` of the folder `parent` walks, or None when it is
        skipped, hidden or beyond max_depth (counted as such); sets `stopped` when reading its
        ignore files took the time left."""
        prefix, rules, _, depth, fd, _ = parent
        path = prefix + name
        if is_skipped(name):
            return None
        if ruled and (hidden_by := rules.hidden_by(base + path, True)):
            self.hidden[hidden_by] += 1
            return None
        if self.max_depth is not None and depth >= self.max_depth:
            self.beyond += 1
            return None
        inner, found, inner_fd = self._enter(base + path, name, fd, depth < _HELD_LEVELS)
        below = rules.below(self.root, base + path, found) if found else rules
        self.rules_cut = self.rules_cut or not below.complete
        frame = (path + "/", below, iter(inner), depth + 1, inner_fd, self._wanted(path))
        if found:
            self._out_of_time()  # ignore files may take a while
        return frame

    def _wanted(self, folder: str) -> Callable[[str], bool] | None:
        return None if self.names is None else self.names(folder)

    def _enter(
        self, path: str, name: str, parent: int | None, hold: bool
    ) -> tuple[list[str], frozenset[str], int | None]:
        """The folder `path` (from the root), named `name` in the folder `parent` is open on:
        its keys and ignore files, and its descriptor if `hold` (else None). One that cannot
        be opened or listed counts as `unreadable` and has no entries."""
        if _BY_DESCRIPTOR:
            fd = _open_folder(self.root, path, name, parent)
            listed = None if fd is None else _listing(fd)
        else:
            fd, listed = None, _listing(os.path.join(self.root, path))
        if fd is not None and (not hold or listed is None):
            os.close(fd)
            fd = None
        if listed is None:
            self.unreadable += 1
            return [], _NONE, None
        return listed[0], listed[1], fd

    def hidden_note(self) -> str:
        """`41 paths hidden by .gitignore, 2 by .ignore`; "at least" while the walk is partial."""
        # Most first; a tie in the order of precedence.
        ranked = sorted(self.hidden.items(), key=lambda item: (-item[1], KINDS.index(item[0])))
        (kind, first), *others = ranked
        text = f"{first} path{'' if first == 1 else 's'} hidden by {kind}"
        text += "".join(f", {count} by {kind}" for kind, count in others)
        return text if self.complete else f"at least {text}"


def _close_all(stack: list[_Frame]) -> None:
    for frame in stack:
        if frame[4] is not None:
            os.close(frame[4])


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
        if (known := self._rules.get(directory)) is not None:  # files come folder by folder
            return known
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

    def why_hidden(self, path: str) -> str | None:
        """None when the walk would list the file `path`; else what hides it: the kind of
        ignore file (".gitignore"), or the skipped folder's name ("node_modules")."""
        rules = self.rules_in(path.rpartition("/")[0])
        return rules if isinstance(rules, str) else rules.hidden_by(path, is_dir=False)

    def __call__(self, path: str) -> bool:
        return self.why_hidden(path) is None
