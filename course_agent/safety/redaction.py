"""Cut secret values out of any text before it is shown, sent, saved or cut into an excerpt.

One redactor for every channel: a key is matched as a substring (not a word) in every spelling
safety.spellings lists, and a prefix of PREFIX_CHARS or more is cut too. `redact_cut` cuts an
excerpt without leaving the start of a key where the cut fell; StreamRedactor holds back at most
one spelling of a key, so a key split across a stream's pieces is cut whole. Deliberately not
handled: which keys (remember_secrets is told), encodings a gateway might invent past those.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from course_agent.safety.spellings import (
    KEY_SHAPED_CHARS,
    PREFIX_CHARS,
    char_spellings,
    encoded_forms,
    key_shaped,
    spelled,
    whole_forms,
)

__all__ = [
    "KEY_SHAPED_CHARS",
    "MIN_PARTIAL",
    "PREFIX_CHARS",
    "REDACTED",
    "StreamRedactor",
    "encoded_forms",
    "key_cutter",
    "known_secrets",
    "redact",
    "redact_cut",
    "remember_secrets",
]

REDACTED = "[redacted]"
# The start of a key a cut may leave behind: 3 characters are "sk-", which every key of a vendor
# shares; 4 or more are replaced too.
MIN_PARTIAL = 4
LONGEST_SPELLING = 7  # characters one character of a key takes at most (\\u0073)

# Every key this process has read (settings register them as they load them): the channels cut
# these without being handed them.
_KNOWN: set[str] = set()


def remember_secrets(values: Iterable[str]) -> None:
    """Add keys to the ones every channel cuts; empty values are ignored."""
    _KNOWN.update(value for value in values if value)


def known_secrets() -> tuple[str, ...]:
    """The keys remembered so far, longest first (a key whose prefix is another is cut whole)."""
    return tuple(sorted(_KNOWN, key=len, reverse=True))


def _spelled_pattern(key: str) -> str:
    """A regex for the first PREFIX_CHARS characters of `key`, each in any of its spellings."""
    return "".join(
        "(?:" + "|".join(map(re.escape, char_spellings(ch))) + ")" for ch in key[:PREFIX_CHARS]
    )


def _match_any(keys: list[str], forms: list[str], loose: set[str]) -> re.Pattern[str] | None:
    """One pattern for every secret: a spelled prefix of a key-shaped key (group "key"), or a
    form as a string (`loose` ones in any letter case); None when there is nothing to cut."""
    spelled_keys = "|".join(_spelled_pattern(key) for key in keys)
    parts = [f"(?P<key>(?i:{spelled_keys}))"] if keys else []
    parts += [f"(?i:{re.escape(f)})" if f in loose else re.escape(f) for f in forms]
    return re.compile("|".join(parts)) if parts else None


def _form_starts(forms: list[str], loose: set[str]) -> dict[str, list[tuple[str, bool]]]:
    """First character -> (form, matched in any case): where a held tail may start."""
    starts: dict[str, list[tuple[str, bool]]] = {}
    for form in forms:
        if len(form) > 1:
            first = {form[0].lower(), form[0].upper()} if form in loose else {form[0]}
            spelt = form.lower() if form in loose else form
            for ch in first:
                starts.setdefault(ch, []).append((spelt, form in loose))
    return starts


def _key_starts(keys: list[str]) -> frozenset[str]:
    """Every character a spelling of a key-shaped key may start with, in either case."""
    found = {s[0] for key in keys for s in char_spellings(key[0])}
    return frozenset(found | {ch.upper() for ch in found})


class _Cutter:
    """The compiled pattern for one set of secrets (built once per set, see `_cutter`)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        # Key-shaped keys are read character by character (`spelled`); their whole forms and
        # every other secret's literal forms are matched as strings.
        self.keys = [key for key in secrets if key_shaped(key)]
        loose = {form for key in self.keys for form in whole_forms(key)}  # any letter case
        exact = {form for key in secrets if not key_shaped(key) for form in encoded_forms(key)}
        self.forms = sorted(loose | exact, key=len, reverse=True)  # a longer form wins
        self.pattern = _match_any(self.keys, self.forms, loose)
        self.starts = _form_starts(self.forms, loose)
        self.key_starts = _key_starts(self.keys)
        self.longest = max(
            [len(form) for form in self.forms] + [LONGEST_SPELLING * len(k) for k in self.keys],
            default=0,
        )
        firsts = sorted(set(self.starts) | self.key_starts)
        self.first = re.compile("|".join(map(re.escape, firsts))) if firsts else None

    def _key_end(self, text: str, start: int, fallback: int) -> tuple[int, bool]:
        """Where the longest key spelled from `start` ends, and whether the text ran out in it."""
        end, open_ = fallback, False
        for key in self.keys:
            done, stop, ran_out = spelled(text, start, key)
            if done >= min(PREFIX_CHARS, len(key)) and stop >= end:
                end, open_ = stop, done < len(key) and (ran_out or stop == len(text))
        return end, open_

    def cut(self, text: str, *, open_end: bool = False) -> str:
        """`text` with every match replaced by REDACTED. With `open_end`, a prefix of a key that
        runs to the end of the text is kept: the next piece of a stream may complete it."""
        if self.pattern is None:
            return text
        shown, at = [], 0
        while found := self.pattern.search(text, at):
            start, end = found.span()
            if found.lastgroup == "key":  # a prefix: it goes on as far as the text spells a key
                end, open_ = self._key_end(text, start, end)
                if open_end and open_:
                    break  # the stream may complete it: leave it for `held`
            shown += [text[at:start], REDACTED]
            at = end
        shown.append(text[at:])
        return "".join(shown)

    def held(self, text: str) -> int:
        """How many characters at the end of `text` could start a spelling of a key: the stream
        holds them (at most `longest`, one key in its longest spelling)."""
        if self.first is None:
            return 0
        for found in self.first.finditer(text, max(len(text) - self.longest + 1, 0)):
            start = found.start()
            tail = text[start:]
            for form, loose in self.starts.get(text[start], ()):
                seen = tail.lower() if loose else tail
                if len(seen) < len(form) and form.startswith(seen):
                    return len(text) - start  # the earliest start: the longest tail
            if text[start] not in self.key_starts:
                continue
            for key in self.keys:
                done, stop, ran_out = spelled(text, start, key)
                if done < len(key) and (ran_out or stop == len(text)) and (done or ran_out):
                    return len(text) - start
        return 0


