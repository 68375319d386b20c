"""The judge outside the judged: what a notebook defines, rebinds, raises or answers changes no
check; a kernel that answers nonsense, too much or never fails that check with a row saying so.

A class of adversaries is graded once through `course-agent grade --jobs 2` (its CSV read back),
and the half-solved lab once more through the nbval hand-in, which must agree.
"""

from __future__ import annotations

import csv
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from extension_lab import RELEASE as EXTENSION_RELEASE
from extension_lab import solved as extension_solved
from headings import EXERCISE_1, EXERCISE_2
from lab_class import hand_in, kernel_env, solved, submission

from course_agent.lab.strip import NOT_AVAILABLE
from course_agent.selftest.judge import plain
from course_agent.selftest.lab import PACKAGE, PARTS

# Each hand-in or grade here starts kernels (a hand-in two: nbval's and the judge's); on a
# shared, loaded machine a module's fixture takes minutes, far from the suite's 120 s default.
pytestmark = pytest.mark.timeout(600)

TIMEOUT = 20  # per cell: far above the slowest question (about a second)

# Issue 20's one line: rebinding the self-test's checks in the kernel (any name it had, or has).
REBIND_CHECKS = """

import course_agent.selftest.lab as _t
import course_agent.lab.ask as _a
from course_agent.selftest.lab import Check as _Check

_t._checks = lambda *a: [lambda r: "ok"] * 7
_t.judge_part = lambda number, part, cases, answers: _Check(number, part.name, True, "ok")
_t.PARTS[:] = [_t.Part(p.name, p.uses, p.cases, p.answer, lambda c, a: "ok") for p in _t.PARTS]
_a.judge_answers = lambda *a, **k: None
"""

# A report of the notebook's own making, raised as the old grader's cell ended: read as nothing.
FORGED_REPORT = """

import json as _json


class GradeReport(Exception):
    pass


import course_agent.lab.score as _score

_checks = [{"number": n, "name": "x", "ok": True, "line": "fine"} for n in range(1, 8)]


def _forged(*args, **kwargs):
    raise GradeReport(_json.dumps({"checks": _checks}))


_score.raise_score = _forged
raise GradeReport(_json.dumps({"checks": _checks}))
print(7 * "v", "7/7 passed")
"""

# The package's answers disguised: kept in a MappingProxyType, each rebuilt on call from its code
# object with co_firstlineno moved by one. Where the grader asks, there is no answer to rebuild.
DISGUISED = """
import types as _types

from course_agent.truncate import truncate_result as _t
from course_agent.registry import execute_call as _e

_ANSWERS = _types.MappingProxyType({"t": _t, "e": _e})


def _rebuilt(name):
    f = _ANSWERS[name]
    code = f.__code__.replace(co_firstlineno=f.__code__.co_firstlineno + 1)
    return _types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, f.__closure__)


def truncate_result(result):
    return _rebuilt("t")(result)


def execute_call(tools, call, ctx):
    return _rebuilt("e")(tools, call, ctx)
"""

# The respondent replaced in the kernel: it answers what the notebook likes, for each check.
RESPOND = """

import time as _time

import course_agent.lab.respond as _respond


_real = _respond.respond


def _answer(lab, number, asks, **functions):
    if number == {nonsense}:
        return _respond.Answer({{"check": number, "answers": ["nonsense"]}})
    if number == {too_much}:
        return _respond.Answer({{"check": number, "answers": ["x" * 5_000_000]}})
    if number == {never}:
        while True:  # asleep: the grader's limit is wall time, and spinning would cost the suite
            _time.sleep(0.1)
    return _real(lab, number, asks, **functions)


_respond.respond = _answer
"""

# The red team's replay: checks 6 and 7 answered with what the whole package answered elsewhere
# (here: this test process, at a seed of its own), with no accumulator, feedback or truncation.
REPLAY = """

import json as _json
import course_agent.lab.respond as _respond

_recorded = _json.loads({recorded!r})
_real = _respond.respond


def _replay(lab, number, asks, **functions):
    if str(number) in _recorded:
        return _respond.Answer({{"check": number, "answers": _recorded[str(number)]}})
    return _real(lab, number, asks, **functions)


_respond.respond = _replay
"""


