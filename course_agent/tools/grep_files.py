"""The grep tool: search file contents with ripgrep, returning sorted `path:line:content` lines.

ripgrep's regex engine runs in linear time, so no pattern can hang the kernel. Its output is
streamed and only the `limit` first matches by (path, line) are kept, so memory stays bounded
whatever the tree holds. Deliberately not handled: context lines, multiline patterns.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import shutil
import subprocess
import sysconfig
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..protocol import ToolContext, ToolDef, ToolError, ToolResult
from .keyfiles import KEY_FILES
from .walk import SKIP_DIRS, show_path
from .wildcard import MAX_PATTERN_CHARS

__all__ = ["GREP_TOOL", "GrepArgs", "find_rg", "ripgrep_command", "run_grep"]

MAX_LINE_CHARS = 120
TIME_BUDGET_S = 10.0  # after this rg is killed and the matches seen so far are reported
_MAX_RECORD = 64 * 1024  # one output line: a path (4 KiB at most) and a 500-byte preview
_RECOUNT_CHARS = 30_000  # folder names one recount may list: Windows allows 32,767 in all
# rg holds a whole line in memory: one 1 GB line would take 1.2 GB. Capped, rg aborts instead,
# and the search runs again without files over BIG_FILE, whose lines (40 MB at most) rg can
# hold in about 52 MB. Measured with rg 14.1: a 48 MB line already takes 146 MB.
RG_MEMORY = 64 * 2**20
BIG_FILE = "40M"

_FLAGS = [
    "--no-config",  # a user's ~/.ripgreprc must not change what the model sees
    "--no-ignore",  # .gitignore is not ours to apply; SKIP_DIRS are excluded explicitly
    "--hidden",  # dotfiles are searched, as glob lists them
    "--null",  # path\0...: a file name may contain ":" or even a newline
    "--with-filename",
    "--color=never",
]


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="regular expression (ripgrep syntax), e.g. divide\\( or class \\w+Error; "
        "case-sensitive, start with (?i) to ignore case",
        max_length=MAX_PATTERN_CHARS,
    )
    glob: str | None = Field(
        None,
        description="only search files matching this wildcard, e.g. *.js (any depth) or "
        "src/**/*.ts; default all files",
        max_length=MAX_PATTERN_CHARS,
    )
    limit: int = Field(50, ge=1, le=500, description="maximum matching lines returned; default 50")


def find_rg() -> str | None:
    """The rg shipped by the `ripgrep` wheel next to this Python, else one on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


class _Ripgrep:
    """One rg process: stdout streamed as `path\\0rest` records, stderr drained, a deadline kept.

    The deadline is enforced twice: a timer kills rg even while we wait for its next line, and
    `records` stops as soon as it has passed. Either way `stopped` is then True.
    """

    def __init__(self, command: list[str], cwd: Path, deadline: float) -> None:
        self.deadline, self.stopped, self.code = deadline, False, 0
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
        _cap_memory(self.process.pid)
        self._stderr: list[bytes] = []
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.start()

    def _expire(self) -> None:
        self.stopped = True
        self.process.kill()

    def _drain(self) -> None:
        """Read stderr to the end so rg never blocks on it, keeping only its first 4 KiB."""
        assert self.process.stderr is not None
        size = 0
        while chunk := self.process.stderr.read(4096):
            if size < 4096:
                self._stderr.append(chunk)
            size += len(chunk)

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
        """rg aborted on an allocation over RG_MEMORY: some file holds an enormous line."""
        return "memory allocation of" in self.error()

    def error(self) -> str:
        """rg's complaint as it wrote it (a regex error points at the spot), at most 400 chars."""
        text = b"".join(self._stderr).decode("utf-8", "replace")
        return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())[:400]

    def __enter__(self) -> _Ripgrep:
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        if self.stopped or exc[0] is not None:
            self.process.kill()  # stopped early, or leaving on an exception: leave no rg behind
        self.code = self.process.wait()  # rg exits right after its last line
        self._drainer.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _cap_memory(pid: int) -> None:
    """Cap rg's heap at RG_MEMORY (Linux; elsewhere rg runs uncapped). Set on the running process
    rather than in a preexec_fn, which is unsafe in a threaded kernel; rg has not read yet."""
    with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (RG_MEMORY, RG_MEMORY))


def _show_match(path: bytes, number: int, content: bytes) -> str:
    """One `path:line:content` line: path without "./", content cut at 120 characters."""
    name = show_path(os.fsdecode(path.removeprefix(b"./")))
    text = content[: MAX_LINE_CHARS * 4 + 4].decode("utf-8", "replace")
    text = text.removesuffix("\r")  # a CRLF file: the \r is part of the line break, not content
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + "…"
    return f"{name}:{number}:{text}"


def ripgrep_command(
    rg: str,
    args: GrepArgs,
    *,
    count: bool = False,
    folders: list[str] | None = None,
    small_files: bool = False,
) -> list[str]:
    """The rg command line: matching lines, at most `limit` per file (pass 1), or with `count`
    the matches per file (pass 2). It searches the whole root, or `folders` one level deep;
    `small_files` leaves out files over BIG_FILE."""
    if count:
        mode = ["--count"]
    else:
        # At most `limit` lines per file: the `limit` smallest (path, line) keys overall are
        # among them, and rg never has to buffer a file's million matches. A 50 MB line comes
        # back as a 500-byte preview.
        mode = ["--line-number", "--max-columns=500", "--max-columns-preview"]
        mode.append(f"--max-count={args.limit}")
    scope = [f"--max-filesize={BIG_FILE}"] if small_files else []
    scope += [f"--glob={args.glob}"] if args.glob else []
    # Later globs win in ripgrep: the skipped directories stay skipped whatever the model asks,
    # and so do key files (any case: .ENV is .env on some disks).
    scope += [f"--glob=!{name}" for name in sorted(SKIP_DIRS)]
    scope += [f"--iglob=!{name}" for name in KEY_FILES]
    # Searching "." (or folders found by searching it) never leaves the root.
    where = ["--max-depth=1", "--", *folders] if folders else ["--", "."]
    return [rg, *_FLAGS, *mode, *scope, "--regexp", args.pattern, *where]


