"""The files that hold keys: read_file refuses them and grep skips them; glob may list their names.

A short list of names, matched on the last path component and case-insensitively (a `.ENV` on a
case-insensitive disk is the same file). Deliberately not handled: keys kept in files with other
names; the registry's redaction of the configured keys is the second line for those.
"""

from __future__ import annotations

import fnmatch
import os

__all__ = ["KEY_FILES", "is_key_file", "refusal"]

# fnmatch patterns for a file's name. .env.* covers .env.local and .env.production, and also
# .env.example: a template that may have been filled in is treated like the real thing.
KEY_FILES = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", ".netrc", ".pypirc")


def is_key_file(path: str | os.PathLike[str]) -> bool:
    """True when the last component of `path` is a key file's name: `.env`, `deploy/id_rsa`."""
    name = os.path.basename(os.fspath(path)).lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in KEY_FILES)


def refusal(shown: str) -> str:
    """What read_file says instead of a key file's content: why, and what to do instead."""
    return (
        f"{shown} is a key file ({', '.join(KEY_FILES)}): read_file never shows those, because "
        "their values would be sent to the model. Read the code that loads the setting instead, "
        "or ask the user whether it is set"
    )
