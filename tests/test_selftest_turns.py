"""Extension checks 6-7: every finish judged, and the repair rule that a student's
repair_transcript is compared with."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.loop import check_transcript
from course_agent.selftest.judge import CheckFailed, run_part
from course_agent.selftest.turns import (
    FINISHES,
    KINDS,
    REPAIR,
    TOOL_TURN,
    repair_cases,
    repaired,
)


def test_every_finish_with_and_without_calls_is_asked() -> None:
    asked: list[tuple[Any, int]] = []

    def record(finish: str | None, calls: list) -> bool:
        asked.append((finish, len(calls)))
        return finish == "tool_calls" or bool(calls)

    assert "including 'stop' with a call" in run_part(
        TOOL_TURN, {"is_tool_turn": record}, random.Random(1)
    )
    assert {(finish, count) for finish in FINISHES for count in (0, 1, 2)} <= set(asked)
    assert ("stop", 1) in asked and ("length", 1) in asked  # recorded and replayed ones too


def test_the_repair_rule_makes_every_broken_case_valid_and_leaves_a_valid_one_alone() -> None:
    cases = dict(repair_cases(random.Random(2)))
    assert set(KINDS) <= set(cases) and len(cases) == len(KINDS) + 1
    for kind, messages in cases.items():
        assert check_transcript(repaired(messages)) is None, kind
    for kind in ("a valid transcript", "a turn's results in another order"):
        assert check_transcript(cases[kind]) is None and repaired(cases[kind]) == cases[kind]
    for kind in set(KINDS) - {"a valid transcript", "a turn's results in another order"}:
        assert check_transcript(cases[kind]) is not None, kind


def test_the_rule_itself_passes_its_check_and_mutation_is_named() -> None:
    assert "8 transcripts repaired" in run_part(
        REPAIR, {"repair_transcript": repaired}, random.Random(3)
    )

    def in_place(messages: list) -> list:
        messages[:] = repaired(messages)
        return messages

    with pytest.raises(CheckFailed, match="you changed the list passed in: build a new one"):
        run_part(REPAIR, {"repair_transcript": in_place}, random.Random(3))


ROLES = st.sampled_from(["user", "assistant", "assistant+calls", "tool", "tool?"])


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Any sequence of messages: calls with ids, tool messages for those ids or made-up ones."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    ids: list[str] = []
    for number, role in enumerate(draw(st.lists(ROLES, max_size=14))):
        if role == "assistant+calls":
            new = [f"c{number}_{n}" for n in range(draw(st.integers(1, 3)))]
            ids += new
            calls = [
                {"id": i, "type": "function", "function": {"name": "g", "arguments": "{}"}}
                for i in new
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        elif role.startswith("tool"):
            known = ids and role == "tool"
            call_id = draw(st.sampled_from(ids)) if known else f"x{number}"
            messages.append({"role": "tool", "tool_call_id": call_id, "content": "r"})
        else:
            messages.append({"role": role, "content": "t"})
    return messages


@given(transcripts())
def test_any_transcript_repaired_is_valid_keeps_the_rest_and_repairs_to_itself(
    messages: list[dict[str, Any]],
) -> None:
    before = copy.deepcopy(messages)
    fixed = repaired(messages)
    assert messages == before
    assert check_transcript(fixed) is None
    assert [m for m in fixed if m["role"] != "tool"] == [m for m in messages if m["role"] != "tool"]
    assert repaired(fixed) == fixed
    if check_transcript(messages) is None:
        assert fixed == messages