def run_grep(args: GrepArgs, ctx: ToolContext) -> ToolResult:
    """`path:line:content` sorted by (path, line), then notes in parentheses: matches withheld,
    a search stopped by the time budget, files rg could not read. Or `no matches for PATTERN`."""
    pattern, glob, limit = args.pattern, args.glob, args.limit
    if not pattern:
        raise ToolError("pattern is empty: give a regular expression, e.g. divide\\(")
    if "\0" in pattern or "\0" in (glob or ""):
        raise ToolError("pattern or glob contains a NUL byte; remove it")
    rg = find_rg()
    if rg is None:
        raise ToolError("grep needs ripgrep, which is not installed: run `pip install ripgrep`")
    root, deadline = ctx.root.resolve(), time.monotonic() + TIME_BUDGET_S

    seen = 0
    seen_in: Counter[bytes] = Counter()  # folder -> matching lines listed from its files
    capped: set[bytes] = set()  # folders holding a file whose lines stopped at `limit`
    small_files = False  # True once rg ran out of memory: files over BIG_FILE are left out

    def matches(run: _Ripgrep) -> Iterator[tuple[bytes, int, bytes]]:
        nonlocal seen
        current, folder, in_file = b"", b"", 0
        for path, rest in run.records():
            number, _, content = rest.partition(b":")
            if not number.isdigit():
                continue  # not a match line; rg prints none with these flags, but be sure
            # rg prints each file's lines together: count them to spot a file cut at `limit`.
            if path != current:
                current, folder, in_file = path, os.path.dirname(path), 0
            in_file, seen = in_file + 1, seen + 1
            seen_in[folder] += 1
            if in_file >= limit:
                capped.add(folder)
            yield path, int(number), content

    # Pass 1: the lines.
    with _Ripgrep(ripgrep_command(rg, args), root, deadline) as run:
        # A bounded heap: sorted output without rg's --sort, which makes rg single-threaded.
        kept = heapq.nsmallest(limit, matches(run))
    if run.out_of_memory and not run.stopped:
        # Its matches are incomplete: start again without the files that can hold such a line.
        seen, small_files = 0, True
        seen_in.clear()
        capped.clear()
        with _Ripgrep(ripgrep_command(rg, args, small_files=True), root, deadline) as run:
            kept = heapq.nsmallest(limit, matches(run))
    error, stopped, total = run.error(), run.stopped, seen

    # Pass 2, only when some file had `limit` matches or more: count exactly. Every match in
    # other folders was listed, so recount just the capped folders, one level deep; or, when
    # their names would not fit on one command line, the whole root.
    if capped and not stopped:
        folders = sorted(os.fsdecode(folder) for folder in capped)
        if sum(map(len, folders)) <= _RECOUNT_CHARS:
            total = seen - sum(seen_in[folder] for folder in capped)
        else:
            folders, total = [], 0
        command = ripgrep_command(rg, args, count=True, folders=folders, small_files=small_files)
        with _Ripgrep(command, root, deadline) as count:
            total += sum(int(rest) for _, rest in count.records() if rest.isdigit())
        stopped = count.stopped
        total = max(total, seen)

    lines = [_show_match(*record) for record in kept]
    meta = {
        "matches": total,
        "shown": len(lines),
        "stopped": stopped,
        "big_files_left": small_files,
    }
    # Exit code 2 with nothing found and no "(os error N)" is rg refusing the pattern or glob.
    if run.code == 2 and not lines and not stopped and "(os error" not in error:
        raise ToolError(f"grep failed: {error or 'ripgrep exited with code 2'}")
    notes = []
    if stopped:
        notes.append(
            f"(search stopped after {TIME_BUDGET_S:g} s with {total} matches seen so far; "
            "narrow with glob or a stricter pattern)"
        )
    elif total > len(lines):
        more = total - len(lines)
        notes.append(f"({more} more matches withheld; narrow with glob or a stricter pattern)")
    if small_files:
        notes.append(
            f"(files over {BIG_FILE}B were not searched: one of them holds a line too long to "
            f"search within {RG_MEMORY >> 20} MB of memory)"
        )
    if run.code == 2 and error:
        # The first complaint is enough: "rg: ./secret.txt: Permission denied (os error 13)".
        notes.append(f"(some files could not be read: {error.splitlines()[0]})")
    if not lines:
        lines = [f"no matches for {pattern}" + (f" in files matching {glob}" if glob else "")]
    return ToolResult("\n".join(lines + notes), meta=meta)


GREP_TOOL = ToolDef(
    name="grep",
    description=(
        "Search the contents of files in the working directory with a regular expression "
        "(ripgrep syntax), returning matching lines as path:line:content sorted by path and "
        'line. Examples: pattern "divide\\(" (escape ( . [ for literal text), "TODO|FIXME", '
        '"(?i)error"; glob "*.js" or "src/**/*.ts" narrows the files searched. At most 50 '
        "lines by default, each cut at 120 characters; binary files and node_modules, .git and "
        "dist are skipped."
    ),
    args=GrepArgs,
    run=run_grep,
    read_only=True,
)
