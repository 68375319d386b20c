"""What a tool shows of a line or a name: known keys cut first, so no later cut keeps part of one.

The tools' one seam to the keys this process has read: `shown_line` cuts a line to a tool's
width after the keys are redacted, `shown_name` prints a path, `keep_for` says how much of a long
line to read so a key that starts before the cut is seen whole. Deliberately not handled: which
files hold a key (holders.py), and keys in other channels (the gateway's, the model's).
"""

from __future__ import annotations

from collections.abc import Callable

from course_agent.safety.redaction import encoded_forms, known_secrets, redact, redact_cut
from course_agent.tools.guards.walk import show_path

__all__ = ["keep_for", "name_test", "shown_line", "shown_name"]


def shown_line(text: str, limit: int, *, was_cut: bool = False) -> tuple[str, bool]:
    """(`text` cut to `limit` characters, whether it ends cut), keys redacted before the cut."""
    return redact_cut(text, limit, known_secrets(), was_cut=was_cut)


def shown_name(relative: str) -> str:
    """`relative` as one printable line with known keys cut (a file name can hold one)."""
    secrets = known_secrets()
    shown = show_path(relative)
    return redact(shown, secrets) if secrets else shown


def keep_for(limit: int) -> int:
    """Characters of a line to keep to show `limit` of it: enough that a key starting before
    the cut is read whole, and so cut whole."""
    forms = (form for key in known_secrets() for form in encoded_forms(key))
    return limit + max(map(len, forms), default=0) + 1


def name_test(
    names_in: Callable[[str], Callable[[str], bool]],
) -> Callable[[str], Callable[[str], bool]]:
    """`names_in(folder)(name)` asked of names as they would be shown, keys cut: otherwise
    `**/sk-test-a*` would tell whether a name holds a key starting "a" though the listing cuts
    it."""
    forms = [form for key in known_secrets() for form in encoded_forms(key)]
    if not forms:
        return names_in

    def names(folder: str) -> Callable[[str], bool]:
        test = names_in(_cut(folder))
        return lambda name: test(_cut(name) if any(form in name for form in forms) else name)

    return names


def _cut(text: str) -> str:
    secrets = known_secrets()
    return redact(text, secrets) if secrets else text
