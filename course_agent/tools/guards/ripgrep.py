"""One ripgrep process for the grep tool: output streamed as records, a deadline, a memory cap.

The deadline is kept by a timer that kills rg even while its next line is awaited, and the
memory cap (Linux) makes rg abort instead of taking the machine's memory. Deliberately not
handled: what rg is asked (grep_files.py builds the command line).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from course_agent.protocol import ToolError
from course_agent.safety.redaction import redact_cut

__all__ = ["Ripgrep"]

_MAX_RECORD = 64 * 1024  # one output line: a path (4 KiB at most) and a 500-byte preview
_MAX_STDERR = 4096  # rg's complaints are kept up to about this many bytes


class Ripgrep:
    """One rg process: stdout streamed as `path\\0rest` records, stderr drained, a deadline kept.

    The deadline is enforced twice: a timer kills rg even while we wait for its next line, and
    `records` stops as soon as it has passed. Either way `stopped` is then True.
    """

    def __init__(self, command: list[str], cwd: Path, deadline: float, memory: int) -> None:
        self.deadline, self.stopped, self.code = deadline, False, 0
        self.abandoned = False  # set by abandon(): the caller read enough
        try:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except (OSError, ValueError) as exc:  # ValueError: text that cannot become an argument
            raise ToolError(f"grep could not start ripgrep: {exc}") from None
        _cap_memory(self.process.pid, memory)
        self._stderr: list[bytes] = []
        self._stderr_size = 0  # bytes rg wrote to stderr, kept or not
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.start()

    def _expire(self) -> None:
        self.stopped = True
        self.process.kill()

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

    def error(self, secrets: Sequence[str] = ()) -> str:
        """rg's complaint as it wrote it (a regex error points at the spot), at most 400 chars.
        It may quote the pattern: the keys in `secrets` are redacted before the cut."""
        kept = b"".join(self._stderr)
        text = kept.decode("utf-8", "replace")
        text = "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())
        return redact_cut(text, 400, secrets, was_cut=len(kept) < self._stderr_size)[0]

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
