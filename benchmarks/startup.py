"""What a notebook pays before the first question: `import course_agent` and `%load_ext`.

Every run is a fresh process, since a second import costs nothing. `%load_ext` is timed inside a
fresh IPython InteractiveShell, which exists before it starts, as in a kernel. Deliberately not
handled: a kernel's own start-up, and Jupyter's front end.
"""

from __future__ import annotations

import sys

from measure import Sample, probe, run_command, time_together
from report import Row

__all__ = ["startup_rows"]


def _load_ext_together(repeat: int, names: list[str]) -> list[Sample]:
    """probe.py's `load_ext NAME` for each name in turns, after a warm-up round."""
    seconds: list[list[float]] = [[] for _ in names]
    for round_number in range(repeat + 1):
        for name, times in zip(names, seconds, strict=True):
            figure = probe("load_ext", name)["seconds"]
            if round_number:  # round 0 warms the disk cache
                times.append(figure)
    return [Sample.of(times, "s") for times in seconds]


def startup_rows(repeat: int, notes: list[str]) -> list[Row]:
    python = sys.executable
    ours, bare = time_together(
        [
            lambda: run_command([python, "-c", "import course_agent"]),
            lambda: run_command([python, "-c", "pass"]),
        ],
        repeat,
    )
    notes.append(f"import course_agent costs about {(ours.median - bare.median) * 1000:.0f} ms")
    load_ours, load_peer = _load_ext_together(repeat, ["course_agent", "autoreload"])
    load_ext = "start-up: `%load_ext course_agent`"
    return [
        Row("start-up: `import course_agent`, fresh process", ours, "`python -c pass`", bare),
        Row(load_ext, load_ours, "`%load_ext autoreload`", load_peer, under=0.3),
    ]
