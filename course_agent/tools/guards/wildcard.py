"""Match a glob wildcard against '/'-separated paths in time proportional to pattern x path.

Braces are expanded first; each alternative is matched segment by segment, carrying the set of
places `**` may have reached, and within a segment the pieces between stars are found left to
right, never backtracking. Deliberately not handled: negation (!pattern), case folding, and a
`/` inside a [class] (a class is part of one segment).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from operator import methodcaller

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.protocol import ToolError

__all__ = [
    "MAX_ALTERNATIVES",
    "MAX_HELD",
    "MAX_STEPS",
    "Segment",
    "Wildcard",
    "expand_braces",
]

MAX_ALTERNATIVES = 64  # what {a,b}{c,d}... may expand to: 2^6, each matched on its own
# Path segments over all alternatives, once expanded: the states a folder can be in, so the work
# per folder. A real pattern has a few dozen; "**/*" repeated 1,000 times over 64 alternatives
# had 98,000, and a chain of 600 folders took 13 s and 1.8 GB.
MAX_STEPS = 1024
MAX_HELD = 1 << 17  # states remembered over all folders (plus one per folder): a few MB at most
_MAX_FOLDERS = 4096  # folders remembered

_GLOBSTAR = "**"  # a whole segment: zero or more directories
_ACCEPT = "/"  # ends an alternative's segments: the path must end here (no segment is "/")


def expand_braces(pattern: str, shown: str | None = None) -> list[str]:
    """`src/*.{js,ts}` -> [`src/*.js`, `src/*.ts`]; nestable; a backslash keeps `{` literal.

    A stack, not recursion: 2,000 nested braces are as fine as two. Refused past
    MAX_ALTERNATIVES, or with a `{` that is never closed, naming `shown` (the pattern as the
    model wrote it); a `,` or `}` outside braces is text.
    """
    shown = pattern if shown is None else shown
    # One frame per open brace: (alternatives finished so far, expansions of the current one).
    frames: list[tuple[list[str], list[str]]] = [([], [""])]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        done, current = frames[-1]
        if char == "{":
            frames.append(([], [""]))
        elif char == "," and len(frames) > 1:
            done.extend(current)
            current[:] = [""]
        elif char == "}" and len(frames) > 1:
            frames.pop()
            choices = done + current
            outer = frames[-1][1]
            if len(outer) * len(choices) > MAX_ALTERNATIVES:
                raise ToolError(
                    f"pattern {shown} has more than {MAX_ALTERNATIVES} alternatives once its "
                    "{...} are expanded: use fewer choices, or two calls"
                )
            outer[:] = [head + tail for head in outer for tail in choices]
        else:
            # Copy a run of plain text at once: appending one character at a time is quadratic.
            end = i + 2 if char == "\\" else i + 1
            while end < len(pattern) and pattern[end] not in "{,}\\":
                end += 1
            current[:] = [head + pattern[i:end] for head in current]
            i = end
            continue
        i += 1
    if len(frames) > 1:
        raise ToolError(f"pattern {shown} has a {{ without a closing }}: write {{js,ts}}")
    return frames[0][1]


def _class_regex(pattern: str, segment: str, start: int) -> tuple[str, int]:
    """`[abc]`, `[!abc]` or `[^a-z]` at `start` -> (a one-character regex, index after `]`)."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    i += negate
    end = segment.find("]", i + 1)  # a `]` right after `[` or `[!` is a member, not the end
    if end < 0:
        raise ToolError(f"pattern {pattern} has a [ without a closing ]: write [abc], or \\[ for [")
    members = "".join(f"\\{c}" if c in "\\[]" else c for c in segment[i:end])
    regex = f"[{'^' if negate else ''}{members}]"
    try:
        re.compile(regex)
    except re.error as exc:  # e.g. a reversed range, [z-a]
        raise ToolError(f"pattern {pattern} is not a valid wildcard: {exc} in {regex}") from None
    return regex, end + 1


@dataclass(frozen=True)
class _Piece:
    """Text between two stars, of a fixed width: a plain string, or a regex without quantifiers
    when it holds `?` or a [class] (so searching for it cannot backtrack either)."""

    width: int
    text: str | None  # plain text, found with str.find ...
    regex: re.Pattern[str] | None  # ... or else a regex, found with regex.search

    def at(self, name: str, position: int) -> bool:
        if self.text is not None:
            return name.startswith(self.text, position)
        assert self.regex is not None
        return self.regex.match(name, position) is not None

    def find(self, name: str, start: int, end: int) -> int:
        """Where the piece first lies wholly within name[start:end], or -1."""
        if self.text is not None:
            return name.find(self.text, start, end)
        assert self.regex is not None
        found = self.regex.search(name, start, end)
        return -1 if found is None else found.start()


