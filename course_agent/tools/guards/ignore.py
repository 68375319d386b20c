"""Ignore rules as ripgrep applies them, so that what glob lists is exactly what grep searches.

A directory's .rgignore, .ignore and .gitignore (and .git/info/exclude when it holds a .git folder)
hide paths below it; pathspec parses their gitignore syntax. Deliberately not handled: ignore files
above the working directory, the user's global gitignore, and case-insensitive matching.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = [
    "KINDS",
    "MAX_IGNORE_FILE",
    "MAX_REGEX_LINES",
    "MAX_RULES_BYTES",
    "IgnoreFile",
    "Rules",
    "read_ignore_file",
]

# ripgrep's precedence, highest first: a "!" line in .ignore re-includes what .gitignore hides.
KINDS = (".rgignore", ".ignore", ".gitignore", ".git/info/exclude")
MAX_IGNORE_FILE = 1 << 20  # bytes read from one ignore file; the lines past it are not applied
# Lines of one ignore file that need a regex (a slash, a wildcard other than a leading `*`): each
# costs pathspec about 0.2 ms and grows one regex. Names and extensions are not counted.
MAX_REGEX_LINES = 1000
# Bytes of ignore files in force at once in one folder, its own and those of the folders above:
# a file past it is not applied. In memory a byte of names takes about 15: 60 MB at most.
MAX_RULES_BYTES = 4 << 20

# pathspec ends each line's regex with a marker that also matches everything *below* the path
# ("build" matches build/x.txt). ripgrep asks about a path itself and never enters an ignored
# directory, so the marker is replaced: _OPTIONAL (files and directories) or _DIRS_ONLY ("build/").
_OPTIONAL = "(?:(?P<ps_d>/)|$)"
_DIRS_ONLY = "(?P<ps_d>/)"
_GLOB = frozenset("*?[\\")  # a line without these (and without "/") names one file or directory


def _itself(regex: str) -> tuple[str, bool]:
    """A pathspec regex -> (a regex for re.match on the path itself, whether only dirs match)."""
    if regex.endswith(_OPTIONAL):
        return regex.removesuffix(_OPTIONAL) + r"\Z", False
    if regex.endswith(_DIRS_ONLY):
        return (regex.removesuffix(_DIRS_ONLY) or ".*") + r"\Z", True  # "*/" is every directory
    return regex, False  # "a/**" -> "^a/": everything below a, but not a itself


def _shape(line: str) -> tuple[str, str]:
    """How a line can be matched fastest: ("name", "__pycache__") for a name at any depth,
    ("suffix", ".log") for `*.log`, ("basename", "*.py[cod]") for another pattern without a
    slash, ("path", "") for the rest (a slash, an escape). Call it on lines pathspec accepted."""
    text = line.rstrip().removeprefix("!").removesuffix("/")
    if "\\" in line or "/" in text or not text:
        return "path", ""
    if not _GLOB & set(text):
        return "name", text
    if text[0] == "*" and len(text) > 1 and not _GLOB & set(text[1:]):
        return "suffix", text[1:]
    return "basename", text


class IgnoreFile:
    """The lines of one ignore file, asked about paths relative to the directory it sits in.

    Most lines name a file or an extension at any depth (`__pycache__/`, `*.log`); they are
    looked up in dicts, the rest matched by two regexes (one over the name, one over the path),
    so a 100-line .gitignore costs a few lookups per path, not a hundred regex matches. Only the
    first MAX_REGEX_LINES lines that need a regex are applied; `skipped` counts the others, and
    `complete` is False when some lines were not applied.
    """

    def __init__(self, lines: list[str], size: int = 0, cut: bool = False) -> None:
        """`lines` of a file of which `size` bytes were read, and not all if `cut`."""
        self.hides: list[bool] = []  # per line kept: True hides, False ("!") re-includes
        self.skipped = 0
        # Every table is a pair indexed by is_dir: [0] the lines that can match a file, [1] the
        # lines that can match a directory (all of them: "build/" matches directories only).
        # names and suffixes map to the index of the last line naming them; the regex sources
        # hold one group per line, named l<index>, in line order.
        self._names: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self._suffixes: tuple[dict[str, int], dict[str, int]] = ({}, {})
        sources: dict[str, tuple[list[str], list[str]]] = {"basename": ([], []), "path": ([], [])}
        regex_lines = 0
        for line in lines:
            if line.rstrip().endswith("/**/"):
                # pathspec reads "a/**/" as the directory a; git and ripgrep as the directories
                # below a. "a/**/*/" says that to pathspec.
                line = line.rstrip() + "*/"
            if plain := _plain(line):
                (shape, text), hides, dirs_only = plain
            else:
                shape, text = _shape(line)
                if shape not in ("name", "suffix") and regex_lines >= MAX_REGEX_LINES:
                    self.skipped += 1
                    continue
                pattern = _parse(line)
                if pattern is None:
                    continue
                regex_lines += shape not in ("name", "suffix")
                hides = bool(pattern.include)
                if shape == "basename":  # "/" + text: the same pattern, anchored, for the name
                    pattern = _parse("/" + text + "/" * line.rstrip().endswith("/")) or pattern
                regex, dirs_only = _itself(pattern.regex.pattern)
            index = len(self.hides)
            self.hides.append(hides)
            for is_dir in (False, True) if not dirs_only else (True,):
                if shape == "name":
                    self._names[is_dir][text] = index
                elif shape == "suffix":
                    self._suffixes[is_dir][text] = index
                else:
                    sources[shape][is_dir].append(f"(?P<l{index}>{regex})")
        # The lengths of the suffixes: a name is looked up once per length, however many lines.
        self._sizes = tuple(sorted({len(end) for end in table}) for table in self._suffixes)
        # The last matching line decides. An alternation answers with its first matching branch,
        # so the lines go in backwards.
        self._basename = tuple(map(_alternation, sources["basename"]))
        self._path = tuple(map(_alternation, sources["path"]))
        self.size, self.complete = size, not cut and not self.skipped

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: a line hides `relative`; False: a "!" line re-includes it; None: none matches."""
        name = relative.rpartition("/")[2]
        best = self._names[is_dir].get(name, -1)
        suffixes = self._suffixes[is_dir]
        for size in self._sizes[is_dir]:
            if size > len(name):
                break
            best = max(best, suffixes.get(name[-size:], -1))
        for regex, text in ((self._basename[is_dir], name), (self._path[is_dir], relative)):
            if regex is not None and (match := regex.match(text)) and match.lastgroup:
                best = max(best, int(match.lastgroup[1:]))
        return None if best < 0 else self.hides[best]


