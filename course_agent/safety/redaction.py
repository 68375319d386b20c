"""Cut secret values out of any text before it is shown, sent, saved or cut into an excerpt.

A key is matched as a substring (not a word) in every spelling a real leak takes: plain,
URL-encoded, JSON-escaped; and for a key-shaped value (printable ASCII, 16 or more characters) in
any letter case, as hex, reversed, as HTML character references, and as a prefix of PREFIX_CHARS
or more. `redact_cut` cuts an excerpt without leaving the start of a key where the cut fell;
StreamRedactor cuts keys split across the pieces of a stream. Deliberately not handled: base64
and other encodings a gateway might invent, and a key cut into pieces shorter than PREFIX_CHARS
that are not streamed one after the other (the tools' readers join the lines they read).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = [
    "KEY_SHAPED_CHARS",
    "MIN_PARTIAL",
    "PREFIX_CHARS",
    "REDACTED",
    "StreamRedactor",
    "encoded_forms",
    "held_tail",
    "key_cutter",
    "known_secrets",
    "redact",
    "redact_cut",
    "redact_open",
    "remember_secrets",
]

REDACTED = "[redacted]"
# The start of a key a cut may leave behind: 3 characters are "sk-", which every key of a vendor
# shares; 4 or more are replaced too.
MIN_PARTIAL = 4
# A prefix this long is a leak: past the vendor's part ("sk-proj-", "sk-ant-api03-", 8 to 13
# characters) it holds 7 or more characters of the key itself. Shorter runs are left alone.
PREFIX_CHARS = 20
# Values shorter than this (or with spaces or non-ASCII) are matched only as they are written and
# in the encodings: "password1" in any case, reversed or as hex would cut ordinary words.
KEY_SHAPED_CHARS = 16

# Every key this process has read (settings register them as they load them): the edges where
# outside text enters (gateway bytes, a tool's reader) cut these without being handed them.
_KNOWN: set[str] = set()


def remember_secrets(values: Iterable[str]) -> None:
    """Add keys to the ones every edge cuts; empty values are ignored."""
    _KNOWN.update(value for value in values if value)


def known_secrets() -> tuple[str, ...]:
    """The keys remembered so far, longest first (a key whose prefix is another is cut whole)."""
    return tuple(sorted(_KNOWN, key=len, reverse=True))


def _key_shaped(secret: str) -> bool:
    return len(secret) >= KEY_SHAPED_CHARS and all("!" <= ch <= "~" for ch in secret)


def _entities(secret: str, spell: str) -> str:
    """`sk&#45;test-...`: every character that is not a letter or digit as an HTML reference."""
    return "".join(ch if ch.isalnum() else spell.format(ord(ch)) for ch in secret)


def encoded_forms(secret: str) -> set[str]:
    """The ways `secret` can appear in a text: as it is, URL-encoded two ways, JSON-escaped; a
    key-shaped one also as hex, reversed, and with HTML character references (matched in any
    letter case, see `_pattern`)."""
    if not secret:
        return set()
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],  # inside a JSON string: quotes and backslashes escaped
    }
    if _key_shaped(secret):
        forms |= {
            secret.encode().hex(),
            secret[::-1],
            _entities(secret, "&#{};"),
            _entities(secret, "&#x{:x};"),
            "".join(f"&#{ord(ch)};" for ch in secret),
        }
    return forms


def _agreeing(text: str, rest: str) -> int:
    """How many characters `text` and `rest` have in common at their start."""
    for count, (mine, theirs) in enumerate(zip(text, rest, strict=False)):
        if mine != theirs:
            return count
    return min(len(text), len(rest))


class _Cutter:
    """The compiled pattern for one set of secrets (built once per set, see `_cutter`)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        forms = {form for secret in secrets for form in encoded_forms(secret)}
        shaped = {form for key in secrets if _key_shaped(key) for form in encoded_forms(key)}
        # Longest first: at one position the longest form wins, so a key that starts with another
        # is cut whole. Key-shaped forms in any case; the others exactly as written. Last, the
        # first PREFIX_CHARS of a long key-shaped key: `cut` extends a match as far as it goes.
        spelled = [
            f"(?i:{re.escape(form)})" if form in shaped else re.escape(form)
            for form in sorted(forms, key=len, reverse=True)
        ]
        self.rests: dict[str, str] = {}  # group name -> the rest of the key, lower case
        for number, key in enumerate(secrets):
            if _key_shaped(key) and len(key) > PREFIX_CHARS:
                self.rests[f"prefix{number}"] = key[PREFIX_CHARS:].lower()
                spelled.append(f"(?P<prefix{number}>(?i:{re.escape(key[:PREFIX_CHARS])}))")
        self.forms = forms
        self.pattern = re.compile("|".join(spelled)) if forms else None
        # first character -> (form, matched in any case): where a held tail may start
        self.starts: dict[str, list[tuple[str, bool]]] = {}
        for form in forms:
            if len(form) > 1:
                loose = form in shaped
                for first in {form[0].lower(), form[0].upper()} if loose else {form[0]}:
                    self.starts.setdefault(first, []).append(
                        (form.lower() if loose else form, loose)
                    )
        self.longest = max((len(form) for form in forms), default=0)
        # Any character a form starts with: a text without one holds no form and no form's start.
        self.first = (
            re.compile("|".join(sorted(map(re.escape, self.starts)))) if self.starts else None
        )

    def touches(self, text: str) -> bool:
        """Could `text` hold a form, or the start of one? (False is cheap, and final.)"""
        return self.first is not None and self.first.search(text) is not None

    def cut(self, text: str, *, open_end: bool = False) -> str:
        """`text` with every match replaced by REDACTED. With `open_end`, a prefix of a key that
        runs to the end of the text is kept: the next piece of a stream may complete it."""
        if self.pattern is None:
            return text
        shown, at = [], 0
        while found := self.pattern.search(text, at):
            start, end = found.span()
            rest = self.rests.get(found.lastgroup or "")
            if rest is not None:  # a prefix: it goes on as far as the text follows the key
                end += _agreeing(text[end : end + len(rest)].lower(), rest)
                if open_end and end == len(text) and end - start < PREFIX_CHARS + len(rest):
                    break  # the stream may complete it: leave it for `held`
            shown += [text[at:start], REDACTED]
            at = end
        shown.append(text[at:])
        return "".join(shown)

    def held(self, text: str) -> int:
        """How many characters at the end of `text` could start a form: the stream holds them."""
        if self.first is None:
            return 0
        for found in self.first.finditer(text, max(len(text) - self.longest + 1, 0)):
            start = found.start()
            for form, loose in self.starts[text[start]]:
                tail = text[start:].lower() if loose else text[start:]
                if len(tail) < len(form) and form.startswith(tail):
                    return len(text) - start  # the earliest start: the longest tail
        return 0


