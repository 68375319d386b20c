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

from course_agent.tools.grep_files import find_rg
from course_agent.tools.guards.ripgrep import LADDER, RG_MEMORY, ripgrep_command

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
    """First page and a page near the end, each in a fresh Python (no index remembered yet)
    against `sed` printing the same lines and stopping there, and `wc -l`, which reads every
    byte once (what counting the file before answering cost). A page the first call does not
    reach within its time budget is called for again, as the model would: the row gives the
    calls it took in all, and the slowest call against the 200 ms target."""
    folder, name = big.path.parent, big.path.name
    count_lines = ["wc", "-l", name]
    wc_time = time_command(count_lines, repeat, folder)
    wc_peak = peak_of_command(count_lines, repeat, folder)
    near_end = max(1, big.lines - 1000)
    rows = []
    for figure, offset in [("first 400 lines", 1), (f"400 lines at {near_end:,}", near_end)]:
        last = offset + 399
        sed_time = time_command(["sed", "-n", f"{offset},{last}p;{last}q", name], repeat, folder)
        ours = probe_samples(repeat, "read_file", str(folder), name, str(offset))
        label = f"read_file 1 GB: {figure}"
        timing = Timing(ours["seconds"], ours["cpu_seconds"])
        calls = ours["calls"]
        if calls.high > 1:
            label += f", {calls.median:.0f} calls"
        sed = f"`sed -n '{offset},{last}p;{last}q'`"
        rows += [
            Row.timed(label, timing, sed, sed_time, at_most=20.0 if offset == 1 else None),
            Row.timed(label, timing, "`wc -l`, time", wc_time),
            Row(
                label + ", slowest call", ours["slowest_seconds"], "`sed`", sed_time.wall, under=0.2
            ),
            Row(label, ours["peak_mb"], "`wc -l`, peak memory", wc_peak, under=MEMORY_TARGET_MB),
        ]
        notes.append(
            f"read_file {figure}: {ours['before_mb'].show()} already held after import; "
            f"{calls.median:.0f} call(s) to reach it (each stops at its 150 ms budget and the "
            "next starts where it stopped)"
        )
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
    python = probe_samples(repeat, "grep", str(folder), GREP_PATTERN)
    left_out = python["big_files_left"].median > 0  # rg hit its memory cap and ran again
    # The counting pass over the tree, again on the last rung if it hit the cap; the page pass
    # reads one file (the match is on every line), measured here by its path.
    passes = [ripgrep_command(rg, GREP_PATTERN, mode="count")]
    if left_out:
        passes.append(ripgrep_command(rg, GREP_PATTERN, mode="count", rung=LADDER[-1]))
    # On the last rung the page pass leaves big files out too, as the counting pass did.
    page_rung = LADDER[-1] if left_out else LADDER[0]
    passes.append(ripgrep_command(rg, GREP_PATTERN, rung=page_rung, paths=[big.path.name]))
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
