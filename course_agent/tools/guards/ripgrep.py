"""One ripgrep process for the grep tool: its command line, output streamed as records, a deadline,
a memory cap, and the ladder of smaller footprints it climbs down when the cap is hit.

The deadline is kept by a timer that kills rg even while its next line is awaited, and the
memory cap (Linux) makes rg abort instead of taking the machine's memory. rg reads no ignore file
itself (a FIFO or /dev/zero named .gitignore would hang or blind it): the caller applies the
rules to what it finds. Deliberately not handled: which files a search needs (search.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from course_agent.protocol import ToolError
from course_agent.safety.redaction import known_secrets, redact_cut
from course_agent.tools.guards.keyfiles import KEY_FILES
from course_agent.tools.guards.walk import SKIP_DIRS

__all__ = [
    "BIG_FILE",
    "COUNT_BUDGET",
    "LADDER",
    "RG_MEMORY",
    "Ripgrep",
    "Rung",
    "climb_down",
    "find_rg",
    "matched_text",
    "ripgrep_command",
]

# rg holds a whole line in memory: one 1 GB line would take 1.2 GB. Capped, rg aborts instead.
# Its two threads may each hold a long line, so the search runs again on one thread; if that
# aborts too, some line is too long for the cap, and it runs a third time without files over
# BIG_FILE, whose lines (40 MB at most) one thread holds in about 52 MB. Measured with rg 14.1:
# a 48 MB line already takes 146 MB.
RG_MEMORY = 64 * 2**20
BIG_FILE = "40M"
COUNT_BUDGET = 1_000_000  # matching lines counted per file: past it, its count is a bound


class Rung(NamedTuple):
    """One step of the memory ladder: how small a footprint rg is asked for."""

    one_thread: bool = False  # one file held at a time
    small_files: bool = False  # files over BIG_FILE left out


LADDER = (Rung(), Rung(one_thread=True), Rung(one_thread=True, small_files=True))

# How ripgrep ends the preview of a line over --max-columns bytes.
_PREVIEW = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more match(?:es)?)\]\Z")


def find_rg() -> str | None:
    """The rg shipped by the `ripgrep` wheel next to this Python, else one on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def matched_text(content: bytes) -> tuple[str, bool]:
    """(the text of a matching line rg printed, whether rg cut it): a line over 500 bytes
    arrives as rg's preview, its first 500 bytes and a marker; a CRLF line's "\r" is part of
    the line break, not content."""
    preview = _PREVIEW.search(content)
    text = content[: preview.start() if preview else None].decode("utf-8", "replace")
    return text.removesuffix("\r"), preview is not None


_FLAGS = [
    "--no-config",  # a user's ~/.ripgreprc must not change what the model sees
    "--no-ignore",  # ignore files are read by the caller, bounded (tools/guards/ignore.py)
    "--hidden",  # dotfiles are searched, as glob lists them
    "--null",  # path\0...: a file name may contain ":" or even a newline
    "--with-filename",
    "--color=never",
    # Named files are read, not memory-mapped: a mapped 1 GB file counts in rg's resident
    # memory, and RLIMIT_DATA (the cap) does not bound a mapping.
    "--no-mmap",
]


def ripgrep_command(
    rg: str,
    pattern: str | Sequence[str],
    glob: str | None = None,
    limit: int = 50,
    *,
    mode: str = "lines",
    rung: Rung = LADDER[0],
    paths: Sequence[str] = (),
) -> list[str]:
    """The rg command line. `mode` "lines": matching lines, at most `limit` per file, each
    cut to a 500-byte preview; "count": matching lines per file, to one past COUNT_BUDGET;
    "holders": the files matching any of the regexes `pattern` (holders.py). It searches `paths`
    (files, or "-" for stdin) when given, else the working directory with the skips, narrowed
    by `glob`."""
    if mode == "count":
        flags = ["--count", f"--max-count={COUNT_BUDGET + 1}"]  # one past: passed, not met
    elif mode == "holders":
        flags = ["--files-with-matches"]
    else:  # a 50 MB line comes back as a 500-byte preview
        flags = ["--line-number", "--max-columns=500", "--max-columns-preview"]
        flags.append(f"--max-count={limit}")
    flags += ["--threads=1"] if rung.one_thread else []
    flags += [f"--max-filesize={BIG_FILE}"] if rung.small_files else []
    if not paths:
        flags += [f"--glob={glob}"] if glob else []
        # Later globs win in ripgrep: the skipped directories stay skipped whatever the model
        # asks, and so do key files (ASCII case folded: .ENV is .env on some disks).
        flags += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
        flags += [f"--iglob=!{name}" for name in KEY_FILES]
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    expressions = [part for text in patterns for part in ("--regexp", text)]
    # Searching "." never leaves the root; named paths were opened and checked by the caller.
    return [rg, *_FLAGS, *flags, *expressions, "--", *(paths or ["."])]


