"""What the grading sandbox costs: one notebook graded plain and sandboxed, side by side, and a
class graded both ways. Run by hand, never by pytest:

    .venv/bin/python benchmarks/grade_timing.py [NOTEBOOK] [--runs 5] [--class 20] [--jobs 2]

NOTEBOOK defaults to the lab's solution. Each run is `grade.grade_one` (restore, run the notebook,
ask the grader's questions, judge), exactly as `course-agent grade` does, with a plain kernel
(`--no-sandbox`) and with the grading sandbox, alternating so that a busy moment weighs on both;
the medians and their ratio are printed. `--class N` then grades N copies `--jobs` at a time each
way (`grade.grade`) and prints the seconds per notebook. Deliberately not handled: phases inside
one grade (kernel start, cells, questions): time those with `--durations` on the tests.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from course_agent.lab.iri_grammar import skip_iri_grammar

# `course-agent grade` does this before nbformat loads (cli.py): the same start for both modes.
skip_iri_grammar()

from course_agent.lab.grade import grade, grade_one  # noqa: E402
from course_agent.lab.jail import sandbox_problem  # noqa: E402

SOLVED = Path(__file__).resolve().parent.parent / "labs" / "source" / "day03-lab.ipynb"
TIMEOUT = 60  # seconds per cell, as `course-agent grade`


def one_grade(path: Path, sandbox: bool) -> float:
    started = time.perf_counter()
    row = grade_one(path, TIMEOUT, sandbox=sandbox)
    if row.passed is None:
        raise SystemExit(f"{path} could not be graded: {row.note}")
    return time.perf_counter() - started


def class_grade(path: Path, count: int, jobs: int, sandbox: bool) -> float:
    """Seconds per notebook, grading `count` copies of `path`, `jobs` at a time."""
    with tempfile.TemporaryDirectory(prefix="course-agent-bench-") as tmp:
        paths = [Path(tmp) / f"student-{n:03d}.ipynb" for n in range(count)]
        for copy in paths:
            shutil.copy(path, copy)
        started = time.perf_counter()
        rows = grade(paths, TIMEOUT, jobs, sandbox=sandbox)
        seconds = time.perf_counter() - started
    if any(row.passed is None for row in rows):
        raise SystemExit("a copy could not be graded: " + next(r.note for r in rows if r.note))
    return seconds / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", nargs="?", type=Path, default=SOLVED)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--class", dest="count", type=int, default=0, metavar="N")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if problem := sandbox_problem():
        raise SystemExit(f"no sandbox here: {problem}")
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.runs):  # alternating, so that a busy moment weighs on both
        for sandbox in (False, True):
            times[sandbox].append(one_grade(args.notebook, sandbox))
    plain, jailed = (statistics.median(times[box]) for box in (False, True))
    print(f"{args.notebook.name}: one notebook, median of {args.runs} grades each way")
    print(f"  plain {plain:.2f} s, sandboxed {jailed:.2f} s: {jailed / plain:.2f}x")
    if args.count:
        plain, jailed = (
            class_grade(args.notebook, args.count, args.jobs, box) for box in (False, True)
        )
        print(f"a class of {args.count}, {args.jobs} at a time: seconds per notebook")
        print(f"  plain {plain:.2f} s, sandboxed {jailed:.2f} s: {jailed / plain:.2f}x")


if __name__ == "__main__":
    main()