@functools.lru_cache(maxsize=32)
def _cutter(secrets: tuple[str, ...]) -> _Cutter:
    return _Cutter(secrets)


def _cutter_for(secrets: Iterable[str]) -> _Cutter:
    return _cutter(tuple(sorted({secret for secret in secrets if secret})))


def key_cutter(secrets: Iterable[str]) -> _Cutter:
    """The compiled cutter for `secrets`, for an edge that cuts many pieces: `.cut(text,
    open_end=...)`, `.held(text)`, `.touches(text)` (see redact_open and held_tail)."""
    return _cutter_for(secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every non-empty secret replaced by [redacted], in one pass."""
    return _cutter_for(secrets).cut(text)


def redact_open(text: str, secrets: Iterable[str]) -> str:
    """`redact`, but a prefix of a key that runs to the end of `text` is kept: the next piece of
    a stream may make it a whole key (see StreamRedactor)."""
    return _cutter_for(secrets).cut(text, open_end=True)


def held_tail(text: str, secrets: Iterable[str]) -> int:
    """How many characters at the end of `text` could be the start of a key (to hold back)."""
    return _cutter_for(secrets).held(text)


def redact_cut(
    text: str, limit: int, secrets: Iterable[str], *, was_cut: bool = False
) -> tuple[str, bool]:
    """(`text` redacted, then cut to `limit` characters; whether it ends cut). Where it ends cut,
    here or before it arrived (`was_cut`: ripgrep's preview of a long line, say), a start of a
    key of MIN_PARTIAL characters or more that the cut left behind is replaced by [redacted] too.

    So the excerpt may run len(REDACTED) characters past `limit`, but never holds part of a key.
    """
    cutter = _cutter_for(secrets)
    text = cutter.cut(text)
    if len(text) > limit:
        text, was_cut = text[:limit], True
    if not was_cut:
        return text, False
    start = len(text)  # where the earliest partial key at the end begins
    for form in cutter.forms:
        if len(form) <= MIN_PARTIAL:
            continue
        tail = len(text) - (len(form) - 1)  # a partial form is shorter than the form
        at = text.find(form[:MIN_PARTIAL], max(tail, 0))
        while at >= 0 and at < start:
            if form.startswith(text[at:]):
                start = at
                break
            at = text.find(form[:MIN_PARTIAL], at + 1)
    return (text if start == len(text) else text[:start] + REDACTED), True


class StreamRedactor:
    """Redact a text that arrives in pieces (a model's streamed answer, a gateway's bytes): `feed`
    each piece and write what it returns, then `flush` before anything else is written or at
    the end.

    A piece's tail that could be the start of a key is held back until the next piece says
    whether it is one, so a key streamed as "sk-te" + "st-0123..." is cut whole.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._cutter = _cutter_for(secrets)
        self._held = ""  # a redacted tail that is a proper prefix of some form of a key

    @property
    def holding(self) -> bool:
        return bool(self._held)

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
