"""The spellings a key takes when it leaks, one character at a time or as a whole string.

A key-shaped key (printable ASCII, KEY_SHAPED_CHARS or more) is matched character by character,
each character as itself in any case or escaped (JSON's \\u0073, URL's %73, HTML's &#115;), so a
key half escaped is still the key; and as whole strings: hex, UTF-16, reversed, base64 of the key
and of `Bearer <key>`. Deliberately not handled: a key held as a number (not text) in another base.
"""

from __future__ import annotations

import base64
import functools
import json
from urllib.parse import quote, quote_plus

__all__ = [
    "KEY_SHAPED_CHARS",
    "PREFIX_CHARS",
    "char_spellings",
    "encoded_forms",
    "key_shaped",
    "spelled",
    "whole_forms",
]

# A prefix this long is a leak: past the vendor's part ("sk-proj-", "sk-ant-api03-", 8 to 13
# characters) it holds 7 or more characters of the key itself. Shorter runs are left alone.
PREFIX_CHARS = 20
# Values shorter than this (or with spaces or non-ASCII) are matched only as they are written and
# in the encodings: "password1" in any case, reversed or as hex would cut ordinary words.
KEY_SHAPED_CHARS = 16


def key_shaped(secret: str) -> bool:
    return len(secret) >= KEY_SHAPED_CHARS and all("!" <= ch <= "~" for ch in secret)


@functools.cache
def char_spellings(ch: str) -> tuple[str, ...]:
    """Lower-case ways one ASCII character of a key is written in a text: itself, JSON's \\u00hh
    (and \\/, \\", \\\\), URL's %hh, HTML's &#dd; and &#xhh;, and the first two escaped once
    more (a JSON string holding \\u0073, a URL holding %73). At most 7 characters each."""
    code = ord(ch)
    found = [ch.lower(), f"\\u{code:04x}", f"%{code:02x}", f"&#{code};", f"&#x{code:x};"]
    found += [f"\\\\u{code:04x}", f"%25{code:02x}"]
    if ch in '/"\\':
        found += ["\\" + ch, "\\\\" + ch]
    return tuple(dict.fromkeys(found))


def spelled(text: str, at: int, key: str) -> tuple[int, int, bool]:
    """(characters of `key` that `text` spells from `at`, where that spelling ends, whether the
    text ended inside it): it stops at the first character spelled no way, or at the text's end.
    A character is taken by its first spelling that fits (a key holding \\, % or & greedily)."""
    done, pos = 0, at
    for ch in key:
        here = text[pos : pos + 1]
        if here.lower() == ch.lower():  # the common case first: the character as itself
            pos += 1
            done += 1
            continue
        if here and here not in _ESCAPES:
            return done, pos, False
        for spelling in char_spellings(ch)[1:]:
            if text[pos : pos + len(spelling)].lower() == spelling:
                pos += len(spelling)
                done += 1
                break
        else:
            rest = text[pos:].lower()
            ran_out = len(rest) < 7 and any(s.startswith(rest) for s in char_spellings(ch))
            return done, pos, ran_out
    return done, pos, False


_ESCAPES = frozenset("\\%&")  # what an escaped spelling of a character starts with


def _base64_cores(data: bytes) -> set[str]:
    """The part of base64 that `data` makes wherever it sits in a longer blob: at each of the
    three alignments, the characters made of its bits alone; in both alphabets (+/ and -_)."""
    cores = set()
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + data).decode()
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]
        cores |= {core, core.translate(str.maketrans("+/", "-_"))}
    return cores


def whole_forms(secret: str) -> set[str]:
    """The whole-string spellings of a key-shaped key that no character-by-character reading
    finds: hex, UTF-16 (a NUL beside each character, either byte order, with or without BOM),
    reversed, base64 of the key and of `Bearer <key>`, each also JSON-escaped; matched in any
    letter case."""
    data = secret.encode()
    forms = {
        data.hex(),
        "\0".join(secret),
        secret[::-1],
        *_base64_cores(data),
        *_base64_cores(b"Bearer " + data),
    }
    return forms | {json.dumps(form)[1:-1] for form in forms}  # inside a JSON string too


def encoded_forms(secret: str) -> set[str]:
    """Literal strings a text holding `secret` holds, without NUL (a command line cannot carry
    one): as it is, URL-encoded two ways, JSON-escaped; a key-shaped one also wholly \\u-escaped,
    with HTML references, and its whole forms but UTF-16."""
    if not secret:
        return set()
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],  # inside a JSON string: quotes and backslashes escaped
    }
    if key_shaped(secret):
        forms |= {
            "".join(f"\\u{ord(ch):04x}" for ch in secret),
            "".join(ch if ch.isalnum() else f"&#{ord(ch)};" for ch in secret),
            "".join(f"&#{ord(ch)};" for ch in secret),
        }
        forms |= {form for form in whole_forms(secret) if "\0" not in form}
    return forms
