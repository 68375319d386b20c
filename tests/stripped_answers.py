"""A grading kernel without Jupyter: a process that imports the stripped package answers the
grader's questions about notebook sources, and this process judges them, as `grade` does.

`judged({"name": {"setup": src, "exercise-1": src, ...}}, lab)` gives each entry's report; one
subprocess answers them all (a kernel per entry would take seconds each).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping

from course_agent.lab.ask import answer_in, judge_answers, questions
from course_agent.lab.labs import find_lab
from course_agent.lab.respond import MIME
from course_agent.lab.strip import stripped_package
from course_agent.selftest.lab import SEED, SelftestReport

__all__ = ["judged"]

# Run in the stripped process: each entry's cells in order, then respond() to every question.
ANSWER = """
import contextlib, json, sys
from course_agent.lab.labs import find_lab
from course_agent.lab.respond import respond

data = json.load(sys.stdin)
lab = find_lab(data["lab"])
out = {}
answer = sys.stdout
sys.stdout = sys.stderr  # what the cells print is not the answer
for name, cells in data["entries"].items():
    namespace = {"__name__": "__main__"}
    for cell, source in cells.items():
        try:
            exec(compile(source, cell, "exec"), namespace)
        except Exception as exc:
            print(f"{name}: {cell}: {exc!r}", file=sys.stderr)
    given = {e.parameter: namespace[e.name] for e in lab.exercises if e.name in namespace}
    out[name] = {
        number: respond(lab.name, int(number), json.dumps(asks), **given).data
        for number, asks in data["asks"].items()
    }
print(json.dumps(out, default=repr), file=answer)
"""


def judged(
    entries: Mapping[str, Mapping[str, str]], lab: str = "day03-lab", seed: int = SEED
) -> dict[str, SelftestReport]:
    """Each entry's cells run in a stripped process, its answers judged here."""
    chosen = find_lab(lab)
    asked = questions(chosen, seed)
    payload = {
        "lab": chosen.name,
        "entries": entries,
        "asks": {q.number: [case["ask"] for case in q.cases] for q in asked},
    }
    env = {**os.environ, "PYTHONPATH": str(stripped_package(chosen))}
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: its course_agent/ is whole
        done = subprocess.run(
            [sys.executable, "-c", ANSWER],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=600,
            check=True,
        )
    answers = json.loads(done.stdout)
    reports = {}
    for name, by_check in answers.items():
        answered = {
            int(number): answer_in([{"data": {MIME: data}}], None)
            for number, data in by_check.items()
        }
        reports[name] = judge_answers(chosen, asked, answered, seed)
    return reports
