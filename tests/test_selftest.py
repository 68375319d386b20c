"""The self-test: the package and the lab's solution score 7/7, the starter 2/7, and every wrong
answer in tests/wrong_implementations.py fails its own check with a line that names the case."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from starters import starter as starter_path
from stripped_answers import judged
from wrong_implementations import ALTERNATIVES, BEYOND_THE_LAB, CHEATS, RIGHT, WRONG

from course_agent import ToolCallAccumulator, ToolCallDelta, ToolResult
from course_agent.providers.call_slots import CallSlots
from course_agent.selftest.judge import plain
from course_agent.selftest.lab import (
    PACKAGE,
    PARTS,
    SEED,
    Check,
    SelftestReport,
    judge_part,
    run_selftest,
)

LABS = Path(__file__).resolve().parent.parent / "labs"
EXERCISES = {1: "ToolCallAccumulator", 2: "execute_call", 3: "truncate_result"}
CHECK_OF_EXERCISE = {1: 3, 2: 4, 3: 5}

# What the failed check's line must say for each wrong answer: the case, and what to do about it.
MESSAGES: dict[str, list[str]] = {
    "accumulator appends a repeated id": ["in every fragment", "repeated id", "don't append it"],
    "accumulator appends a repeated name": ["in every fragment", "repeated name", "don't append"],
    "accumulator stores calls in a list by index": ["indexes 1, 2", "IndexError", "not a position"],
    "accumulator drains in arrival order": ["heads out of order", "expected index order"],
    "accumulator assumes the index starts at 0": ["indexes 1, 2", "KeyError", "not a position"],
    "accumulator assumes the index starts at 1": ["indexes 0,", "not a position"],
    "accumulator overwrites the arguments": ["arguments", "append args_delta"],
    "accumulator lets an empty id or name wipe the head's": ["empty id", "wiped", "non-empty"],
    "accumulator sorts the indexes as text": ["indexes 7, 9, 12", "expected index order"],
    "accumulator shares one dict between all its instances": ["earlier stream", "__init__"],
    "accumulator drops the arguments that come with the head": [
        "lost the arguments sent with the head",
        "append",
    ],
    "accumulator names a call without id after its position": [
        "indexes 1, 3, 4",
        "never got an id: expected 'call_3'",
        "not its position",
    ],
    "accumulator leaves a call without a name as None": ["never got a name", "got None"],
    "accumulator skips fragments of only spaces": ["spaces were lost", "even one of only spaces"],
    "accumulator strips every fragment": ["spaces were lost", "append every args_delta"],
    "accumulator drops calls that have no arguments": ["without arguments", "a call all the same"],
    "accumulator shares one dict and empties it in drain": ["earlier stream", "__init__"],
    "accumulator drains a generator": ["drain returned a generator", "return a list"],
    "accumulator parses every fragment as JSON": ["JSONDecodeError", "parse nothing"],
    "executor skips schema validation": ["not its validated arguments", "model_validate"],
    "executor validates, then runs the tool on the raw dict": ["handed a dict", "model_validate"],
    "executor lets a ToolError out": ["ToolError", "came out of execute_call"],
    "executor lets any other exception out": [
        "a tool that raises",
        "execute_call raised",
        "instead of raising",
    ],
    "executor catches only JSON errors": ["missing phrase", "raised ValidationError", "instead"],
    "executor builds the arguments without validating them": ["echo ran although", "validate"],
    "executor runs the tool twice": ["a valid call echo", "echo ran 2 times", "once"],
    "executor returns a ToolError as a good result": ["raises ToolError", "ok=True", "ok=False"],
    "executor says only 'Operation failed'": ["unknown tool", "'Operation failed'", "name"],
    "executor's unknown-tool text names no tools": ["unknown tool", "echo, guard"],
    "executor names the day's three tools, not the ones it was given": ["echo, guard", "tools"],
    "executor treats empty arguments as invalid JSON": ["empty arguments", "{}"],
    "executor's JSON error does not say where it broke": ["cut short", "where it broke"],
    "executor unpacks the arguments with **": ["not an object", "TypeError"],
    "executor looks tools up in default_registry(), not in its tools": ["call echo", "must run"],
    "executor delegates to default_registry().execute": ["unknown tool", "echo, guard"],
    "truncation hard-codes '12000 of 20000'": ["8001-char", "rule two", "how many were cut (1)"],
    "truncation flags results that fit with truncated=False": ["fits", "unchanged", "truncated"],
    "truncation cuts a result of exactly 8000 chars": ["8000-char", "fits", "unchanged"],
    "truncation keeps only the head": ["20000-char", "rule one", "never keep only the head"],
    "truncation drops the meta already there": ["rule three", "meta", "keep the meta"],
    "truncation keeps one char too many of the head": ["20000-char", "head runs past its 4800"],
    "truncation keeps one char too few of the tail": ["20000-char", "tail"],
    "truncation keeps 8000 chars including the note": ["20000-char", "head"],
    "truncation swaps the head and tail shares": ["20000-char", "head"],
    "truncation turns a failed result into a good one": ["ok=False", "replace"],
    "truncation writes into the meta of the result it was given": [
        "20000-char",
        "the result you were given changed",
        "build a new one",
    ],
    "truncation measures the text without its trailing newline": ["8001-char", "came back uncut"],
    "truncation leaves failed results uncut": ["char failed result", "cut like any other"],
    "truncation rounds the number of chars cut": ["the note", "how many were cut (1)"],
}


def cell_sources(path: Path) -> dict[str, str]:
    return {cell.id: cell.source for cell in nbformat.read(path, as_version=4).cells}


def lab_namespace(**exercises: str) -> dict[str, Any]:
    """The lab's setup cell, then one source per exercise: the lab's solution unless given."""
    source = cell_sources(LABS / "source" / "day03-lab.ipynb")
    namespace: dict[str, Any] = {}
    exec(compile(source["setup"], "day03-lab:setup", "exec"), namespace)
    for number in (1, 2, 3):
        code = exercises.get(f"exercise_{number}", source[f"exercise-{number}"])
        exec(compile(code, f"day03-lab:exercise-{number}", "exec"), namespace)
    return namespace


def grade(namespace: dict[str, Any], **options: Any) -> SelftestReport:
    return run_selftest(
        accumulator=namespace["ToolCallAccumulator"],
        run_call=namespace["execute_call"],
        truncate=namespace["truncate_result"],
        **options,
    )


def test_the_catalogue_has_a_message_for_every_wrong_answer() -> None:
    assert set(MESSAGES) == set(WRONG)


@pytest.mark.parametrize("name", list(WRONG))
def test_each_wrong_answer_fails_its_check_naming_the_case(name: str) -> None:
    exercise, source = WRONG[name]
    report = grade(lab_namespace(**{f"exercise_{exercise}": source}))
    check = report.checks[CHECK_OF_EXERCISE[exercise] - 1]
    assert not check.ok, f"{name} passed: {check.line}"
    missing = [part for part in MESSAGES[name] if part not in check.line]
    assert not missing, f"{name}: {check.line!r} does not say {missing}"
    assert "\n" not in check.line and len(check.line) <= 320, check.line


# What the failed check's line must say for each cheat, answered by a process that imports the
# package without its answers, as a grading kernel does: the package's answer is not there.
GONE = "not available while grading"
CHEAT_MESSAGES: dict[str, list[str]] = {
    "executor delegates to the package's execute_call": [GONE],
    "accumulator turns the profiler off, then runs the package's": [GONE],
    "executor turns the profiler off, then runs the package's": [GONE],
    "truncation turns the profiler off around the package's, and back on": [GONE],
    "truncation installs a profiler of its own, then runs the package's": [GONE],
    "truncation starts cProfile, then runs the package's": [GONE],
    "accumulator yields the package's calls from a generator": ["drain returned a generator"],
    "executor runs a copy of the package's module": [GONE],
    "executor answers with a str that contains every word": ["'Operation failed' does not say"],
    "truncation answers with a result equal to anything": ["meta {} should be", "rule three"],
    "accumulator drains ids equal to anything": ["repeated id", "don't append it"],
}


def lab_cells(**exercises: str) -> dict[str, str]:
    """The lab's setup cell and its three exercises (the solution's unless given), by cell id."""
    source = cell_sources(LABS / "source" / "day03-lab.ipynb")
    cells = {"setup": source["setup"]}
    for number in (1, 2, 3):
        cells[f"exercise-{number}"] = exercises.get(
            f"exercise_{number}", source[f"exercise-{number}"]
        )
    return cells


@pytest.fixture(scope="module")
def cheats_judged() -> dict[str, SelftestReport]:
    """Every cheat answered in one stripped process, judged here."""
    entries = {
        name: lab_cells(**{f"exercise_{exercise}": source})
        for name, (exercise, source) in CHEATS.items()
    }
    return judged(entries)


def test_the_catalogue_has_a_message_for_every_cheat() -> None:
    assert set(CHEAT_MESSAGES) == set(CHEATS)


@pytest.mark.parametrize("name", list(CHEATS))
def test_each_cheat_fails_its_check_where_the_grader_asks(
    name: str, cheats_judged: dict[str, SelftestReport]
) -> None:
    exercise, _ = CHEATS[name]
    report = cheats_judged[name]
    check = report.checks[CHECK_OF_EXERCISE[exercise] - 1]
    assert not check.ok, f"{name} passed: {check.line}"
    missing = [part for part in CHEAT_MESSAGES[name] if part not in check.line]
    assert not missing, f"{name}: {check.line!r} does not say {missing}"


def test_the_solution_answered_in_a_stripped_process_scores_seven() -> None:
    reports = judged({"solved": lab_cells()}, seed=SEED + 3)
    assert reports["solved"].summary() == "7/7 passed", str(reports["solved"])


@pytest.mark.parametrize("name", list(ALTERNATIVES))
def test_right_answers_written_other_ways_pass_all_seven(name: str) -> None:
    exercise, source = ALTERNATIVES[name]
    for seed in (SEED, 7):
        report = grade(lab_namespace(**{f"exercise_{exercise}": source}), seed=seed)
        assert report.summary() == "7/7 passed", f"{name}, seed {seed}:\n{report}"


@pytest.mark.parametrize("name", list(WRONG))
def test_each_wrong_answer_fails_whatever_the_seed(name: str) -> None:
    exercise, source = WRONG[name]
    namespace = lab_namespace(**{f"exercise_{exercise}": source})
    check = grade(namespace, seed=99).checks[CHECK_OF_EXERCISE[exercise] - 1]
    assert not check.ok, f"{name} passed with seed 99: {check.line}"


@pytest.mark.parametrize("exercise", [1, 2, 3])
def test_the_right_answers_the_catalogue_edits_pass(exercise: int) -> None:
    report = grade(lab_namespace(**{f"exercise_{exercise}": RIGHT[exercise]}))
    assert report.summary() == "7/7 passed", str(report)


def test_the_package_passes_all_seven_with_the_course_figures() -> None:
    report = run_selftest()
    assert report.summary() == "7/7 passed", str(report)
    assert [c.name for c in report.checks] == [
        "registry",
        "path boundary",
        "fragment merging",
        "bad-argument feedback",
        "truncation",
        "big file",
        "offline loop",
    ]
    text = str(report)
    assert "a 20000-char result truncates to 8054 chars, stating 12000 were cut" in text
    assert "reading the generated 39036-char data/rates.csv feeds back 8054 chars" in text
    assert "glob -> grep -> read_file (50, 361, 386 chars)" in text


COURSE_TRUNCATE = Path(__file__).resolve().parent / "data" / "course_truncate_result.txt"


def course_truncate_result() -> Any:
    """The course's printed truncate_result (tests/data, verbatim), with what it assumes."""
    namespace: dict[str, Any] = {"replace": replace, "ToolResult": ToolResult}
    exec(compile(COURSE_TRUNCATE.read_text(), str(COURSE_TRUNCATE), "exec"), namespace)
    return namespace["truncate_result"]


