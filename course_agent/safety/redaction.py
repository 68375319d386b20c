"""Cut secret values out of any text before it is shown, sent, saved or cut into an excerpt.

A key is matched as a substring (not a word) in its plain, URL-encoded and JSON-escaped forms;
`redact_cut` cuts an excerpt without leaving the start of a key where the cut fell; StreamRedactor
cuts keys split across the pieces of a stream. Deliberately not handled: encodings a gateway might
invent (base64, say).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = [
    "MIN_PARTIAL",
    "REDACTED",
    "StreamRedactor",
    "encoded_forms",
    "known_secrets",
    "redact",
    "redact_cut",
    "remember_secrets",
]

REDACTED = "[redacted]"
# The start of a key a cut may leave behind: 3 characters are "sk-", which every key of a vendor
# shares; 4 or more are replaced too.
MIN_PARTIAL = 4

# Every key this process has read (settings register them as they load them): the edges where
# outside text enters (gateway bytes, a tool's reader) cut these without being handed them.
_KNOWN: set[str] = set()


def remember_secrets(values: Iterable[str]) -> None:
    """Add keys to the ones every edge cuts; empty values are ignored."""
    _KNOWN.update(value for value in values if value)


def known_secrets() -> tuple[str, ...]:
    """The keys remembered so far, longest first (a key whose prefix is another is cut whole)."""
    return tuple(sorted(_KNOWN, key=len, reverse=True))


def encoded_forms(secret: str) -> set[str]:
    """The ways `secret` can appear in a text: as it is, URL-encoded two ways, JSON-escaped."""
    if not secret:
        return set()
    return {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],  # inside a JSON string: quotes and backslashes escaped
    }


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every non-empty secret replaced by [redacted].

    Longest forms first, so that a key whose prefix is another key is cut whole.
    """
    forms = sorted({form for secret in secrets for form in encoded_forms(secret)}, key=len)
    for form in reversed(forms):
        text = text.replace(form, REDACTED)
    return text


def redact_cut(
    text: str, limit: int, secrets: Iterable[str], *, was_cut: bool = False
) -> tuple[str, bool]:
    """(`text` redacted, then cut to `limit` characters; whether it ends cut). Where it ends cut,
    here or before it arrived (`was_cut`: ripgrep's preview of a long line, say), a start of a
    key of MIN_PARTIAL characters or more that the cut left behind is replaced by [redacted] too.

    So the excerpt may run len(REDACTED) characters past `limit`, but never holds part of a key.
    """
    secrets = list(secrets)
    text = redact(text, secrets)
    if len(text) > limit:
        text, was_cut = text[:limit], True
    if not was_cut:
        return text, False
    start = len(text)  # where the earliest partial key at the end begins
    for form in {form for secret in secrets for form in encoded_forms(secret)}:
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
    """Redact a text that arrives in pieces (a model's streamed answer): `feed` each piece and
    write what it returns, then `flush` before anything else is written or at the end.

    A piece's tail that could be the start of a key is held back until the next piece says
    whether it is one, so a key streamed as "sk-te" + "st-0123..." is cut whole.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = [secret for secret in secrets if secret]
        self._forms = {form for secret in self._secrets for form in encoded_forms(secret)}
        self._held = ""  # a redacted tail that is a proper prefix of some form of a key

    def feed(self, piece: str) -> str:
        if not self._forms:
            return piece
        text = redact(self._held + piece, self._secrets)
        keep = 0  # the longest tail of `text` that some form starts with
        for form in self._forms:
            for size in range(min(len(form) - 1, len(text)), keep, -1):
                if text.endswith(form[:size]):
                    keep = size
                    break
        self._held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What was held back: the stream paused here, so it was not the start of a key."""
        held, self._held = self._held, ""
        return held
