"""Where one graded notebook's time goes: kernel start, the lab's cells, the grader's score cell,
shutdown. Run by hand, never by pytest:

    .venv/bin/python benchmarks/grade_timing.py [NOTEBOOK] [--runs 5]

NOTEBOOK defaults to the lab's solution (with its markers), restored and scored as
`course-agent grade` does: the same kernel manager, environment and appended score cell, timed
through nbclient's hooks. Prints each phase's median over the runs, in seconds and as a share.
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


def one_run(path: Path) -> dict[str, float]:
    """The seconds each phase took for one notebook, graded once."""
    marks: dict[str, float] = {"start": time.perf_counter()}
    reference = nbformat.read(released_path(), as_version=4)
    nb = restore(nbformat.read(path, as_version=4), reference)
    nonce = secrets.token_hex(16)
    nb.cells.append(nbformat.v4.new_code_cell(SCORE_CELL.format(nonce=nonce), id="grader"))
    setup = next(i for i, cell in enumerate(nb.cells) if cell.get("id") == "setup")
    last = len(nb.cells) - 1
    marks["restored"] = time.perf_counter()
    ends: dict[int, float] = {}

    def cell_started(cell, cell_index) -> None:
        marks.setdefault("first cell", time.perf_counter())
        if cell_index == last:
            marks["score cell"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        client = NotebookClient(
            nb,
            kernel_manager_class=_current_env_kernels(),
            kernel_name="current-env",
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
            env=kernel_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
    runs = [one_run(args.notebook) for _ in range(args.runs)]
    medians = {phase: statistics.median(run[phase] for run in runs) for phase in PHASES}
    total = statistics.median(sum(run.values()) for run in runs)
    print(f"{args.notebook.name}: median of {args.runs} runs, one at a time")
    for phase in PHASES:
        print(f"  {phase:<16} {medians[phase]:6.2f} s  {medians[phase] / total:5.0%}")
    print(f"  {'whole notebook':<16} {total:6.2f} s")


if __name__ == "__main__":
    main()
