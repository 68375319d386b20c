"""How every figure is taken: a median of repeated runs, and a process's peak resident memory.

A timing is one warm-up run, then `repeat` timed runs, kept as median and spread (min-max), in wall
time and in CPU time (user + sys of this process and of the children it waited for: rg's threads
count in full). A command's output is drained through a pipe, as a tool's output is. Deliberately
not handled: CPU pinning, outlier rejection, statistics beyond min/median/max.
"""

from __future__ import annotations

import functools
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PROBE",
    "Sample",
    "Timing",
    "command_peak_mb",
    "cpu_seconds",
    "gnu_time",
    "peak_of_command",
    "probe",
    "probe_samples",
    "run_command",
    "time_calls",
    "time_command",
    "time_together",
]

PROBE = Path(__file__).with_name("probe.py")


@dataclass(frozen=True)
class Sample:
    """One figure: the median of several runs and their spread, in `unit` ("s", "ms", "MB")."""

    median: float
    low: float
    high: float
    unit: str

    @classmethod
    def of(cls, values: Sequence[float], unit: str) -> Sample:
        return cls(statistics.median(values), min(values), max(values), unit)

    def __add__(self, other: Sample) -> Sample:
        """Figures of two processes running together, e.g. Python's memory and its rg's."""
        return Sample(
            self.median + other.median, self.low + other.low, self.high + other.high, self.unit
        )

    def show(self) -> str:
        """`0.71 s (0.69-0.75)`: the median, then the spread; times under a second in ms."""
        if self.unit == "s" and self.high < 1:
            return Sample(self.median * 1000, self.low * 1000, self.high * 1000, "ms").show()
        digits = 0 if self.unit in ("ms", "MB") and self.high >= 10 else 2
        median, low, high = (f"{value:.{digits}f}" for value in (self.median, self.low, self.high))
        return f"{median} {self.unit}" + ("" if low == high else f" ({low}-{high})")


@dataclass(frozen=True)
class Timing:
    """Wall time and CPU time of the same runs. CPU above wall means threads (rg runs two)."""

    wall: Sample
    cpu: Sample


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of every child it has waited for.

    getrusage, not os.times: os.times counts in clock ticks (10 ms), coarser than many calls."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(call: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    call()
    return time.perf_counter() - wall, cpu_seconds() - cpu


def _timing(runs: Sequence[tuple[float, float]]) -> Timing:
    return Timing(Sample.of([w for w, _ in runs], "s"), Sample.of([c for _, c in runs], "s"))


def time_calls(call: Callable[[], object], repeat: int, warmup: int = 1) -> Timing:
    """Seconds per call of `call`, run in this process: `warmup` untimed runs first."""
    for _ in range(warmup):
        call()
    return _timing([_timed(call) for _ in range(repeat)])


def time_together(calls: Sequence[Callable[[], object]], repeat: int) -> list[Timing]:
    """Seconds per call of each of `calls`, taken in turns (a b c a b c ...), so a burst of
    load from elsewhere on the machine falls on all of them alike. One warm-up round first."""
    for call in calls:
        call()
    runs: list[list[tuple[float, float]]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, taken in zip(calls, runs, strict=True):
            taken.append(_timed(call))
    return [_timing(taken) for taken in runs]


def run_command(command: Sequence[str], cwd: Path | None = None, *, check: bool = True) -> bytes:
    """Run `command`, drained through a pipe; exit codes 0 and 1 (grep: no match) are fine,
    and with `check=False` any (rg aborting at its memory cap is one of the runs measured).

    A pipe, never /dev/null: GNU grep notices /dev/null and stops at the first match.
    """
    done = subprocess.run(command, cwd=cwd, capture_output=True)
    if check and done.returncode not in (0, 1):
        error = done.stderr.decode(errors="replace").strip()[:300]
        raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}: {error}")
    return done.stdout


def time_command(command: Sequence[str], repeat: int, cwd: Path | None = None) -> Timing:
    """Wall and CPU seconds of a fresh `command` process, its output drained."""
    return time_calls(lambda: run_command(command, cwd), repeat)


@functools.cache
def gnu_time() -> str | None:
    """GNU time, which reports a child's peak memory (%M) without the parent's counted in."""
    path = shutil.which("time")  # the program, not the shell keyword
    if path is None:
        return None
    done = subprocess.run([path, "--version"], capture_output=True, text=True)
    return path if "GNU" in done.stdout + done.stderr else None


def command_peak_mb(command: Sequence[str], cwd: Path | None = None) -> float | None:
    """Peak resident memory of `command` in MB, via GNU time; None if GNU time is missing.

    Linux keeps the larger of a process's own peak and that of the process it exec'd from, so
    the figure is never below GNU time's own (about 2 MB): fine at the scale of the targets.
    """
    timer = gnu_time()
    if timer is None:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        run_command([timer, "--format=%M", f"--output={report.name}", *command], cwd, check=False)
        return int(report.read().split()[-1]) / 1024


def peak_of_command(command: Sequence[str], repeat: int, cwd: Path | None = None) -> Sample:
    """Peak memory of `command` in MB over `repeat` runs, via GNU time. No warm-up run: the
    page cache is not counted in a process's resident memory, so a cold run peaks the same."""
    peaks = [command_peak_mb(command, cwd) for _ in range(repeat)]
    if None in peaks:
        raise RuntimeError("peak memory of a command needs GNU time: apt-get install time")
    return Sample.of([peak for peak in peaks if peak is not None], "MB")


def probe_samples(repeat: int, *args: str) -> dict[str, Sample]:
    """probe.py's figures over `repeat` fresh processes, after one warm-up, by name."""
    runs = [probe(*args) for _ in range(repeat + 1)][1:]

    def unit(key: str) -> str:
        return "s" if key.endswith("seconds") else "MB" if key.endswith("_mb") else ""

    return {key: Sample.of([run[key] for run in runs], unit(key)) for key in runs[0]}


def probe(*args: str) -> dict[str, float]:
    """Run probe.py in a fresh Python and return the figures it prints as JSON.

    A fresh process, because peak memory (VmHWM) only ever grows: in this one it would hold
    every earlier benchmark's peak.
    """
    done = subprocess.run([sys.executable, str(PROBE), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"probe {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