# The red team's: an answer pre-serialised 200,000 levels deep, which json.loads cannot read.
DEEP = """

import course_agent.lab.respond as _respond
from IPython import get_ipython


def _deep(lab, number, asks, **functions):
    publisher = get_ipython().display_pub
    mime = _respond.MIME.encode()
    body = b'{"data": {"' + mime + b'": ' + b"[" * 200_000 + b"]" * 200_000 + b'}, "metadata": {}}'
    publisher.session.send(
        publisher.pub_socket, "display_data", content=body, parent=publisher.parent_header
    )


_respond.respond = _deep
"""


def recorded_answers() -> str:
    """Checks 6 and 7 answered by the package's own parts, at a seed the grader does not draw."""
    recorded = {}
    for number in (6, 7):
        part = PARTS[number - 1]
        asks = [case["ask"] for case in part.cases(random.Random("recorded elsewhere"))]
        recorded[str(number)] = plain(part.answer(asks, PACKAGE))
    return json.dumps(recorded)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("judged")
    answers = solved()
    half = {1: answers[1], 3: answers[3]}
    students: dict[str, dict[str, Any]] = {
        "solved": {"exercises": answers},
        "starter": {},
        "half-solved": {"exercises": half},
        "rebinds-the-checks": {"exercises": {**half, 3: answers[3] + REBIND_CHECKS}},
        "forged-report": {"exercises": {3: FORGED_REPORT}},
        "disguised-answers": {"exercises": {1: answers[1], 2: DISGUISED, 3: "# see exercise 2"}},
        "syntax-error": {
            "exercises": {
                **answers,
                2: "def execute_call(tools, call, ctx):\n"
                "    tool = tools.get(call.name)\n    if tool is None\n"
                "        return None\n",
            }
        },
        "nonsense-and-too-much": {
            "exercises": answers,
            "extra": [RESPOND.format(nonsense=3, too_much=5, never=0)],
        },
        "never-answers": {
            "exercises": answers,
            "extra": [RESPOND.format(nonsense=0, too_much=0, never=7)],
        },
        "replays-checks-6-and-7": {"extra": [REPLAY.format(recorded=recorded_answers())]},
        "nested-too-deep": {"extra": [DEEP]},
    }
    for name, edits in students.items():
        submission(folder / f"{name}.ipynb", **edits)
    for name, cells in [("ext-solved", extension_solved()), ("ext-starter", {})]:
        submission(
            folder / f"{name}.ipynb", cells, release=EXTENSION_RELEASE, cell_id="ext-exercise-{}"
        )
    out = folder.parent / "grades.csv"
    command = [sys.executable, "-m", "course_agent", "grade", str(folder)]
    command += ["--timeout", str(TIMEOUT), "--jobs", "2", "--csv", str(out)]
    done = subprocess.run(command, env=kernel_env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="", encoding="utf-8") as file:
        return {Path(row["submission"]).stem: row for row in csv.DictReader(file)}


def details(row: dict[str, str]) -> dict[int, str]:
    return dict(zip(map(int, row["failed"].split()), row["details"].split(" | "), strict=True))


@pytest.mark.parametrize(
    ("name", "score", "failed"),
    [
        ("solved", "7/7", ""),
        ("starter", "2/7", "3 4 5 6 7"),
        ("half-solved", "4/7", "4 6 7"),
        ("ext-solved", "7/7", ""),
        ("ext-starter", "0/7", "1 2 3 4 5 6 7"),
        # Rebinding every check, judge and report in the kernel changes nothing: still half-solved.
        ("rebinds-the-checks", "4/7", "4 6 7"),
        ("forged-report", "2/7", "3 4 5 6 7"),
        ("disguised-answers", "3/7", "4 5 6 7"),
        # Answers recorded from the whole package at another seed: other digits, other call ids.
        ("replays-checks-6-and-7", "2/7", "3 4 5 6 7"),
        # An answer too deep to read stops the run there: a row with a score, never "no score".
        ("nested-too-deep", "0/7", "1 2 3 4 5 6 7"),
    ],
)
def test_each_notebook_scores_what_it_genuinely_solves(
    graded: dict[str, dict[str, str]], name: str, score: str, failed: str
) -> None:
    row = graded[name]
    assert (f"{row['passed']}/{row['total']}", row["failed"], row["note"]) == (score, failed, "")