class Segment:
    """One segment without `/` or braces: `*.test.js`, `a?c`, `[!_]*`.

    Split at its stars into fixed-width pieces, it matches a name when the first piece starts it,
    the last ends it, and each middle piece is found after the one before. The leftmost place
    for a middle piece is always right (a later one only leaves less room for the rest), so no
    choice is ever revisited: one pass over the name per piece.
    """

    def __init__(self, pattern: str, segment: str) -> None:
        self.pieces: list[_Piece] = []
        units: list[str] = []  # the current piece, one regex per character
        text: list[str] | None = []  # the same piece as plain text, until a ? or [class]
        i = 0
        while i < len(segment):
            char = segment[i]
            if char == "*":
                self.pieces.append(_piece(units, text))
                units, text = [], []
            elif char == "?":
                units.append(".")
                text = None
            elif char == "[":
                regex, i = _class_regex(pattern, segment, i)
                units.append(regex)
                text = None
                continue
            else:
                if char == "\\" and i + 1 < len(segment):
                    i += 1  # the next character is literal; a trailing backslash is itself
                units.append(re.escape(segment[i]))
                if text is not None:
                    text.append(segment[i])
            i += 1
        self.pieces.append(_piece(units, text))
        self.width = sum(piece.width for piece in self.pieces)  # the shortest name it matches
        fast = _fast_test([piece.text for piece in self.pieces])
        if fast is not None:
            self.match = fast  # type: ignore[method-assign]
        # `test`: the same answer as `match`, truthy rather than a bool, one C call where the
        # segment allows (an ignore file asks each name of every folder below it).
        self.test: Callable[[str], object] = fast or _regex_test(self.pieces) or self.match

    def match(self, name: str) -> bool:
        first, last = self.pieces[0], self.pieces[-1]
        if len(self.pieces) == 1:  # no star: the name is exactly one piece long
            return len(name) == first.width and first.at(name, 0)
        end = len(name) - last.width  # where the last piece must start
        if len(name) < self.width or not first.at(name, 0) or not last.at(name, end):
            return False
        position = first.width
        for piece in self.pieces[1:-1]:
            found = piece.find(name, position, end)
            if found < 0:
                return False
            position = found + piece.width
        return True


def _fast_test(texts: list[str | None]) -> Callable[[str], bool] | None:
    """One str method for the shapes most patterns have: `src`, `*.py`, `test_*`, `*`.

    A walk asks once per file, so the call itself is most of the cost: these run in C.
    """
    if None in texts or len(texts) > 2:
        return None
    if len(texts) == 1:
        return str(texts[0]).__eq__  # `src`
    head, tail = str(texts[0]), str(texts[1])
    if not tail:
        return methodcaller("startswith", head)  # `test_*`, and `*` (every name starts with "")
    if not head:
        return methodcaller("endswith", tail)  # `*.py`
    return None


def _regex_test(pieces: list[_Piece]) -> Callable[[str], object] | None:
    """One regex call for `*.py[cod]`, `a?c*` and `?`: a fixed-width regex at one place."""
    if len(pieces) == 1 and pieces[0].regex is not None:
        return pieces[0].regex.fullmatch
    if len(pieces) != 2:
        return None
    head, tail = pieces
    if tail.text == "" and head.regex is not None:
        return head.regex.match
    if head.text == "" and tail.regex is not None:
        at, width = tail.regex.match, tail.width
        return lambda name: len(name) >= width and at(name, len(name) - width)
    return None


def _piece(units: list[str], text: list[str] | None) -> _Piece:
    if text is not None:
        return _Piece(len(units), "".join(text), None)
    return _Piece(len(units), None, re.compile("".join(units), re.DOTALL))


