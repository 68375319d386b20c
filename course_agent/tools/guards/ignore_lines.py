"""One line of an ignore file read as git reads it: a comment, a negation, a folder-only rule, a
name matched at any depth or a path matched from the file's folder, and the wildcard left over.

Git's reading, checked against `git check-ignore` (tests/test_ignore_git.py), rather than
ripgrep's where the two differ: braces are text, a lone `!` matches nothing, a trailing tab is
part of the name. Deliberately not handled: `[[:alpha:]]` classes and a backslash inside `[...]`
(the wildcard reads both as plain members), and case folding (core.ignorecase).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOB_CHARS", "IgnoreLine", "ignore_lines", "parse_line"]

GLOB_CHARS = frozenset("*?[\\")  # git's is_glob_special: a line without these is literal


@dataclass(frozen=True)
class IgnoreLine:
    """What one line says. `pattern` has git's escapes still in it, its leading `/` and trailing
    `/` gone; `anchored` (a `/` before the end) matches it against the path from the ignore
    file's folder, else against the name alone."""

    pattern: str
    hides: bool  # False for a "!" line, which brings back what an earlier line hid
    dirs_only: bool  # a trailing "/": folders only
    anchored: bool

    @property
    def literal(self) -> bool:
        """Whether the pattern is plain text (no wildcard, no escape): a lookup, not a match."""
        return not GLOB_CHARS & set(self.pattern)

    @property
    def wildcard(self) -> str:
        """The pattern as tools/guards/wildcard.py reads it: a name at any depth is `**/name`."""
        return self.pattern if self.anchored else f"**/{self.pattern}"


def ignore_lines(text: str) -> list[str]:
    """An ignore file's lines as git splits them: at "\\n" only, a CRLF's "\\r" dropped (not
    str.splitlines, which also splits at \\x0b, \\x1c, U+2028 and others that names may hold)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _trim_trailing_spaces(line: str) -> str:
    """Git's trim_trailing_spaces: trailing spaces go unless escaped (`x\\ `); tabs stay."""
    end, i = len(line), 0
    last_space = None
    while i < len(line):
        char = line[i]
        if char == " ":
            last_space = i if last_space is None else last_space
        elif char == "\\":
            if i + 1 == len(line):
                return line
            i += 1
            last_space = None
        else:
            last_space = None
        i += 1
    return line[: last_space if last_space is not None else end]


def parse_line(line: str) -> IgnoreLine | None:
    """The rule a line states, or None for a blank line, a comment (`#` first; `\\#` is text),
    and the lines git never matches: nothing left after `!` and `/`, or a pattern ending in a
    lone backslash."""
    if not line or line[0] == "#":
        return None
    line = _trim_trailing_spaces(line)
    hides = not line.startswith("!")
    pattern = line if hides else line[1:]
    dirs_only = pattern.endswith("/")
    pattern = pattern.removesuffix("/")
    anchored = "/" in pattern
    pattern = pattern.removeprefix("/")
    if not pattern or _dangling_backslash(pattern):
        return None
    return IgnoreLine(pattern, hides, dirs_only, anchored)


def _dangling_backslash(pattern: str) -> bool:
    """Whether the pattern ends in a backslash that escapes nothing: git's wildmatch then
    matches no name at all (`q\\` hides no file `q\\`)."""
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    return trailing % 2 == 1