def test_the_course_s_printed_truncation_scores_seven_of_seven() -> None:
    # Its note is 110 characters for 20000 (8110 out, not the package's 8054): the lab judges
    # the course's rules (the cut, the total, the way to the middle), not our sentence.
    report = run_selftest(truncate=course_truncate_result())
    assert report.summary() == "7/7 passed", str(report)
    assert "a 20000-char result truncates to 8110 chars, stating 12000 were cut" in str(report)


@pytest.mark.parametrize(
    "note",
    [
        "\n[{removed:,} of {total:,} characters cut: call read_file with offset for the middle]\n",
        " <cut {removed} chars of {total}; use OFFSET to read the middle> ",
    ],
)
def test_any_note_that_says_the_course_s_three_things_passes(note: str) -> None:
    source = RIGHT[3].replace(
        '"\\n[...{removed} of {total} chars cut; use offset for middle]\\n"', repr(note)
    )
    assert source != RIGHT[3]
    assert grade(lab_namespace(exercise_3=source)).summary() == "7/7 passed"


@pytest.mark.parametrize(
    ("note", "words"),
    [
        ("\n[...{removed} chars cut; use offset for middle]\n", "does not give the total"),
        ("\n[...{total} chars in all; use offset for middle]\n", "how many were cut"),
        ("\n[...{removed} of {total} chars cut]\n", "how to read the middle"),
        ("\n" + "." * 400 + "{removed} of {total}, offset\n", "at most 300"),
    ],
)
def test_a_note_missing_one_of_the_three_names_rule_two(note: str, words: str) -> None:
    source = RIGHT[3].replace(
        '"\\n[...{removed} of {total} chars cut; use offset for middle]\\n"', repr(note)
    )
    check = grade(lab_namespace(exercise_3=source)).checks[4]
    assert not check.ok and "rule two: state how much was cut" in check.line and words in check.line