class Wildcard:
    """A compiled wildcard: `Wildcard("src/**/*.{js,ts}").match("src/a/b.ts")` is True.

    `**` as a whole segment is any number of directories (zero or more, or one or more at the
    end: `src/**` is everything below src); `*` and `?` stay within a segment; `[abc]` is one of
    a set; `{a,b}` either alternative; a backslash makes the next character literal. Anything
    else, `**` inside a segment included, means what it means in a single segment: `a**b` is
    `a*b`.
    """

    def __init__(self, pattern: str | list[str], shown: str | None = None) -> None:
        """Compile `pattern`; refusals name `shown`, the whole pattern the model wrote. A list
        is the alternatives themselves, braces being text in them (an ignore file's lines):
        `finals` then says which of them a path matches."""
        shown = (
            (pattern if isinstance(pattern, str) else ",".join(pattern)) if shown is None else shown
        )
        if isinstance(pattern, str) and len(pattern) > MAX_FIELD_CHARS:
            raise ToolError(
                f"pattern is {len(pattern):,} characters long; at most {MAX_FIELD_CHARS} "
                "are accepted"
            )
        alternatives = (
            list(dict.fromkeys(expand_braces(pattern, shown)))
            if isinstance(pattern, str)
            else pattern
        )
        # All alternatives in one list: each is its segments, then _ACCEPT. A state is an index.
        self.steps: list[Segment | str] = []
        self.owners: dict[int, int] = {}  # an _ACCEPT's state -> its alternative's index
        starts = []
        for alternative in alternatives:
            segments = []
            for segment in alternative.split("/"):
                if segment != _GLOBSTAR or segments[-1:] != [_GLOBSTAR]:  # "**/**" is "**"
                    segments.append(segment)
            if segments[-1] == _GLOBSTAR:
                segments.append("*")  # "**" then "*": one directory or more, never zero
            if len(self.steps) + len(segments) + 1 > MAX_STEPS:
                raise ToolError(
                    f"pattern {shown} has more than {MAX_STEPS} path segments once its {{...}} "
                    "are expanded: use fewer segments and choices, or two calls"
                )
            starts.append(len(self.steps))
            self.steps += [_GLOBSTAR if s == _GLOBSTAR else Segment(shown, s) for s in segments]
            self.owners[len(self.steps)] = len(starts) - 1
            self.steps.append(_ACCEPT)
        self.start = self._close(starts)
        # Per directory, least recently computed first: the states after its segments, and the
        # test its files' names face (None until a file there is matched). Bounded: MAX_HELD.
        self._dirs: OrderedDict[str, tuple[frozenset[int], Callable[[str], bool] | None]]
        self._dirs = OrderedDict()
        self._held = 0

    def _close(self, states: list[int] | set[int]) -> frozenset[int]:
        """Add the states a `**` can reach without consuming a segment (it may match none)."""
        closed = set(states)
        pending = list(states)
        while pending:
            state = pending.pop()
            if self.steps[state] == _GLOBSTAR and state + 1 not in closed:
                closed.add(state + 1)
                pending.append(state + 1)
        return frozenset(closed)

    def _step(self, states: frozenset[int], name: str) -> frozenset[int]:
        """The states after one more path segment `name`."""
        after = set()
        for state in states:
            step = self.steps[state]
            if step == _GLOBSTAR:
                after.add(state)  # ** swallows the segment and may swallow more
            elif step != _ACCEPT and step.match(name):  # type: ignore[union-attr]
                after.add(state + 1)
        return self._close(after)

    def _remember(
        self, directory: str, states: frozenset[int], test: Callable[[str], bool] | None = None
    ) -> None:
        """Remember a directory's states (and test), forgetting the least recent past the bounds.
        A test holds at most as many segments as there are states: counted with them."""
        if directory in self._dirs:
            self._held -= len(self._dirs.pop(directory)[0]) + 1
        self._dirs[directory] = (states, test)
        self._held += len(states) + 1
        while self._held > MAX_HELD or len(self._dirs) > _MAX_FOLDERS:
            self._held -= len(self._dirs.popitem(last=False)[1][0]) + 1

    def _states_in(self, directory: str) -> frozenset[int]:
        """The states after a directory's segments. Each directory's are remembered, so a new
        one costs one step from its parent, which a walk has always met just before."""
        unknown = []  # the directories on the way down not seen yet, deepest first
        while directory and directory not in self._dirs:
            unknown.append(directory)
            directory = directory.rpartition("/")[0]
        if directory:
            self._dirs.move_to_end(directory)  # in use: forgotten last
            states = self._dirs[directory][0]
        else:
            states = self.start
        for below in reversed(unknown):
            states = self._step(states, below.rpartition("/")[2]) if states else states
            self._remember(below, states)
        return states

    def _name_test(self, directory: str) -> Callable[[str], bool]:
        """What the name of a file in `directory` must pass for its path to match: the
        segments that _ACCEPT follows (a trailing ** was given a "*", so ** never ends one)."""
        states = self._states_in(directory)
        last = [
            self.steps[state]
            for state in sorted(states)
            if self.steps[state] not in (_GLOBSTAR, _ACCEPT) and self.steps[state + 1] == _ACCEPT
        ]
        test = _never if not last else last[0].match if len(last) == 1 else _any_of(last)
        self._remember(directory, states, test)
        return test

    def names_in(self, directory: str) -> Callable[[str], bool]:
        """The test the name of a file in `directory` ("" for the top) must pass for its path
        to match: a walk asks once per folder, then filters names before joining them."""
        known = self._dirs.get(directory)
        test = known[1] if known is not None else None
        return test or self._name_test(directory)

    def finals(self, directory: str) -> list[tuple[int, Segment]]:
        """(alternative, its last segment) for each alternative a file in `directory` matches
        if its name passes that segment, latest alternative first: an ignore file asks this to
        learn which of its lines is the last to match."""
        states = self._states_in(directory)
        return sorted(
            (
                (self.owners[state + 1], step)
                for state in states
                if isinstance(step := self.steps[state], Segment) and state + 1 in self.owners
            ),
            key=lambda final: -final[0],
        )

    def match(self, path: str) -> bool:
        """Whether the whole '/'-separated relative `path` matches. A walk lists a folder's
        files together: the folder is matched once, and each file costs one test of its name."""
        directory, _, name = path.rpartition("/")
        known = self._dirs.get(directory)
        test = known[1] if known is not None else None
        return (test or self._name_test(directory))(name)


def _never(name: str) -> bool:
    return False


def _any_of(segments: list[Segment]) -> Callable[[str], bool]:
    return lambda name: any(segment.match(name) for segment in segments)
