"""Cut secret values out of any text before it is shown, sent, saved or cut into an excerpt.

A key is matched as a substring (not a word) in its plain, URL-encoded and JSON-escaped forms.
Deliberately not handled: keys split across two texts (redact whole texts, then cut them) and
encodings a gateway might invent (base64 of the header, say); those are the caller's to avoid.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["REDACTED", "encoded_forms", "redact"]

REDACTED = "[redacted]"


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
