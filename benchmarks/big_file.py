"""A 1 GB file: read_file's time and peak memory, and grep's peak memory over a tree holding it.

Each of our figures comes from a fresh Python (probe.py), since peak memory never goes down; each
peer's from GNU time. Deliberately not handled: files larger than the disk's free space, and cold
reads (the file was just written, so it sits in the page cache, as a file one just opened does).
"""

from __future__ import annotations

from corpus import BigFile
from measure import Timing, peak_of_command, probe_samples, time_command
from report import Row
from search import gnu_grep_command

from course_agent.tools import GREP_TOOL
from course_agent.tools.grep_files import RG_MEMORY, find_rg, ripgrep_command

__all__ = [
    "GREP_PATTERN",
    "MEMORY_TARGET_MB",
    "grep_memory_rows",
    "read_file_rows",
    "read_one_line_rows",
]

MEMORY_TARGET_MB = 100
GREP_PATTERN = "worker-3"  # on every line: 50 lines listed, then every match counted


def read_file_rows(big: BigFile, repeat: int, notes: list[str]) -> list[Row]:
    """First page and a page near the end: each against `wc -l`, which like us reads every byte
    once (the header says `of N lines`), in time and in memory."""
    folder, name = big.path.parent, big.path.name
    count_lines = ["wc", "-l", name]
    wc_time = time_command(count_lines, repeat, folder)
    wc_peak = peak_of_command(count_lines, repeat, folder)
    near_end = max(1, big.lines - 1000)
    rows = []
    for figure, offset in [("first 400 lines", 1), (f"400 lines at {near_end:,}", near_end)]:
        ours = probe_samples(repeat, "read_file", str(folder), name, str(offset))
        label = f"read_file 1 GB: {figure}"
        timing = Timing(ours["seconds"], ours["cpu_seconds"])
        rows += [
            Row.timed(label, timing, "`wc -l`, time", wc_time),
            Row(label, ours["peak_mb"], "`wc -l`, peak memory", wc_peak, under=MEMORY_TARGET_MB),
        ]
        notes.append(f"read_file {figure}: {ours['before_mb'].show()} already held after import")
    return rows


def read_one_line_rows(big: BigFile, repeat: int) -> list[Row]:
    """The worst text file: 1 GB in one line. read_file still holds one chunk at a time."""
    folder, name = big.path.parent, big.path.name
    ours = probe_samples(repeat, "read_file", str(folder), name, "1")
    wc_peak = peak_of_command(["wc", "-l", name], repeat, folder)
    label = "read_file 1 GB in one line: first page"
    return [Row(label, ours["peak_mb"], "`wc -l`, peak memory", wc_peak, under=MEMORY_TARGET_MB)]


def grep_memory_rows(big: BigFile, repeat: int, notes: list[str]) -> list[Row]:
    """Ours is this Python's peak plus rg's, for the rg passes the tool ran: the same command
    lines measured with GNU time, since Linux cannot tell what a vfork'd child alone used."""
    rg = find_rg()
    if rg is None:
        raise RuntimeError("ripgrep is not installed: pip install ripgrep")
    folder = big.path.parent
    args = GREP_TOOL.args.model_validate({"pattern": GREP_PATTERN})
    python = probe_samples(repeat, "grep", str(folder), GREP_PATTERN)
    left_out = python["big_files_left"].median > 0  # rg hit its memory cap and ran again
    passes = [ripgrep_command(rg, args)]
    if left_out:
        passes.append(ripgrep_command(rg, args, small_files=True))
    if python["matches"].median > args.limit:  # some file was capped: the tool counted too
        passes.append(ripgrep_command(rg, args, count=True, folders=["."], small_files=left_out))
    # rg as the tool runs it: with its heap capped at RG_MEMORY (util-linux's prlimit does what
    # the tool does with resource.prlimit).
    capped = [["prlimit", f"--data={RG_MEMORY}", *command] for command in passes]
    rg_peaks = [peak_of_command(command, repeat, folder) for command in capped]
    rg_peak = max(rg_peaks, key=lambda sample: sample.median)  # the passes run one at a time
    py_peak = python["peak_mb"]
    ours = py_peak + rg_peak  # medians added: the two processes' peaks are measured apart
    theirs = peak_of_command(gnu_grep_command({"pattern": GREP_PATTERN}), repeat, folder)
    kind = "in one line" if big.lines == 0 else "of 64-byte lines"
    notes.append(
        f"grep memory, 1 GB {kind}: Python {py_peak.show()} + rg {rg_peak.show()} "
        f"({len(passes)} rg pass(es)); the call took {python['seconds'].show()}; "
        f"getrusage says {python['children_mb'].show()} for rg, but on Linux that is never "
        "below the peak of the Python that started it"
    )
    label = f"grep peak memory, tree with 1 GB {kind}"
    stopped = python["stopped"]  # 1.0 for a run stopped at the time budget: it searched less
    invalid = f"a run (of {repeat}) stopped at the time budget" if stopped.high else ""
    peer = "`grep -rnI`, peak memory"
    return [Row(label, ours, peer, theirs, under=MEMORY_TARGET_MB, invalid=invalid)]
