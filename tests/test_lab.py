"""The day-three lab: the starter scores 2/7, each exercise is worth its check, locks hold.

The lab's solution is a second implementation of three package functions, so hypothesis keeps the
two identical on random inputs: they cannot drift apart silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starters import starter

from course_agent import (
    ToolCall,
    ToolCallAccumulator,
    ToolCallDelta,
    ToolContext,
    ToolResult,
    default_registry,
    execute_call,
    run_selftest,
    truncate_result,
)
from course_agent.lab.release import CODE_STUB
from course_agent.offline.repository import build_sandbox

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "labs" / "source" / "day03-lab.ipynb"
RELEASE = starter(SOURCE)  # never labs/day03-lab.ipynb: a student works in it
EXERCISES = ["exercise-1", "exercise-2", "exercise-3"]
FOLLOW = (
    "the lab's solution (labs/source/day03-lab.ipynb, cell {cell}) must behave like {function}: "
    "update the cell, then run `course-agent lab execute` and `course-agent lab release` on it"
)


def cells(path: Path) -> dict[str, Any]:
    return {cell.id: cell for cell in nbformat.read(path, as_version=4).cells}


def lab(solved: list[str]) -> dict[str, Any]:
    """The setup and exercise cells run in one namespace: the `solved` ones from the solution."""
    starter, solution = cells(RELEASE), cells(SOURCE)
    namespace: dict[str, Any] = {}
    for cell_id in ["setup", *EXERCISES]:
        cell = solution[cell_id] if cell_id in solved else starter[cell_id]
        exec(compile(cell.source, f"day03-lab:{cell_id}", "exec"), namespace)
    return namespace


def selftest(namespace: dict[str, Any]) -> list[int]:
    """The numbers of the checks that pass on the namespace's three implementations."""
    report = run_selftest(
        accumulator=namespace["ToolCallAccumulator"],
        run_call=namespace["execute_call"],
        truncate=namespace["truncate_result"],
    )
    return [check.number for check in report.checks if check.ok]


def test_the_starter_passes_exactly_the_two_package_checks() -> None:
    assert selftest(lab(solved=[])) == [1, 2]


@pytest.mark.parametrize(
    ("exercise", "passing"),
    [
        # The offline loop (7) needs all three: a stub executor's calls come back failed, and
        # check 7 wants every call answered, not merely fed back.
        (1, [1, 2, 3]),
        (2, [1, 2, 4]),
        (3, [1, 2, 5]),
    ],
)
def test_each_exercise_solved_alone_adds_its_own_checks(exercise: int, passing: list[int]) -> None:
    assert selftest(lab(solved=[f"exercise-{exercise}"])) == passing


def test_the_solution_passes_all_seven() -> None:
    assert selftest(lab(solved=EXERCISES)) == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize(
    ("exercise", "attempt"),
    [
        (1, lambda ns: ns["ToolCallAccumulator"]()),
        (2, lambda ns: ns["execute_call"]({}, ToolCall("c", "glob", "{}"), None)),
        (3, lambda ns: ns["truncate_result"](ToolResult("text"))),
    ],
)
def test_each_stub_points_at_the_todo_above_it(exercise: int, attempt: Any) -> None:
    with pytest.raises(NotImplementedError, match="the TODO comment above says what it must do"):
        attempt(lab(solved=[]))


def test_every_stub_has_a_todo_naming_its_exercise_right_above_it() -> None:
    for number in (1, 2, 3):
        lines = cells(RELEASE)[f"exercise-{number}"].source.splitlines()
        stubs = [at for at, line in enumerate(lines) if line.strip() == CODE_STUB]
        assert stubs, f"exercise {number} has no stub"
        for at in stubs:
            comments = []
            for line in reversed(lines[:at]):
                if not line.strip().startswith("#"):
                    break
                comments.append(line.strip())
            todo = [line for line in comments if line.startswith("# TODO: ")]
            assert todo and todo[-1].startswith(f"# TODO: exercise {number}: "), lines[at - 3 : at]


def test_only_the_exercises_and_explorations_can_be_changed() -> None:
    for cell_id, cell in cells(RELEASE).items():
        flags = (cell.metadata.get("editable", True), cell.metadata.get("deletable", True))
        if cell_id.startswith("explore-"):
            assert flags == (True, True), cell_id
        elif cell_id in EXERCISES:
            assert flags == (True, False), cell_id  # nbgrader keeps solution cells in place
        else:
            assert flags == (False, False), cell_id


def test_each_exercise_has_its_text_before_and_its_check_after() -> None:
    order = list(cells(RELEASE))
    for number in (1, 2, 3):
        at = order.index(f"exercise-{number}")
        assert order[at - 1 : at + 2] == [
            f"exercise-{number}-text",
            f"exercise-{number}",
            f"check-{number}",
        ]
    # The self-test, one cell of nbgrader points per check, then what comes next.
    assert order[-9:] == ["selftest", *(f"points-{number}" for number in range(1, 8)), "next"]


