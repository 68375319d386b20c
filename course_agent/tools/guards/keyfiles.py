"""The files that hold keys: read_file refuses them and grep skips them; glob may list their names.

A short list of names, matched case-insensitively (a `.ENV` on a case-insensitive disk is the same
file) on every component of a path: ripgrep's exclusion of `.env` also skips a folder `.env/`, so
everything below one is treated alike. Deliberately not handled: keys kept in files with other
names; the registry's redaction of the configured keys is the second line for those.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import PurePath

from course_agent.protocol import ToolError

__all__ = [
    "KEY_FILES",
    "REFUSED_FOLDERS",
    "is_key_file",
    "is_key_name",
    "key_part",
    "refusal",
    "refuse_key_file",
]

# fnmatch patterns for a file's name. .env.* covers .env.local and .env.production, and also
# .env.example: a template that may have been filled in is treated like the real thing. The keys
# and credentials a developer's home and repository commonly hold: SSH keys of every kind (and a
# folder .ssh/ whole), git's stored passwords, npm's and PostgreSQL's tokens, direnv's .envrc, and
# the folders of AWS's and Docker's credentials.
KEY_FILES = (
    ".env",
    ".env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".npmrc",
    ".pgpass",
    ".aws",
    ".docker",
)
# Folders read_file refuses though glob and grep need no rule for them (they skip them whole):
# .git/config can hold a token in a remote's URL (https://user:TOKEN@host/...).
REFUSED_FOLDERS = (".git",)
# One regex for the list: a walk asks about every folder's name.
_KEY_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in KEY_FILES))


def is_key_name(name: str) -> bool:
    """True when `name`, one file or folder name, is a key file's: `.env`, `ID_RSA`, `a.pem`.

    Also the names Windows opens as one of those: trailing dots and spaces dropped (`.env.`),
    an NTFS stream named after a colon (`.env::$DATA`).
    """
    name = name.casefold()
    if _KEY_NAME.match(name):
        return True
    windows = name.partition(":")[0].rstrip(". ")
    return windows != name and _KEY_NAME.match(windows) is not None


def key_part(path: str | os.PathLike[str]) -> str | None:
    """The first component of `path` (relative to the root) that is a key file's name, or None."""
    return next((part for part in PurePath(path).parts if is_key_name(part)), None)


def is_key_file(path: str | os.PathLike[str]) -> bool:
    """True when `path`, relative to the root, is a key file or lies in a folder named like one:
    `.env`, `deploy/id_rsa`, `.env/bin/activate`."""
    return key_part(path) is not None


def refusal(shown: str) -> str:
    """What read_file says instead of a key file's content: why, and what to do instead."""
    folder = None if is_key_name(PurePath(shown).name) else key_part(shown)
    what = (
        f"{shown} is a key file" if folder is None else f"{shown} is in {folder}/, named like one"
    )
    return (
        f"{what} ({', '.join(KEY_FILES)}): read_file never shows those, because "
        "their values would be sent to the model. Read the code that loads the setting instead, "
        "or ask the user whether it is set"
    )


def refuse_key_file(asked: PurePath, resolved: PurePath, shown: str) -> None:
    """Raise read_file's refusal when the name asked for, or where it leads (relative to the
    root), is a key file's: a symlink to .env is a key file too; or when it lies in .git/."""
    if is_key_name(asked.name) or is_key_file(resolved):
        raise ToolError(refusal(shown))
    for path in (asked, resolved):
        if folder := next((p for p in path.parts if p.casefold() in REFUSED_FOLDERS), None):
            raise ToolError(
                f"{shown} is in {folder}/, the repository's own records: read_file never shows "
                "them (its config can hold a token in a remote's URL), as glob and grep never "
                "search them. Read the project's files instead"
            )
