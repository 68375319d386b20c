"""The shell's variables over one `.env` file, each value remembering where it came from.

Only the working folder's `.env` is read, as written (no `${VAR}` expansion), and the shell wins.
Deliberately not handled: a `.env` in a parent folder (on purpose), and changing os.environ.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from dotenv import dotenv_values

__all__ = ["DOTENV_MAX_BYTES", "IN_SHELL", "Environment", "read_environment"]

IN_SHELL = "in the environment"
# A .env holds a few settings, a few hundred bytes. python-dotenv parses about 200 KB a second on a
# busy machine, so a cloned repository's 20 MB .env would freeze the kernel for minutes.
DOTENV_MAX_BYTES = 64 * 1024


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
        text = _read_small_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}; fix it or move it away") from None
    values = dotenv_values(stream=io.StringIO(text), interpolate=False) if text else {}
    from_file = {name: value for name, value in values.items() if value is not None}
    return Environment(os.environ, from_file, path)


def _read_small_file(path: Path) -> str:
    """The text of `path` if it is a regular file; "" if there is none (or a FIFO, a folder).

    Opened before it is looked at, so nothing can swap a FIFO in between: opening one to read
    would wait for a writer forever, unless non-blocking. ValueError over DOTENV_MAX_BYTES.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):  # or a dangling link
        return ""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return ""
    with os.fdopen(fd, "rb") as file:
        data = file.read(DOTENV_MAX_BYTES + 1)
    if len(data) > DOTENV_MAX_BYTES:
        raise ValueError(
            f"{path} is over {DOTENV_MAX_BYTES // 1024} KB, too big for a file of settings: "
            "move it away, or keep only the variables you need in it"
        )
    return data.decode("utf-8")
