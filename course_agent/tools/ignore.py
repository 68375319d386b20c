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

__all__ = ["KINDS", "MAX_IGNORE_FILE", "IgnoreFile", "Rules", "read_ignore_file"]

# ripgrep's precedence, highest first: a "!" line in .ignore re-includes what .gitignore hides.
KINDS = (".rgignore", ".ignore", ".gitignore", ".git/info/exclude")
MAX_IGNORE_FILE = 1 << 20  # bytes read from one ignore file; the lines past it are not applied

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
    so a 100-line .gitignore costs a few lookups per path, not a hundred regex matches.
    """

    def __init__(self, lines: list[str]) -> None:
        self.hides: list[bool] = []  # per line kept: True hides, False ("!") re-includes
        # Every table is a pair indexed by is_dir: [0] the lines that can match a file, [1] the
        # lines that can match a directory (all of them: "build/" matches directories only).
        # names and suffixes map to the index of the last line naming them; the regex sources
        # hold one group per line, named l<index>, in line order.
        self._names: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self._suffixes: tuple[dict[str, int], dict[str, int]] = ({}, {})
        sources: dict[str, tuple[list[str], list[str]]] = {"basename": ([], []), "path": ([], [])}
        for line in lines:
            if line.rstrip().endswith("/**/"):
                # pathspec reads "a/**/" as the directory a; git and ripgrep as the directories
                # below a. "a/**/*/" says that to pathspec.
                line = line.rstrip() + "*/"
            pattern = _parse(line)
            if pattern is None:
                continue
            index, (shape, text) = len(self.hides), _shape(line)
            self.hides.append(pattern.include)
            if shape == "basename":  # "/" + text: the same pattern, anchored, for the name alone
                pattern = _parse("/" + text + "/" * line.rstrip().endswith("/")) or pattern
            regex, dirs_only = _itself(pattern.regex.pattern)
            for is_dir in (False, True) if not dirs_only else (True,):
                if shape == "name":
                    self._names[is_dir][text] = index
                elif shape == "suffix":
                    self._suffixes[is_dir][text] = index
                else:
                    sources[shape][is_dir].append(f"(?P<l{index}>{regex})")
        self._endings = tuple(tuple(table) for table in self._suffixes)
        # The last matching line decides. An alternation answers with its first matching branch,
        # so the lines go in backwards.
        self._basename = tuple(map(_alternation, sources["basename"]))
        self._path = tuple(map(_alternation, sources["path"]))

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: a line hides `relative`; False: a "!" line re-includes it; None: none matches."""
        name = relative.rpartition("/")[2]
        best = self._names[is_dir].get(name, -1)
        if name.endswith(self._endings[is_dir]):
            suffixes = self._suffixes[is_dir].items()
            best = max(best, *(index for end, index in suffixes if name.endswith(end)))
        for regex, text in ((self._basename[is_dir], name), (self._path[is_dir], relative)):
            if regex is not None and (match := regex.match(text)) and match.lastgroup:
                best = max(best, int(match.lastgroup[1:]))
        return None if best < 0 else self.hides[best]


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


def read_ignore_file(path: str) -> IgnoreFile | None:
    """The ignore file at `path`, or None when it is missing, not a regular file or unreadable.

    Opened without blocking, so a FIFO named .gitignore cannot hang the walk.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            data = file.read(MAX_IGNORE_FILE + 1)
    except OSError:
        return None
    if len(data) > MAX_IGNORE_FILE:  # cut: the last whole line is the last line applied
        data = data[: data.rfind(b"\n", 0, MAX_IGNORE_FILE) + 1]
    # Names arrive from os.fsdecode with surrogate escapes; decoding the same way lets them match.
    return IgnoreFile(data.decode("utf-8", "surrogateescape").removeprefix("\ufeff").splitlines())


@dataclass(frozen=True)
class Rules:
    """The ignore files in force in one directory: a chain from the deepest directory that has
    some up to the working directory. `directory` is where `files` sit, relative to the root
    ("" for the root itself); a directory without ignore files shares its parent's Rules."""

    directory: str = ""
    files: tuple[tuple[str, IgnoreFile], ...] = ()
    parent: Rules | None = None

    def below(self, root: Path, directory: str, names: frozenset[str] | None = None) -> Rules:
        """The Rules for `directory` (relative to `root`, inside this one), reading its ignore
        files. `names`, the directory's entries if already listed, spares the failed opens."""
        found = []
        for kind in KINDS:
            if names is None or kind.split("/")[0] in names:
                loaded = read_ignore_file(os.path.join(root, directory, kind))
                if loaded is not None:
                    found.append((kind, loaded))
        return Rules(directory, tuple(found), self) if found else self

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
