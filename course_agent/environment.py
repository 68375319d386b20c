"""The shell's variables over one `.env` file, each value remembering where it came from.

Only the working folder's `.env` is read, as written (no `${VAR}` expansion), and the shell wins.
Deliberately not handled: a `.env` in a parent folder (on purpose), and changing os.environ.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from dotenv import dotenv_values

__all__ = ["IN_SHELL", "Environment", "read_environment"]

IN_SHELL = "in the environment"


class Environment(Mapping[str, str]):
    """The shell's variables over those of one .env file, remembering which came from where.

    Its repr names the file, never a value. A plain mapping handed to `choose` counts as the shell.
    """

    def __init__(
        self,
        shell: Mapping[str, str],
        dotenv: Mapping[str, str] | None = None,
        path: Path | None = None,
    ) -> None:
        self.shell = dict(shell)
        self.dotenv = dict(dotenv or {})
        self.path = path  # the .env file read, or where it would have been

    def __getitem__(self, name: str) -> str:
        return self.shell[name] if name in self.shell else self.dotenv[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.dotenv, **self.shell})

    def __len__(self) -> int:
        return len({**self.dotenv, **self.shell})

    def __repr__(self) -> str:
        return f"Environment(dotenv={str(self.path)!r})"

    def origin(self, name: str) -> str:
        """Where `name` came from: "in the environment", or "in /folder/.env"."""
        return IN_SHELL if name in self.shell else f"in {self.path}"


def read_environment(folder: Path | None = None) -> Environment:
    """os.environ over the .env file in `folder` (default: the current folder): the shell wins.

    Only that folder: a .env in a parent (a repository you cloned, say) could point
    OPENAI_BASE_URL elsewhere and receive the key exported in your shell. No ${VAR} expansion
    either, or a .env could copy a shell key into a variable it then sends elsewhere. Returns a
    copy; os.environ is left alone, so calling this changes nothing.
    """
    path = (folder or Path.cwd()).resolve() / ".env"
    try:
        values = dotenv_values(path, interpolate=False) if path.is_file() else {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}; fix it or move it away") from None
    from_file = {name: value for name, value in values.items() if value is not None}
    return Environment(os.environ, from_file, path)