def climb_down(
    command: Callable[[Rung], list[str]],
    cwd: Path,
    deadline: float,
    read: Callable[[Ripgrep], object],
    *,
    rung: int = 0,
    stdin: bytes | None = None,
    pass_fds: Sequence[int] = (),
) -> tuple[Ripgrep, int]:
    """Run rg, and again one rung down LADDER each time it runs out of memory; `read` takes
    each run's records (and starts its tally afresh). Returns the last run and its rung."""
    while True:
        with Ripgrep(command(LADDER[rung]), cwd, deadline, RG_MEMORY, stdin, pass_fds) as run:
            read(run)
        if not run.out_of_memory or run.stopped or rung == len(LADDER) - 1:
            return run, rung
        rung += 1


_MAX_RECORD = 64 * 1024  # one output line: a path (4 KiB at most) and a 500-byte preview
_MAX_STDERR = 4096  # rg's complaints are kept up to about this many bytes


class Ripgrep:
    """One rg process: stdout streamed as `path\\0rest` records, stderr drained, a deadline kept.

    The deadline is enforced twice: a timer kills rg even while we wait for its next line, and
    `records` stops as soon as it has passed. Either way `stopped` is then True.
    """

    def __init__(
        self,
        command: list[str],
        cwd: Path,
        deadline: float,
        memory: int,
        stdin: bytes | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        """`stdin`: bytes rg reads as "-" (written by a thread, so neither side blocks);
        `pass_fds`: descriptors rg inherits, to search as /dev/fd/N."""
        self.deadline, self.stopped, self.code = deadline, False, 0
        self.abandoned = False  # set by abandon(): the caller read enough
        try:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(pass_fds),
            )
        except (OSError, ValueError) as exc:  # ValueError: text that cannot become an argument
            raise ToolError(f"grep could not start ripgrep: {exc}") from None
        _cap_memory(self.process.pid, memory)
        if stdin is not None:
            threading.Thread(target=self._feed, args=(stdin,), daemon=True).start()
        self._stderr: list[bytes] = []
        self._stderr_size = 0  # bytes rg wrote to stderr, kept or not
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.start()

    def _expire(self) -> None:
        self.stopped = True
        self.process.kill()

    def _feed(self, data: bytes) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):  # rg may exit (or be killed) before reading it all
            self.process.stdin.write(data)
        with contextlib.suppress(OSError):
            self.process.stdin.close()

    def _drain(self) -> None:
        """Read stderr to the end so rg never blocks on it, keeping about its first 4 KiB."""
        assert self.process.stderr is not None
        while chunk := self.process.stderr.read(_MAX_STDERR):
            if self._stderr_size < _MAX_STDERR:
                self._stderr.append(chunk)
            self._stderr_size += len(chunk)

    def records(self) -> Iterator[tuple[bytes, bytes]]:
        """(path, rest) per output line; `rest` is `12:content` or, with --count, `12`."""
        assert self.process.stdout is not None
        pending = b""  # a file name with "\n" in it: its record began on an earlier line
        while line := self.process.stdout.readline(_MAX_RECORD):
            if not line.endswith(b"\n") and len(line) == _MAX_RECORD:  # overlong: drop the rest
                while (more := self.process.stdout.readline(_MAX_RECORD)) and more[-1:] != b"\n":
                    pass
            if b"\0" not in line:
                pending = (pending + line)[-_MAX_RECORD:]
                continue
            path, _, rest = (pending + line).partition(b"\0")
            pending = b""
            yield path, rest.rstrip(b"\n")
            if time.monotonic() >= self.deadline:
                self.stopped = True
                return

    @property
    def out_of_memory(self) -> bool:
        """rg aborted on an allocation over its memory cap: some line was too long to hold."""
        return "memory allocation of" in self.error()

    def error(self) -> str:
        """rg's complaint as it wrote it (a regex error points at the spot), at most 400 chars.
        It may quote the pattern: known keys are redacted before the cut."""
        kept = b"".join(self._stderr)
        text = kept.decode("utf-8", "replace")
        text = "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())
        return redact_cut(text, 400, known_secrets(), was_cut=len(kept) < self._stderr_size)[0]

    def abandon(self) -> None:
        """Stop reading: rg is killed on leaving the `with` block instead of awaited."""
        self.abandoned = True

    def __enter__(self) -> Ripgrep:
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        if self.stopped or self.abandoned or exc[0] is not None:
            self.process.kill()  # stopped early, or leaving on an exception: leave no rg behind
        self.code = self.process.wait()  # rg exits right after its last line
        self._drainer.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _cap_memory(pid: int, memory: int) -> None:
    """Cap rg's heap at `memory` bytes (Linux; elsewhere rg runs uncapped). Set on the running
    process rather than in a preexec_fn, which is unsafe in a threaded kernel; rg has not read
    yet."""
    with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (memory, memory))