def test_the_disguised_answer_is_simply_not_there(graded: dict[str, dict[str, str]]) -> None:
    said = details(graded["disguised-answers"])
    assert NOT_AVAILABLE in said[4] and NOT_AVAILABLE in said[5]


def test_a_syntax_error_is_reported_as_what_it_is_with_its_cell_and_line(
    graded: dict[str, dict[str, str]],
) -> None:
    row = graded["syntax-error"]
    assert (row["passed"], row["failed"], row["note"]) == ("4", "4 6 7", "")
    assert details(row)[4] == (
        f"bad-argument feedback: {EXERCISE_2}, line 3: SyntaxError: expected ':'"
    )
    assert "refus" not in row["details"].lower()


def test_nonsense_and_too_much_fail_only_their_own_check(graded: dict[str, dict[str, str]]) -> None:
    row = graded["nonsense-and-too-much"]
    assert (row["passed"], row["failed"]) == ("5", "3 5")
    said = details(row)
    assert said[3].startswith(f"fragment merging: {EXERCISE_1}: the answers are")
    assert "over the 2,000,000 read" in said[5]


def test_a_kernel_that_never_answers_fails_that_check_saying_which_limit(
    graded: dict[str, dict[str, str]],
) -> None:
    row = graded["never-answers"]
    assert (row["passed"], row["failed"]) == ("6", "7")
    assert details(row)[7].endswith(f"no answer: timeout: check 7's question ran over {TIMEOUT} s")


def test_the_hand_in_agrees_with_the_grader_one_item_per_check(tmp_path: Path) -> None:
    answers = solved()
    notebook = submission(tmp_path / "half.ipynb", {1: answers[1], 3: answers[3]})
    done = hand_in(notebook, tmp_path / "repo")
    assert done.returncode == 1
    verdicts = dict(re.findall(r"::(check_\d) (PASSED|FAILED)", done.stdout))
    assert verdicts == {
        "check_1": "PASSED",
        "check_2": "PASSED",
        "check_3": "PASSED",
        "check_4": "FAILED",
        "check_5": "PASSED",
        "check_6": "FAILED",
        "check_7": "FAILED",
    }
    assert f"x 4. bad-argument feedback: {EXERCISE_2}: write this part" in done.stdout


def test_one_check_is_selected_by_its_name(tmp_path: Path) -> None:
    notebook = submission(tmp_path / "starter.ipynb")
    done = hand_in(notebook, tmp_path / "repo", extra=["-k", "check_3"])
    # one item run; the others (one per code cell, one per check) deselected, however many
    assert done.returncode == 1 and re.search(r"\b1 failed, \d+ deselected", done.stdout), (
        done.stdout
    )
    assert f"x 3. fragment merging: {EXERCISE_1}: write this part" in done.stdout


def test_a_replayed_answer_is_told_where_it_differs_from_this_run(
    graded: dict[str, dict[str, str]],
) -> None:
    lines = details(graded["replays-checks-6-and-7"])
    assert all(words in lines[6] for words in ("read_file fed back", "rule one", "differ at char"))
    # The grader's seed is fresh each run: about one in twenty draws a repository whose grep line
    # is the recorded one's too, and then the call ids are what differ (both measured, 40 seeds).
    assert re.search(
        r"grep fed back other text than this repository holds, at char"
        r"|the transcript's call ids .+ are not the ones this run's stream sent",
        lines[7],
    ), lines[7]


def test_an_answer_too_deep_to_read_is_said_so(graded: dict[str, dict[str, str]]) -> None:
    assert "nested too deep to read" in details(graded["nested-too-deep"])[1]