def _plain(line: str) -> tuple[tuple[str, str], bool, bool] | None:
    """A line that names a file or an extension, read without pathspec (which takes 0.15 ms a
    line to compile a regex no lookup needs): (its shape, whether it hides, whether it names
    directories only). None for any other line, a comment or a blank one."""
    stripped = line.rstrip()
    if not stripped or stripped[0] in "# \t":  # a comment; leading blanks as pathspec reads them
        return None
    shape = _shape(line)
    if shape[0] not in ("name", "suffix"):
        return None
    return shape, not stripped.startswith("!"), stripped.endswith("/")


def _parse(line: str) -> GitIgnoreSpecPattern | None:
    """pathspec's reading of one line; None for a blank line, a comment or a line it refuses
    (ripgrep skips a line it cannot parse, as here)."""
    try:
        pattern = GitIgnoreSpecPattern(line)
    except (ValueError, re.error):
        return None
    return None if pattern.include is None or pattern.regex is None else pattern


def _alternation(groups: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(reversed(groups)), re.DOTALL) if groups else None


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
    lines = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff").splitlines()
    return IgnoreFile(lines, size=len(data), cut=cut)


@dataclass(frozen=True)
class Rules:
    """The ignore files in force in one directory: a chain from the deepest directory that has
    some up to the working directory. `directory` is where `files` sit, relative to the root
    ("" for the root itself); a directory without ignore files shares its parent's Rules.
    `size` is the bytes of ignore files in force here, these and those above (at most
    MAX_RULES_BYTES); `complete` is False once some file in force was not applied in full."""

    directory: str = ""
    files: tuple[tuple[str, IgnoreFile], ...] = ()
    parent: Rules | None = None
    size: int = 0
    complete: bool = True

    def below(self, root: Path, directory: str, names: frozenset[str] | None = None) -> Rules:
        """The Rules for `directory` (relative to `root`, inside this one), reading its ignore
        files. `names`, the directory's entries if already listed, spares the failed opens."""
        found, size, complete = [], self.size, self.complete
        for kind in KINDS:
            if names is None or kind.split("/")[0] in names:
                path = os.path.join(root, directory, kind)
                room = min(MAX_IGNORE_FILE, MAX_RULES_BYTES - size)
                if room <= 0:  # nothing more is held in this folder: what exists is not applied
                    complete = complete and not os.path.lexists(path)
                    continue
                loaded = read_ignore_file(path, room)
                if loaded is not None:
                    found.append((kind, loaded))
                    size, complete = size + loaded.size, complete and loaded.complete
        if not found and complete == self.complete:
            return self
        return Rules(directory, tuple(found), self, size, complete)

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
