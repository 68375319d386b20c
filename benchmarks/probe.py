"""Run one measured action in this fresh process and print its figures as one JSON line.

measure.probe starts it: `python probe.py read_file ROOT PATH OFFSET`, `grep ROOT PATTERN` or
`load_ext NAME`. Times are wall and CPU (user + sys, rg's included). Deliberately not handled:
anything but Linux's /proc for memory (elsewhere the peak comes from getrusage, which counts a
little more).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

__all__ = ["main", "peak_mb"]


def peak_mb() -> float:
    """This process's peak resident memory in MB: VmHWM on Linux.

    Not getrusage(RUSAGE_SELF).ru_maxrss: Linux carries that over from the parent across
    fork and exec, so a fresh Python started by a big one would report the big one's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # "VmHWM:   41236 kB"
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # macOS reports bytes, Linux KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale / 1024


def _children_peak_mb() -> float:
    """The largest peak of any finished child. On Linux at least this process's own peak when
    the child started: an upper bound for the child, not its exact figure."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _cpu_seconds() -> float:
    """As measure.cpu_seconds: this process's CPU and its waited-for children's."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _run_tool(name: str, root: str, arguments: dict[str, object]) -> dict[str, float]:
    from course_agent.protocol import ToolContext
    from course_agent.tools import GREP_TOOL, READ_FILE_TOOL

    tool = {"grep": GREP_TOOL, "read_file": READ_FILE_TOOL}[name]
    args, context = tool.args.model_validate(arguments), ToolContext(Path(root))
    before = peak_mb()
    start, cpu = time.perf_counter(), _cpu_seconds()
    result = tool.run(args, context)
    slowest = seconds = time.perf_counter() - start
    calls = 1
    # A page read_file did not reach within one call's time: the model calls again, and each
    # call starts where the last stopped. Measured as the calls it takes, and the slowest.
    while not result.meta.get("reached", True) and calls < 1000:
        begun = time.perf_counter()
        result = tool.run(args, context)
        slowest = max(slowest, time.perf_counter() - begun)
        calls += 1
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "slowest_seconds": slowest,
        "calls": calls,
        "cpu_seconds": _cpu_seconds() - cpu,
        "peak_mb": peak_mb(),
        "before_mb": before,
        "children_mb": _children_peak_mb(),
        "matches": result.meta.get("matches", 0),
        "big_files_left": float(result.meta.get("big_files_left", False)),
        "stopped": float(bool(result.meta.get("stopped", False))),  # at the time budget
    }


def _load_ext(name: str) -> dict[str, float]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()  # the kernel exists before anyone types %load_ext
    start, cpu = time.perf_counter(), _cpu_seconds()
    shell.run_line_magic("load_ext", name)
    figures = {"seconds": time.perf_counter() - start, "cpu_seconds": _cpu_seconds() - cpu}
    if name == "course_agent":  # what the first use of a magic then costs: the imports moved there
        start = time.perf_counter()
        shell.find_line_magic("agent_tools")
        figures["first_use_seconds"] = time.perf_counter() - start
    return {**figures, "peak_mb": peak_mb()}


def main(argv: list[str]) -> dict[str, float]:
    action, *rest = argv
    if action == "read_file":
        root, path, offset = rest
        return _run_tool("read_file", root, {"path": path, "offset": int(offset)})
    if action == "grep":
        root, pattern = rest
        return _run_tool("grep", root, {"pattern": pattern})
    if action == "load_ext":
        return _load_ext(rest[0])
    raise SystemExit(f"unknown action {action}: use read_file, grep or load_ext")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