@functools.lru_cache(maxsize=32)
def _cutter(secrets: tuple[str, ...]) -> _Cutter:
    return _Cutter(secrets)


def key_cutter(secrets: Iterable[str]) -> _Cutter:
    """The compiled cutter for `secrets`, for a channel that cuts many pieces: `.cut(text,
    open_end=...)` and `.held(text)` (see StreamRedactor)."""
    return _cutter(tuple(sorted({secret for secret in secrets if secret})))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every spelling of every non-empty secret replaced by [redacted], in one pass."""
    return key_cutter(secrets).cut(text)


def redact_cut(
    text: str, limit: int, secrets: Iterable[str], *, was_cut: bool = False
) -> tuple[str, bool]:
    """(`text` redacted, then cut to `limit` characters; whether it ends cut). Where it ends cut,
    here or before it arrived (`was_cut`: ripgrep's preview of a long line, say), a start of a
    key of MIN_PARTIAL characters or more that the cut left behind is replaced by [redacted] too.

    So the excerpt may run len(REDACTED) characters past `limit`, but never holds part of a key.
    """
    cutter = key_cutter(secrets)
    text = cutter.cut(text)
    if len(text) > limit:
        text, was_cut = text[:limit], True
    if not was_cut:
        return text, False
    start = len(text) - cutter.held(text)
    return (text[:start] + REDACTED if len(text) - start >= MIN_PARTIAL else text), True


class StreamRedactor:
    """Redact a text that arrives in pieces (a model's streamed answer, a call's arguments):
    `feed` each piece and write what it returns, then `flush` before anything else is written or
    at the end.

    A piece's tail that could be the start of a key is held back until the next piece says
    whether it is one, so a key streamed as "sk-te" + "st-0123..." is cut whole.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._cutter = key_cutter(secrets)
        self._held = ""  # a redacted tail that is a proper prefix of some spelling of a key

    @property
    def holding(self) -> int:
        """Characters held back now (never more than one key in its longest spelling)."""
        return len(self._held)

    def feed(self, piece: str) -> str:
        if self._cutter.pattern is None:
            return piece
        text = self._cutter.cut(self._held + piece, open_end=True)
        keep = self._cutter.held(text)
        self._held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What was held back: the stream paused here, so it was not a whole key (a prefix of one
        is still cut)."""
        held, self._held = self._held, ""
        return self._cutter.cut(held)
