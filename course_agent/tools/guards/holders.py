"""Which files hold a known key, in any spelling: grep withholds them whole, so no pattern can ask
whether a key's next character is an "a", and every other file is searched as if no key existed.

One rg pass finds them (`--files-with-matches`) with literals per key: each whole spelling (as
written, escaped, hex, base64, reversed, ...) and its first PREFIX_CHARS characters, any case;
UTF-16 with a byte-order mark is transcoded by rg itself, UTF-16 without one is binary to rg and
never searched. Deliberately not handled: a key spelt half one way, half another, or a prefix of
one in an escaped spelling (the redactor cuts them where they are shown, but the file is
searched), and a key split over two lines of a file (a PEM block is a key file, never searched).
"""

from __future__ import annotations

import re
from pathlib import Path

from course_agent.safety.redaction import known_secrets, redact
from course_agent.safety.spellings import PREFIX_CHARS, encoded_forms, key_shaped
from course_agent.tools.guards.ripgrep import Ripgrep, Rung, climb_down, ripgrep_command

__all__ = ["find_holders", "key_patterns", "names_a_key", "read_paths"]


def key_patterns(secrets: tuple[str, ...]) -> list[str]:
    """rg regexes for each secret: a key-shaped key in each whole spelling and its first
    PREFIX_CHARS characters as written, in any case; another secret as written and in its
    encodings. Literals only, so rg keeps its fast literal search: on a copy of site-packages
    this pass takes 292 ms of rg CPU (fixed strings, case kept: 233 ms); the prefix in every
    spelling took 513 ms, spelled character by character 631 ms."""
    patterns = []
    for secret in secrets:
        if key_shaped(secret):
            forms = [*sorted(encoded_forms(secret)), secret[:PREFIX_CHARS]]
            patterns += [f"(?i:{re.escape(form)})" for form in forms]
        else:
            patterns += [re.escape(form) for form in sorted(encoded_forms(secret))]
    return patterns


def read_paths(run: Ripgrep) -> list[bytes]:
    """--files-with-matches with --null prints `path\\0` records, no newline between them."""
    assert run.process.stdout is not None
    data = run.process.stdout.read(64 << 20)  # 64 MiB of paths at most
    return [path.removeprefix(b"./") for path in data.split(b"\0") if path]


def find_holders(rg: str, root: Path, glob: str | None, deadline: float) -> set[bytes]:
    """The files (in the glob) that hold a known key in any of its spellings: one pass, cheap
    (rg's literal search), run only when some key is known."""
    patterns = key_patterns(known_secrets())
    found: set[bytes] = set()
    if not patterns:
        return found

    def read(run: Ripgrep) -> None:
        found.clear()
        found.update(read_paths(run))

    def command(rung: Rung) -> list[str]:
        return ripgrep_command(rg, patterns, glob, mode="holders", rung=rung)

    climb_down(command, root, deadline, read)
    return found


def names_a_key(name: str) -> bool:
    """Whether a path spells a known key: such a file is never searched, so that grep's `glob`,
    matched by rg against the raw name, cannot tell a key's characters one call at a time."""
    secrets = known_secrets()
    return bool(secrets) and redact(name, secrets) != name
