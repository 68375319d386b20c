"""The grep tool: search file contents with ripgrep, returning sorted `path:line:content` lines.

ripgrep's regex engine runs in linear time, so no pattern can hang the kernel. Its output is
streamed and only the `limit` first matches by (path, line) are kept, so memory stays bounded
whatever the tree holds. Deliberately not handled: context lines, multiline patterns.
"""

from __future__ import annotations

import heapq
import os
import re
import shutil
import sysconfig
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from course_agent.protocol import ToolContext, ToolDef, ToolError, ToolResult
from course_agent.safety.redaction import redact_cut
from course_agent.tools.guards.keyfiles import KEY_FILES, is_key_file
from course_agent.tools.guards.ripgrep import Ripgrep
from course_agent.tools.guards.walk import SKIP_DIRS, WALK_BUDGET, Visibility, Walk, show_path
from course_agent.tools.guards.wildcard import MAX_PATTERN_CHARS

__all__ = ["GREP_TOOL", "GrepArgs", "find_rg", "ripgrep_command", "run_grep"]

MAX_LINE_CHARS = 120
# How ripgrep ends the preview of a line over --max-columns bytes.
_PREVIEW = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more match(?:es)?)\]\Z")
TIME_BUDGET_S = 10.0  # after this rg is killed and the matches seen so far are reported
# The exact count of what is withheld is cheap until a file holds a million matches or a sparse
# match sits deep in a huge file; past either budget the count is given as a lower bound.
COUNT_BUDGET = 1_000_000  # matches
COUNT_TIME_S = 2.0  # seconds the counting pass may take
_RECOUNT_CHARS = 30_000  # folder names one recount may list: Windows allows 32,767 in all
# rg holds a whole line in memory: one 1 GB line would take 1.2 GB. Capped, rg aborts instead.
# Its two threads may each hold a long line, so the search runs again on one thread; if that
# aborts too, some line is too long for the cap, and it runs a third time without files over
# BIG_FILE, whose lines (40 MB at most) one thread holds in about 52 MB. Measured with rg 14.1:
# a 48 MB line already takes 146 MB.
RG_MEMORY = 64 * 2**20
BIG_FILE = "40M"
_LADDER = [(False, False), (True, False), (True, True)]  # (one thread, small files only)