def test_the_lab_solution_passes_all_seven() -> None:
    assert grade(lab_namespace()).summary() == "7/7 passed"


@pytest.mark.parametrize("seed", range(6))
def test_package_and_lab_solution_pass_whatever_the_seed(seed: int) -> None:
    assert run_selftest(seed=seed).passed == 7
    assert grade(lab_namespace(), seed=seed).passed == 7


def test_the_lab_starter_passes_exactly_the_two_package_checks() -> None:
    starter = cell_sources(starter_path(LABS / "source" / "day03-lab.ipynb"))
    report = grade(lab_namespace(**{f"exercise_{n}": starter[f"exercise-{n}"] for n in (1, 2, 3)}))
    assert [c.number for c in report.checks if c.ok] == [1, 2]
    assert report.summary() == "2/7 passed"
    assert report.checks[2].line.startswith("fragment merging: write this part: the TODO comment")


def test_stubs_that_raise_not_implemented_score_two() -> None:
    class Stub:
        def __init__(self) -> None:
            raise NotImplementedError("exercise 1")

    def stub(*args: object) -> ToolResult:
        raise NotImplementedError("exercise 2 or 3")

    assert run_selftest(accumulator=Stub, run_call=stub, truncate=stub).passed == 2


def test_the_same_seed_gives_the_same_report() -> None:
    wrong = lab_namespace(exercise_1=WRONG["accumulator appends a repeated id"][1])
    assert str(grade(wrong, seed=11)) == str(grade(wrong, seed=11))
    assert str(run_selftest()) == str(run_selftest())


