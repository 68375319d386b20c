"""Where one graded notebook's time goes: kernel start, the lab's cells, the grader's score cell,
shutdown. Run by hand, never by pytest:

    .venv/bin/python benchmarks/grade_timing.py [NOTEBOOK] [--runs 5]

NOTEBOOK defaults to the lab's solution (with its markers), restored and scored as
`course-agent grade` does: the same kernel managers (a plain kernel, and one in the grading
sandbox, runs alternating), environment and appended score cell, timed through nbclient's hooks.
Prints each phase's median over the runs, plain and sandboxed side by side, and their ratio.
Deliberately not handled: grading several at once (time `course-agent grade --jobs N` for that).
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course_agent.lab.grade import SCORE_CELL
from course_agent.lab.jail import Limits, kernel_manager
from course_agent.lab.kernel import _current_env_kernels, kernel_environment
from course_agent.lab.restore import released_path, restore

SOLVED = Path(__file__).resolve().parent.parent / "labs" / "source" / "day03-lab.ipynb"
PHASES = [
    "read + restore",
    "kernel start",
    "setup cell",
    "other lab cells",
    "score cell",
    "shutdown",
]


def one_run(path: Path, sandbox: bool) -> dict[str, float]:
    """The seconds each phase took for one notebook, graded once."""
    marks: dict[str, float] = {"start": time.perf_counter()}
    reference = nbformat.read(released_path(), as_version=4)
    nb = restore(nbformat.read(path, as_version=4), reference)
    score = SCORE_CELL.format(lab="day03-lab", seed=secrets.randbelow(2**31))
    nb.cells.append(nbformat.v4.new_code_cell(score, id="grader"))
    setup = next(i for i, cell in enumerate(nb.cells) if cell.get("id") == "setup")
    last = len(nb.cells) - 1
    marks["restored"] = time.perf_counter()
    ends: dict[int, float] = {}

    def cell_started(cell, cell_index) -> None:
        marks.setdefault("first cell", time.perf_counter())
        if cell_index == last:
            marks["score cell"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        if sandbox:
            km = kernel_manager(Path(tmp), limits=Limits())
        else:
            km = _current_env_kernels()(kernel_name="current-env")
        client = NotebookClient(
            nb,
            km=km,
            timeout=60,
            allow_errors=True,
            resources={"metadata": {"path": tmp}},
            on_notebook_start=lambda notebook: marks.setdefault("ready", time.perf_counter()),
            on_cell_start=cell_started,
            on_cell_executed=lambda cell, cell_index, execute_reply: ends.setdefault(
                cell_index, time.perf_counter()
            ),
        )
        client.execute(
            env=kernel_environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cleanup_kc=True,  # shut the kernel down, as run_notebook does
        )
    marks["end"] = time.perf_counter()
    return {
        "read + restore": marks["restored"] - marks["start"],
        "kernel start": marks["first cell"] - marks["restored"],
        "setup cell": ends[setup] - marks["first cell"],
        "other lab cells": marks["score cell"] - ends[setup],
        "score cell": ends[last] - marks["score cell"],
        "shutdown": marks["end"] - ends[last],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", nargs="?", type=Path, default=SOLVED)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.runs):  # alternating, so that a busy moment weighs on both
        for sandbox in (False, True):
            runs[sandbox].append(one_run(args.notebook, sandbox))
    print(f"{args.notebook.name}: median of {args.runs} runs each, one at a time")
    print(f"  {'phase':<16} {'plain':>8} {'sandboxed':>10}")
    for phase in [*PHASES, "whole notebook"]:
        plain, jailed = (
            statistics.median(
                sum(run.values()) if phase == "whole notebook" else run[phase] for run in runs[box]
            )
            for box in (False, True)
        )
        print(f"  {phase:<16} {plain:6.2f} s {jailed:8.2f} s")
    plain, jailed = (statistics.median(sum(run.values()) for run in runs[box]) for box in (0, 1))
    print(f"  sandboxed / plain: {jailed / plain:.2f}x")


if __name__ == "__main__":
    main()
