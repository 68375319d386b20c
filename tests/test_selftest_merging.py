"""Check 3's generated streams: each drains to its answer, and together they cover the traps."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_agent import ToolCallAccumulator
from course_agent.selftest.judge import CheckFailed, run_part
from course_agent.selftest.lab import SEED
from course_agent.selftest.merging import MERGING, MergeCase, merge_cases


def drained(case: MergeCase) -> list:
    merger = ToolCallAccumulator()
    for delta in case.deltas:
        merger.push(delta)
    return merger.drain()


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32))
def test_the_package_accumulator_drains_every_stream_to_its_answer(seed: int) -> None:
    for case in merge_cases(random.Random(seed)):
        assert drained(case) == list(case.want), case.label


def test_the_streams_cover_every_trap_the_lab_names() -> None:
    cases = merge_cases(random.Random(SEED))
    indexes = [sorted({d.index for d in case.deltas}) for case in cases]
    assert {found[0] for found in indexes} >= {0, 1, 7}
    assert any(found != list(range(found[0], found[-1] + 1)) for found in indexes)  # gaps
    assert any(found[-1] >= 10 for found in indexes)  # 10 sorts before 7 as text
    heads = [[d.index for d in case.deltas if d.name] for case in cases]
    assert any(order != sorted(order) for order in heads)  # a later call's head arrives first
    deltas = [d for case in cases for d in case.deltas]
    assert any(d.args_delta and d.args_delta.endswith("\\") for d in deltas)  # cut in an escape
    assert any(d.id == "" and d.name == "" for d in deltas)  # blanked
    repeated = [c for c in cases if c.heads == "repeated"]
    assert repeated and all(d.id for c in repeated for d in c.deltas)
    without_id = [
        (case, index)
        for case in cases
        for index in {d.index for d in case.deltas}
        if not any(d.id for d in case.deltas if d.index == index)
    ]
    assert without_id and all(f"call_{i}" in [c.id for c in case.want] for case, i in without_id)
    # ... at an index that is not its position, counted from 0 or from 1
    assert any(
        sorted({d.index for d in case.deltas}).index(i) not in (i, i - 1) for case, i in without_id
    )
    assert any(call.args == "" for case in cases for call in case.want)  # a call without arguments
    assert any(call.name == "" for case in cases for call in case.want)  # a call without a name


@pytest.mark.parametrize("seed", [SEED, 0, 1, 2, 3])
def test_some_fragment_is_only_a_space_and_some_arguments_are_spaced(seed: int) -> None:
    cases = merge_cases(random.Random(seed))
    assert any(d.args_delta == " " for case in cases for d in case.deltas)
    assert any(": " in call.args for case in cases for call in case.want)
    assert any('":"' in call.args for case in cases for call in case.want)  # and compact ones


def test_the_same_seed_gives_the_same_streams_and_another_seed_other_cuts() -> None:
    assert merge_cases(random.Random(3)) == merge_cases(random.Random(3))
    assert merge_cases(random.Random(3)) != merge_cases(random.Random(4))


def test_a_turn_cut_short_is_pushed_into_an_accumulator_never_drained() -> None:
    made: list[Recording] = []

    class Recording(ToolCallAccumulator):
        def __init__(self) -> None:
            super().__init__()
            self.drained = False
            made.append(self)

        def drain(self) -> list:
            self.drained = True
            return super().drain()

    # A subclass of the package's: in this process (the self-test) it passes; where the grader
    # asks, the package comes without its answer (tests/test_selftest.py's cheats).
    run_part(MERGING, {"accumulator": Recording}, random.Random(SEED))
    cut_short = [merger for merger in made if not merger.drained]
    assert len(made) == 12 and len(cut_short) == 1 and made[1] is cut_short[0]
    assert [slot.id for slot in cut_short[0].by_index.values()] == ["call_b", "call_a"]


def test_a_failed_stream_says_which_and_how_many_more() -> None:
    class Forgetful:
        def push(self, delta: object) -> None:
            pass

        def drain(self) -> list:
            return []

    with pytest.raises(CheckFailed) as failed:
        run_part(MERGING, {"accumulator": Forgetful}, random.Random(SEED))
    line = str(failed.value)
    assert line.startswith("the course's parallel call (indexes 1, 2;")
    assert "you drained 0 calls [], expected 2" in line and "(and 10 more of 11 streams)" in line