def test_the_report_lists_every_check_and_its_failures() -> None:
    wrong = lab_namespace(exercise_3=WRONG["truncation keeps only the head"][1])
    report = grade(wrong)
    lines = str(report).splitlines()
    assert len(lines) == 8 and lines[-1] == "5/7 passed"
    assert lines[4].startswith("x 5. truncation: ") and lines[5].startswith("x 6. big file: ")
    assert report.failures() == [lines[4], lines[5]]
    assert run_selftest().failures() == []


def test_a_report_travels_as_json_and_comes_back_equal() -> None:
    report = grade(lab_namespace(exercise_2=WRONG["executor lets a ToolError out"][1]))
    again = SelftestReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report and str(again) == str(report)


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"checks": "7/7"},
        {"checks": [{"number": 1, "name": "registry", "ok": "yes", "line": "x"}]},
        {"checks": [{"number": 1, "ok": True, "line": "x"}]},
    ],
)
def test_a_report_of_another_shape_is_refused_with_what_is_wrong(data: object) -> None:
    with pytest.raises(ValueError, match="self-test report"):
        SelftestReport.from_dict(data)  # type: ignore[arg-type]


def test_checks_carry_their_name() -> None:
    check = Check(3, "fragment merging", False, "fragment merging: drain raised KeyError: 0")
    assert SelftestReport([check]).failures() == ["x 3. fragment merging: drain raised KeyError: 0"]