def test_explorations_ignore_their_output_and_the_self_test_is_checked() -> None:
    lab_cells = cells(RELEASE)
    for cell_id, cell in lab_cells.items():
        if cell_id.startswith("explore-"):
            assert cell.source.startswith("# NBVAL_IGNORE_OUTPUT\n"), cell_id
    assert "NBVAL" not in lab_cells["selftest"].source
    assert "tags" not in lab_cells["selftest"].metadata


def test_steps_one_and_two_are_shown_working_in_the_solution() -> None:
    source = cells(SOURCE)

    def printed(cell_id: str) -> str:
        return "".join(output.get("text", "") for output in source[cell_id].outputs)

    shown = printed("registry") + printed("sandbox")
    assert all(f"> {name}(" in shown for name in ("glob", "grep", "read_file"))
    refused = printed("explore-boundary")
    assert "x ../outside.txt: ../outside.txt is outside the working directory" in refused


# -- one source of truth: the lab's solution behaves exactly like the package ------------------
# Over the lab's domain: every fragment carries an index, and arguments are JSON of modest size and
# depth without lone surrogates. What lies beyond (gateways that omit the index, 5000-digit numbers,
# deep nesting, "\\ud800") is the package's hardening, not the lesson.


@pytest.fixture(scope="module")
def solution() -> dict[str, Any]:
    return lab(solved=EXERCISES)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> ToolContext:
    # The tools only read it, so every example may share one sandbox.
    return ToolContext(build_sandbox(tmp_path_factory.mktemp("lab")))


optional_text = st.one_of(st.none(), st.just(""), st.text(max_size=8))


@st.composite
def fragment_streams(draw: st.DrawFn) -> list[ToolCallDelta]:
    """Any stream over a few indexes that start anywhere: heads late or repeated, ids blanked."""
    indexes = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=4, unique=True))
    delta = st.builds(
        ToolCallDelta, st.sampled_from(indexes), optional_text, optional_text, optional_text
    )
    return draw(st.lists(delta, max_size=30))


@given(stream=fragment_streams())
def test_the_lab_accumulator_drains_what_the_package_drains(
    solution: dict[str, Any], stream: list[ToolCallDelta]
) -> None:
    ours, theirs = solution["ToolCallAccumulator"](), ToolCallAccumulator()
    for delta in stream:
        ours.push(delta)
        theirs.push(delta)
    assert ours.drain() == theirs.drain(), FOLLOW.format(
        cell="exercise-1", function="course_agent.accumulator.ToolCallAccumulator"
    )


def repeat_to(length: int, unit: str) -> str:
    return (unit * (length // len(unit) + 1))[:length]


texts = st.builds(
    repeat_to,
    st.one_of(st.integers(7990, 8010), st.integers(0, 40_000)),
    st.text(min_size=1, max_size=40),
)


@given(
    text=texts,
    ok=st.booleans(),
    meta=st.dictionaries(st.sampled_from(["tool", "truncated", "x"]), st.integers(), max_size=2),
)
def test_the_lab_truncation_equals_the_package_truncation(
    solution: dict[str, Any], text: str, ok: bool, meta: dict[str, int]
) -> None:
    result = ToolResult(text, ok=ok, meta=meta)
    assert solution["truncate_result"](result) == truncate_result(result), FOLLOW.format(
        cell="exercise-3", function="course_agent.truncate.truncate_result"
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
plausible = st.dictionaries(
    st.sampled_from(["path", "pattern", "glob", "limit", "offset", "extra"]),
    st.sampled_from(["src/calc.js", "**/*.js", r"divide\(", "*.js", "../x", "/etc/passwd", "["])
    | st.integers(-3, 2500)
    | json_values,
    max_size=4,
).map(json.dumps)
arguments = st.one_of(
    plausible,
    plausible.map(lambda text: text[: len(text) // 2]),  # cut short mid-stream
    json_values.map(json.dumps),
    st.text(max_size=20),
)
tool_names = st.sampled_from(["glob", "grep", "read_file", "edit_file", ""]) | st.text(max_size=8)


@settings(max_examples=150)
@given(name=tool_names, args=arguments)
def test_the_lab_execute_call_returns_what_the_package_returns(
    solution: dict[str, Any], ctx: ToolContext, name: str, args: str
) -> None:
    tools, call = default_registry().tools, ToolCall("c", name, args)
    assert solution["execute_call"](tools, call, ctx) == execute_call(tools, call, ctx), (
        FOLLOW.format(cell="exercise-2", function="course_agent.registry.execute_call")
    )