_FLAGS = [
    "--no-config",  # a user's ~/.ripgreprc must not change what the model sees
    # The ignore rules glob applies (tools/ignore.py): the working directory's own ignore files,
    # .gitignore with or without a .git, nothing from above the root or from the user's config.
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
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


def _show_match(path: bytes, number: int, content: bytes, secrets: Sequence[str] = ()) -> str:
    """One `path:line:content` line: path without "./", content cut at 120 characters after
    the keys in `secrets` were redacted, so no cut keeps the start of one."""
    name = show_path(os.fsdecode(path.removeprefix(b"./")))
    # A line over 500 bytes arrives as ripgrep's preview: its first 500 bytes and a marker.
    preview = _PREVIEW.search(content)
    was_cut = preview is not None
    text = content[: preview.start() if preview else None].decode("utf-8", "replace")
    text = text.removesuffix("\r")  # a CRLF file: the \r is part of the line break, not content
    shown, cut = redact_cut(text, MAX_LINE_CHARS, secrets, was_cut=was_cut)
    return f"{name}:{number}:{shown}{'…' if cut else ''}"


def ripgrep_command(
    rg: str,
    args: GrepArgs,
    *,
    count: bool = False,
    folders: list[str] | None = None,
    small_files: bool = False,
    one_thread: bool = False,
) -> list[str]:
    """The rg command line: matching lines, at most `limit` per file (pass 1), or with `count`
    the matches per file (pass 2). It searches the whole root, or `folders` one level deep;
    `small_files` leaves out files over BIG_FILE, `one_thread` holds one file at a time."""
    if count:
        # A file's count stops one past the budget: enough to know the budget was passed.
        mode = ["--count", f"--max-count={COUNT_BUDGET + 1}"]
    else:
        # At most `limit` lines per file: the `limit` smallest (path, line) keys overall are
        # among them, and rg never has to buffer a file's million matches. A 50 MB line comes
        # back as a 500-byte preview.
        mode = ["--line-number", "--max-columns=500", "--max-columns-preview"]
        mode.append(f"--max-count={args.limit}")
    mode += ["--threads=1"] if one_thread else []
    scope = [f"--max-filesize={BIG_FILE}"] if small_files else []
    scope += [f"--glob={args.glob}"] if args.glob else []
    # Later globs win in ripgrep: the skipped directories stay skipped whatever the model asks,
    # and so do key files (any case: .ENV is .env on some disks).
    scope += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
    scope += [f"--iglob=!{name}" for name in KEY_FILES]
    # Searching "." (or folders found by searching it) never leaves the root.
    where = ["--max-depth=1", "--", *folders] if folders else ["--", "."]
    return [rg, *_FLAGS, *mode, *scope, "--regexp", args.pattern, *where]


def _search(
    command: Callable[[bool, bool], list[str]],
    root: Path,
    deadline: float,
    read: Callable[[Ripgrep], object],
    rung: int = 0,
) -> tuple[Ripgrep, int]:
    """Run rg, and again one rung down _LADDER each time it runs out of memory; `read` takes
    each run's records (and starts its tally afresh). Returns the last run and its rung."""
    while True:
        with Ripgrep(command(*_LADDER[rung]), root, deadline, RG_MEMORY) as run:
            read(run)
        if not run.out_of_memory or run.stopped or rung == len(_LADDER) - 1:
            return run, rung
        rung += 1


class _Lines:
    """Pass 1: the `limit` first matching lines, and what the counting pass needs to know."""

    def __init__(self, limit: int, visible: Callable[[str], bool] | None) -> None:
        self.limit, self.visible = limit, visible
        self.kept: list[tuple[bytes, int, bytes]] = []

    def __call__(self, run: Ripgrep) -> None:
        self.seen = 0
        self.seen_in: Counter[bytes] = Counter()  # folder -> matching lines listed from its files
        self.capped: set[bytes] = set()  # folders holding a file whose lines stopped at `limit`
        # A bounded heap: sorted output without rg's --sort, which makes rg single-threaded.
        self.kept = heapq.nsmallest(self.limit, self._matches(run))

    def _matches(self, run: Ripgrep) -> Iterator[tuple[bytes, int, bytes]]:
        current, folder, in_file, shown = b"", b"", 0, True
        for path, rest in run.records():
            number, _, content = rest.partition(b":")
            if not number.isdigit():
                continue  # not a match line; rg prints none with these flags, but be sure
            # rg prints each file's lines together: count them to spot a file cut at `limit`.
            if path != current:
                current, folder, in_file = path, os.path.dirname(path), 0
                try:
                    shown = _searchable(_relative(path), self.visible)
                except TimeoutError:  # its ignore files took the time left
                    run.stopped = True
                    return
            if not shown:
                continue
            in_file, self.seen = in_file + 1, self.seen + 1
            self.seen_in[folder] += 1
            if in_file >= self.limit:
                self.capped.add(folder)
            yield path, int(number), content


class _Count:
    """Pass 2: matches per file added up, until COUNT_BUDGET is passed."""

    def __init__(self, visible: Callable[[str], bool] | None) -> None:
        self.visible = visible

    def __call__(self, run: Ripgrep) -> None:
        self.total, self.complete = 0, True
        for path, rest in run.records():
            try:
                counted = rest.isdigit() and _searchable(_relative(path), self.visible)
            except TimeoutError:  # its ignore files took the time left
                run.stopped = True
                return
            if counted:
                self.total += int(rest)
                if self.total > COUNT_BUDGET:
                    self.complete = False
                    run.abandon()
                    return


def _relative(path: bytes) -> str:
    return os.fsdecode(path.removeprefix(b"./"))


def _searchable(relative: str, visible: Callable[[str], bool] | None) -> bool:
    """Whether a file rg searched may be shown: not a key file (rg's --iglob folds ASCII case
    only; read_file's test folds all of Unicode), and visible to the walk if that is asked."""
    return not is_key_file(relative) and (visible is None or visible(relative))


def _recount(
    rg: str,
    args: GrepArgs,
    root: Path,
    deadline: float,
    lines_pass: _Lines,
    visible: Visibility | None,
    rung: int,
) -> tuple[int, str]:
    """Pass 2: the exact number of matches, or a lower bound and why it is one. Every match in
    folders without a capped file was listed, so only the capped folders are recounted, one level
    deep; or, when their names would not fit on one command line, the whole root."""
    folders = sorted(os.fsdecode(folder) for folder in lines_pass.capped)
    total = lines_pass.seen - sum(lines_pass.seen_in[folder] for folder in lines_pass.capped)
    if sum(map(len, folders)) > _RECOUNT_CHARS:
        folders, total = [], 0

    def command(one_thread: bool, small_files: bool) -> list[str]:
        return ripgrep_command(
            rg, args, count=True, folders=folders, one_thread=one_thread, small_files=small_files
        )

    # Folders named on the command line escape the ignore files above them (rg reads none above
    # where it starts), so their counts are checked against the rules too.
    count_deadline = min(deadline, time.monotonic() + COUNT_TIME_S)
    count = _Count(visible or (Visibility(root, count_deadline) if folders else None))
    run, count_rung = _search(command, root, count_deadline, count, rung)
    total = max(total + count.total, lines_pass.seen)
    if not count.complete:
        return total, f"counting stopped past {COUNT_BUDGET} matches"
    if run.stopped:
        return total, "counting ran out of time"
    if run.out_of_memory:
        return total, "ripgrep ran out of memory while counting"
    if _LADDER[count_rung][1] and not _LADDER[rung][1]:
        return total, f"files over {BIG_FILE}B were left out of the count"
    return total, ""


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
    # The model's glob is a whitelist to rg, and a whitelist beats .gitignore there: "*.py" would
    # search an ignored version.py. What rg finds is then checked against the ignore rules.
    visible = Visibility(root, deadline) if glob else None

    # Pass 1: the lines.
    lines_pass = _Lines(limit, visible)

    def lines_command(one_thread: bool, small_files: bool) -> list[str]:
        return ripgrep_command(rg, args, one_thread=one_thread, small_files=small_files)

    run, rung = _search(lines_command, root, deadline, lines_pass)
    secrets = getattr(ctx, "secrets", ())  # a context a lab built may lack them
    error, stopped, total = run.error(secrets), run.stopped, lines_pass.seen
    out_of_memory = run.out_of_memory and not stopped

    # Pass 2, only when some file had `limit` matches or more: count.
    counted = ""  # why the count is a lower bound, if it is one
    if lines_pass.capped and not stopped:
        total, counted = _recount(rg, args, root, deadline, lines_pass, visible, rung)
    exact = not counted

    lines = [_show_match(*record, secrets) for record in lines_pass.kept]
    meta = {
        "matches": total,
        "shown": len(lines),
        "stopped": stopped,
        "exact": exact and not stopped,
        "big_files_left": rung == len(_LADDER) - 1,
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
    elif counted:
        more = total - len(lines)
        withheld = f"at least {more} more matches" if more else "more matches may be"
        notes.append(f"({withheld} withheld: {counted}; narrow with glob or a stricter pattern)")
    elif total > len(lines):
        more = total - len(lines)
        notes.append(f"({more} more matches withheld; narrow with glob or a stricter pattern)")
    if out_of_memory:
        notes.append(
            f"(ripgrep ran out of its {RG_MEMORY >> 20} MB of memory even with files over "
            f"{BIG_FILE}B left out: the matches above may be incomplete)"
        )
    elif meta["big_files_left"]:
        notes.append(
            f"(files over {BIG_FILE}B were not searched: one of them holds a line too long to "
            f"search within {RG_MEMORY >> 20} MB of memory)"
        )
    if run.code == 2 and error:
        # The first complaint is enough: "rg: ./secret.txt: Permission denied (os error 13)".
        notes.append(f"(some files could not be read: {error.splitlines()[0]})")
    if not lines:
        lines = [f"no matches for {pattern}" + (f" in files matching {glob}" if glob else "")]
        walk = Walk(root, deadline=deadline)
        walk.budget = WALK_BUDGET
        for _ in walk:
            pass  # only what the ignore files hid is wanted
        if walk.hidden:
            notes.append(f"(not searched: {walk.hidden_note()})")
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
