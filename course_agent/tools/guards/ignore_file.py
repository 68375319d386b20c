"""One ignore file's lines, matched against paths in linear time, whatever the lines hold.

Names, extensions, prefixes and plain paths are dict lookups; `*.py[cod]`-like lines one regex of
fixed-width branches tried at one place; the rest one wildcard automaton (wildcard.py), which
never backtracks. Lines past the bounds below are not applied, and the file says so. Deliberately
not handled: which files are in force and how they rank (ignore.py), reading a line
(ignore_lines.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from course_agent.protocol import ToolError
from course_agent.tools.guards.ignore_lines import IgnoreLine, parse_line
from course_agent.tools.guards.wildcard import MAX_STEPS, Segment, Wildcard

__all__ = ["MAX_LINE_CHARS", "MAX_LINE_WILDCARDS", "MAX_WILDCARD_LINES", "Finals", "IgnoreFile"]

# A line longer than this, or with more wildcards (`*`, `?`, `[`), is not applied: no real
# rule is (a long one names a path; `*.py[cod]` has two), and a 300 KB line once took a
# backtracking matcher 33 s. Each wildcard costs a piece or a class built and looked for in
# names: 256 lines of 32 stars build in 0.05 s, 256 of 2,000 stars took 10 s.
MAX_LINE_CHARS = 1024
MAX_LINE_WILDCARDS = 32
# Lines of one file that need the wildcard matcher (not a name, an extension or a plain path):
# each costs every name in the folders below one segment test (about 0.5 us). Past it, or past
# MAX_STEPS segments in all, the rest are not applied. Names and extensions are not counted.
MAX_WILDCARD_LINES = 256
NameTest = Callable[[str], object]
Finals = tuple[list[tuple[int, NameTest]], list[tuple[int, NameTest]]]
_FOLDERS_KEPT = 256  # per file: the folders whose final segments are kept (a walk's open levels)


def _shape(line: IgnoreLine) -> tuple[str, str | Segment]:
    """How a line is matched: by lookup, ("name", "__pycache__") for a name at any depth,
    ("suffix", ".log") for `*.log`, ("prefix", "npm-debug.log") for `npm-debug.log*`, ("path",
    "docs/_build") for a plain path from the file's folder; by one regex call without a
    quantifier, ("tail", segment) for `*.py[cod]`, ("head", segment) for `[Tt]emp*`; or by the
    automaton, ("wildcard", line.wildcard) for the rest."""
    if line.literal:
        return ("path" if line.anchored else "name"), line.pattern
    if not line.anchored:
        try:
            segment = Segment(line.pattern, line.pattern)
        except ToolError:
            return "wildcard", line.wildcard  # refused there too: the line is passed over
        if len(segment.pieces) == 2:
            head, tail = segment.pieces
            if head.text == "" and tail.width:
                return ("suffix", tail.text) if tail.text is not None else ("tail", segment)
            if tail.text == "" and head.width:
                return ("prefix", head.text) if head.text is not None else ("head", segment)
    return "wildcard", line.wildcard


class IgnoreFile:
    """The lines of one ignore file, asked about paths relative to the directory it sits in.

    Most lines name a file, an extension, a prefix or a path (`__pycache__/`, `*.log`, `/build`):
    they are looked up in dicts. A line `*.py[cod]` or `[Tt]emp*` joins one regex of fixed-width
    alternatives, matched at one place of the name (no quantifier: nothing to backtrack). The
    others go into one Wildcard, whose `finals` per folder are the lines still able to match
    there, latest first: the first whose last segment passes the name is the last matching line.
    Only the first MAX_WILDCARD_LINES lines that need a regex or the automaton (and MAX_STEPS
    segments) are applied, and no line over MAX_LINE_CHARS or MAX_LINE_WILDCARDS; `skipped`
    counts the others, and `complete` is False when some lines were not applied.
    """

    def __init__(self, lines: list[str], size: int = 0, cut: bool = False) -> None:
        """`lines` of a file of which `size` bytes were read, and not all if `cut`."""
        self.hides: list[bool] = []  # per line kept: True hides, False ("!") re-includes
        self.skipped = 0
        # Every table is a pair indexed by is_dir: [0] the lines that can match a file, [1] the
        # lines that can match a directory (all of them: "build/" matches directories only).
        # Each maps a name, an extension, a prefix or a path to the last line naming it.
        self._tables: dict[str, tuple[dict[str, int], dict[str, int]]] = {
            shape: ({}, {}) for shape in ("name", "suffix", "prefix", "path")
        }
        self._ends: dict[str, tuple[list[tuple[int, Segment]], list[tuple[int, Segment]]]] = {
            "head": ([], []),
            "tail": ([], []),
        }
        self._patterns: list[str] = []  # the automaton's alternatives, one per line
        self._wild: list[tuple[int, bool]] = []  # per alternative: (its line's index, dirs only)
        self._steps = 0
        for text in lines:
            self._add(text)
        self._compile()
        self.size, self.complete = size, not cut and not self.skipped

    def _add(self, text: str) -> None:
        """Read one line and file it where it is matched, or count it as not applied."""
        line = parse_line(text)
        if line is None:
            return
        wild = text.count("*") + text.count("?") + text.count("[")
        too_long = len(text) > MAX_LINE_CHARS or wild > MAX_LINE_WILDCARDS
        shape, key = ("long", "") if too_long else _shape(line)
        kinds = (False, True) if not line.dirs_only else (True,)
        if shape in self._tables:
            for is_dir in kinds:
                self._tables[shape][is_dir][str(key)] = len(self.hides)
        elif not self._matched(line, shape, key, kinds):
            return
        self.hides.append(line.hides)

    def _matched(
        self, line: IgnoreLine, shape: str, key: str | Segment, kinds: tuple[bool, ...]
    ) -> bool:
        """File a line that needs a regex or the automaton; False when it is not applied."""
        need = str(key).count("/") + 3  # segments, a "*" after a last "**", the end
        fits = shape != "long" and self._steps + need <= MAX_STEPS
        if not fits or len(self._patterns) + self._regex_lines(self._ends) >= MAX_WILDCARD_LINES:
            self.skipped += 1
            return False
        if isinstance(key, Segment):
            for is_dir in kinds:
                self._ends[shape][is_dir].append((len(self.hides), key))
            return True
        if not _valid(key):
            return False  # git matches nothing with it either
        self._steps += need
        self._patterns.append(key)
        self._wild.append((len(self.hides), line.dirs_only))
        return True

    def _compile(self) -> None:
        """The tables' lengths, the regexes and the automaton, once every line is filed."""
        tables, ends = self._tables, self._ends
        # The lengths of suffixes and prefixes: a name is looked up once per length.
        self._sizes = tuple(
            tuple(tuple(sorted({len(end) for end in table})) for table in tables[shape])
            for shape in ("suffix", "prefix")
        )
        self._ends_with = tuple(frozenset(end[-1] for end in table) for table in tables["suffix"])
        self._starts_with = tuple(frozenset(key[0] for key in table) for table in tables["prefix"])
        self._by_kind = tuple(
            tuple(tables[shape][is_dir] for shape in ("name", "suffix", "prefix", "path"))
            for is_dir in (0, 1)
        )
        self._heads = tuple(_alternation(found) for found in ends["head"])
        self._tails = tuple(_by_width(found) for found in ends["tail"])
        self.wildcards = len(self._patterns) + self._regex_lines(ends)
        self._wildcard = Wildcard(self._patterns) if self._patterns else None
        self._finals: dict[str, Finals] = {}

    @staticmethod
    def _regex_lines(ends: dict[str, tuple[list[tuple[int, Segment]], ...]]) -> int:
        return sum(len(found[True]) for found in ends.values())  # every line is a dirs' line

    def verdict(self, relative: str, is_dir: bool) -> bool | None:
        """True: a line hides `relative`; False: a "!" line re-includes it; None: none matches."""
        directory, _, name = relative.rpartition("/")
        names, _, _, paths = self._by_kind[is_dir]
        best = names.get(name, -1)  # comparisons, not max(): a walk asks this of every entry
        if paths and (found := paths.get(relative, -1)) > best:
            best = found
        length = len(name)
        # Most names end and start with a character no suffix ends and no prefix starts with.
        if name[-1:] in self._ends_with[is_dir] or name[:1] in self._starts_with[is_dir]:
            best = self._by_ends(name, is_dir, best)
        heads = self._heads[is_dir]
        if heads is not None and (match := heads.match(name)):
            best = max(best, int(str(match.lastgroup)[1:]))
        for width, tails in self._tails[is_dir]:
            if width <= length and (match := tails.match(name, length - width)):
                best = max(best, int(str(match.lastgroup)[1:]))
        if self._wildcard is not None:
            finals = self._finals.get(directory) or self._finals_in(directory)
            for line, test in finals[is_dir]:
                if line <= best:
                    break  # the lines left are earlier: the verdict stands
                if test(name):
                    return self.hides[line]
        return None if best < 0 else self.hides[best]

    def _by_ends(self, name: str, is_dir: bool, best: int) -> int:
        """`best`, or a later line naming a suffix or a prefix of `name`: one lookup a length."""
        _, suffixes, prefixes, _ = self._by_kind[is_dir]
        for size in self._sizes[0][is_dir]:
            if size > len(name):
                break
            if (found := suffixes.get(name[-size:], -1)) > best:
                best = found
        for size in self._sizes[1][is_dir]:
            if size > len(name):
                break
            if (found := prefixes.get(name[:size], -1)) > best:
                best = found
        return best

    def _finals_in(self, directory: str) -> Finals:
        """Per is_dir, (line, test of the name) for the wildcard lines that can match in
        `directory`, latest first; kept for up to _FOLDERS_KEPT folders at once."""
        assert self._wildcard is not None
        files: list[tuple[int, NameTest]] = []
        folders: list[tuple[int, NameTest]] = []
        for alternative, segment in self._wildcard.finals(directory):
            line, dirs_only = self._wild[alternative]
            folders.append((line, segment.test))
            if not dirs_only:
                files.append((line, segment.test))
        if len(self._finals) >= _FOLDERS_KEPT:
            self._finals.clear()  # a walk comes back to few folders: start afresh
        self._finals[directory] = known = (files, folders)
        return known


