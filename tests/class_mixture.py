"""A made-up class of any size, in known numbers of each kind of submission.

Kinds: "solved", "starter", "wrong: NAME" (one of tests/wrong_implementations.py pasted into a
solved lab), "imported: exercise N" (the package's answer imported), "endless loop",
"kernel killed",
"broken JSON". `build_class(folder, mixture)` writes the notebooks, shuffled with a fixed seed, and
returns {path: kind}; `score_without_kernel` scores one in this process, as the grader's kernel
would (for the kinds a kernel is not needed for). By hand: `python tests/class_mixture.py DIR`
writes the 120-submission class `MIXTURE_120`.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat
from lab_class import RELEASE, solved, submission
from stripped_answers import judged
from wrong_implementations import WRONG

from course_agent.lab.grade import GradeRow, row_from_report
from course_agent.lab.restore import restore
from course_agent.lab.score import score_namespace

__all__ = ["ENDLESS_DRAIN", "MIXTURE_120", "build_class", "expected_checks", "score_without_kernel"]

IMPORTS = {
    1: "from course_agent import ToolCallAccumulator",
    2: "from course_agent import execute_call",
    3: "from course_agent import truncate_result",
}
# A student's loop that never ends. It sleeps: the grader's limit is wall time, and a busy loop
# would only take its 10-15 s of CPU from the tests running beside it (the jail's tests burn CPU
# against the CPU limit).
ENDLESS_DRAIN = """

import time


def endless_drain(self):
    while True:
        time.sleep(0.1)


ToolCallAccumulator.drain = endless_drain"""

_OTHERS: dict[str, int] = {
    "starter": 12,
    **{f"wrong: {name}": 1 for name in WRONG},  # every wrong answer of the catalogue, once
    **{f"imported: exercise {number}": 2 for number in IMPORTS},
    "endless loop": 4,
    "kernel killed": 1,
    "broken JSON": 5,
}
# Solved labs fill the class to 120, however many wrong answers the catalogue holds.
MIXTURE_120: dict[str, int] = {"solved": 120 - sum(_OTHERS.values()), **_OTHERS}
assert MIXTURE_120["solved"] >= 10, "the catalogue outgrew a class of 120: make the class larger"
# What a kernel says of the two kinds this process cannot run: kernel.py's words.
KERNEL_NOTES = {
    "endless loop": "timeout: cell {check_1} ran over {timeout:g} s",
    "kernel killed": "kernel died in cell {exercise_2}",
}
SCORED_CELLS = ("setup", "registry", "exercise-1", "exercise-2", "exercise-3")
# Kinds whose code calls the package's own answer: only a process that imports the package
# without its answers, as a grading kernel does, scores them as the grader does.
USES_THE_PACKAGE = ("imported: ", "wrong: executor delegates to default_registry().execute")


def exercises(kind: str) -> dict[int, str]:
    """The exercise cells a kind of student writes (the others stay the starter's)."""
    answers = solved()
    if kind == "starter":
        return {}
    if kind.startswith("wrong: "):
        number, source = WRONG[kind.removeprefix("wrong: ")]
        return {**answers, number: source}
    if kind.startswith("imported: exercise "):
        number = int(kind.rsplit(" ", 1)[1])
        return {**answers, number: IMPORTS[number]}
    if kind == "endless loop":
        return {**answers, 1: answers[1] + ENDLESS_DRAIN}
    if kind == "kernel killed":
        return {**answers, 2: "import os\n\nos._exit(1)"}
    return answers  # solved


def build_class(folder: Path, mixture: Mapping[str, int], seed: int = 17) -> dict[Path, str]:
    """Write `mixture[kind]` notebooks of each kind into `folder`, in a seeded shuffle."""
    kinds = [kind for kind, count in mixture.items() for _ in range(count)]
    random.Random(seed).shuffle(kinds)
    release = RELEASE.read_text(encoding="utf-8")
    written: dict[Path, str] = {}
    for index, kind in enumerate(kinds, 1):
        slug = "".join(c if c.isalnum() else "-" for c in kind.lower()).strip("-")
        path = folder / f"{index:03}-{slug[:48]}.ipynb"
        if kind == "broken JSON":
            path.write_text(release[: len(release) // 3], encoding="utf-8")
        else:
            submission(path, exercises=exercises(kind))
        written[path] = kind
    return written


def _cell_numbers() -> dict[str, int]:
    ids = [cell.get("id") for cell in nbformat.read(RELEASE, as_version=4).cells]
    return {"check_1": ids.index("check-1") + 1, "exercise_2": ids.index("exercise-2") + 1}


_SCORES: dict[tuple[str, ...], dict[str, Any]] = {}  # the report of each set of cell sources


def score_without_kernel(path: Path, kind: str, reference: Any, timeout: float) -> GradeRow:
    """The row the grader makes for `path`, its cells run in this process instead of a kernel.

    The restored notebook's setup, registry and exercise cells run in one `__main__` namespace
    (as a kernel runs them), then the package scores it and the report goes through the JSON the
    grader's cell prints and `row_from_report`, as after a kernel. A notebook that is not JSON is
    refused before any kernel, here too. The two kinds that need a kernel to stop (an endless
    loop, a killed kernel) get the note a kernel run gives.
    """
    started = time.perf_counter()
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:
        cause = exc.__cause__ or exc
        note = f"not a notebook: {type(cause).__name__}: {str(cause).splitlines()[0][:100]}"
        return row_from_report(str(path), None, time.perf_counter() - started, note)
    if kind in KERNEL_NOTES:
        note = KERNEL_NOTES[kind].format(timeout=timeout, **_cell_numbers())
        return row_from_report(str(path), None, timeout, note)
    cells = {cell.get("id"): cell.source for cell in restore(nb, reference).cells}
    sources = tuple(cells[cell_id] for cell_id in SCORED_CELLS)
    if sources not in _SCORES and kind.startswith(USES_THE_PACKAGE):
        report = judged({kind: dict(zip(SCORED_CELLS, sources, strict=True))})[kind]
        _SCORES[sources] = {"checks": [dataclasses.asdict(check) for check in report.checks]}
    if sources not in _SCORES:
        namespace: dict[str, Any] = {"__name__": "__main__"}
        for source in sources:
            exec(compile(source, "<cell>", "exec"), namespace)
        _SCORES[sources] = json.loads(score_namespace(namespace).to_json())
    return row_from_report(str(path), _SCORES[sources], time.perf_counter() - started)


def expected_checks(fails: Mapping[str, set[int]], mixture: Mapping[str, int]) -> dict[int, int]:
    """How many submissions fail each check: the mixture's counts times what each kind fails."""
    counts: dict[int, int] = {}
    for kind, count in mixture.items():
        for number in fails.get(kind, set()):
            counts[number] = counts.get(number, 0) + count
    return counts


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    made = build_class(target, MIXTURE_120)
    print(f"{len(made)} submissions written to {target}")