def test_the_package_itself_is_not_there_to_wrap_where_the_grader_asks() -> None:
    accumulator = "from course_agent import ToolCallAccumulator as _Package\n\n\n" + (
        "class ToolCallAccumulator(_Package):\n    pass\n"
    )
    truncation = (
        "from course_agent import truncate_result as _package\n\n\n"
        "def truncate_result(result):\n    return _package(result)\n"
    )
    reports = judged(
        {"1": lab_cells(exercise_1=accumulator), "3": lab_cells(exercise_3=truncation)}
    )
    assert GONE in reports["1"].checks[2].line and GONE in reports["3"].checks[4].line


# -- what the self-test deliberately does not ask ------------------------------------------------


def mistral_parallel_call() -> list[ToolCallDelta]:
    """Two whole calls from a gateway that sends no index (as the recorded Mistral stream does)."""
    return [
        ToolCallDelta(None, "gSIMJiOkT", "glob", '{"pattern":"**/*.js"}'),
        ToolCallDelta(None, "hTJNKjPlU", "grep", '{"pattern":"divide"}'),
    ]


def drain(accumulator: type, deltas: list[ToolCallDelta]) -> list[Any]:
    merger = accumulator()
    for delta in deltas:
        merger.push(delta)
    return merger.drain()


def test_a_missing_index_is_beyond_the_lab_so_the_self_test_does_not_ask_for_it() -> None:
    # The package keeps the two calls apart (its wire parser gives each fragment an index, and the
    # accumulator merges by index); the wrong answer merges them, and so does the lab's own
    # solution, which the lab tells to expect an index on every fragment. When exercise 1 asks
    # for a missing index, this test fails and the self-test can add the case.
    ((_, source),) = BEYOND_THE_LAB.values()
    wrong, solution = lab_namespace(exercise_1=source), lab_namespace()
    slots = CallSlots()
    placed = [replace(d, index=slots.place(d.index, d.id)) for d in mistral_parallel_call()]
    package = drain(ToolCallAccumulator, placed)
    assert [c.id for c in package] == ["gSIMJiOkT", "hTJNKjPlU"]
    assert len(drain(wrong["ToolCallAccumulator"], mistral_parallel_call())) == 1
    assert len(drain(solution["ToolCallAccumulator"], mistral_parallel_call())) == 1
    assert grade(wrong).passed == 7


# A replay: the package's answers recorded in a run of the self-test when the cell runs, handed
# back when the same cases come again, a wrong answer for anything else. Its truncate_result
# names nothing of the package (only a dict), so the grader's origin check passes it too.
REPLAY = """
import course_agent.selftest.lab as _selftest
from course_agent import truncate_result as _package

_answers = {}


def _record(result):
    _answers[result.content, result.ok] = answer = _package(result)
    return answer


_selftest.run_selftest(truncate=_record)


def truncate_result(result):
    if (result.content, result.ok) in _answers:
        return _answers[result.content, result.ok]
    return replace(result, content=result.content[:MAX_RESULT_CHARS])  # wrong: the head only
"""


def test_a_replay_of_recorded_answers_passes_only_the_seed_it_was_recorded_at() -> None:
    # A limit, pinned: the self-test's cases are the same at the same seed, so answers recorded
    # at the default seed replay. A fresh seed (run_selftest(seed=...)) draws cases they miss.
    namespace = lab_namespace(exercise_3=REPLAY)
    assert grade(namespace).passed == 7
    check = grade(namespace, seed=SEED + 1).checks[4]
    # The course's 20000 chars replay; which drawn case the line names first depends on the seed.
    assert not check.ok and re.match(r"truncation: an? \d+-char result", check.line), check.line


@pytest.mark.parametrize("number", [6, 7])
def test_checks_6_and_7_take_only_answers_to_the_repository_of_their_own_seed(number: int) -> None:
    # The red team's replay: the package's answers recorded at one seed, handed back at another.
    part = PARTS[number - 1]

    def answered(cases: list[dict[str, Any]]) -> Any:
        return plain(part.answer([case["ask"] for case in cases], PACKAGE))

    elsewhere = answered(part.cases(random.Random("elsewhere")))
    cases = part.cases(random.Random("the grader's"))
    assert judge_part(number, part, cases, answered(cases)).ok
    replayed = judge_part(number, part, cases, elsewhere)
    assert not replayed.ok and "at char" in replayed.line