def _alternation(found: list[tuple[int, Segment]]) -> re.Pattern[str] | None:
    """One regex for fixed-width pieces, a group per line, latest first (an alternation answers
    with its first matching branch, and the last matching line decides). Each branch is a run
    of single characters and classes: trying it at one place costs its width, no more."""
    branches = []
    for line, segment in sorted(found, reverse=True):
        piece = segment.pieces[0] if segment.pieces[0].width else segment.pieces[-1]
        if piece.regex is not None:
            branches.append(f"(?P<l{line}>{piece.regex.pattern})")
    return re.compile("|".join(branches), re.DOTALL) if branches else None


def _by_width(found: list[tuple[int, Segment]]) -> tuple[tuple[int, re.Pattern[str]], ...]:
    """Tails grouped by width, each group one alternation matched where the name ends."""
    groups: dict[int, list[tuple[int, Segment]]] = {}
    for line, segment in found:
        groups.setdefault(segment.pieces[-1].width, []).append((line, segment))
    return tuple(
        (width, regex) for width, group in sorted(groups.items()) if (regex := _alternation(group))
    )


def _valid(pattern: str) -> bool:
    """Whether the wildcard matcher reads the pattern: an unclosed `[` or a reversed range
    (`[z-a]`) matches nothing in git either, so the line is passed over."""
    try:
        Wildcard([pattern])
    except ToolError:
        return False
    return True
