"""Check 4's probe tools and bad calls: the package's executor meets each, every kind is there."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_agent import ToolContext, execute_call
from course_agent.offline.repository import build_sandbox
from course_agent.selftest.feedback import FEEDBACK, Probes, bad_calls
from course_agent.selftest.judge import run_part
from course_agent.selftest.lab import SEED


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> ToolContext:
    # The probes and read_file only read it, so every example may share one sandbox.
    return ToolContext(build_sandbox(tmp_path_factory.mktemp("feedback")))


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32))
def test_the_package_executor_meets_every_generated_call(ctx: ToolContext, seed: int) -> None:
    assert run_part(FEEDBACK, {"run_call": execute_call}, random.Random(seed)).startswith(
        "9 illegal calls"
    )


def test_every_kind_of_illegal_call_is_there_and_three_that_must_run() -> None:
    rng = random.Random(SEED)
    labels = [case.label for case in bad_calls(rng, Probes("abcdef", "KeyError"))]
    kinds = [
        "unknown tool",
        "arguments cut short",
        "arguments not an object",
        "missing phrase",
        "repeats of the wrong type",
        "repeats out of range",
        "unknown argument",
        "a tool that raises ToolError",
        "a tool that raises",
        "empty arguments",
        "a valid call echo",
        "a valid call read_file",
    ]
    assert [next(k for k in kinds if label.startswith(k)) for label in labels] == sorted(
        kinds, key=lambda k: next(i for i, label in enumerate(labels) if label.startswith(k))
    )
    assert len(labels) == len(kinds)


def test_echo_notes_a_raw_dict_and_refuses_it(tmp_path: Path) -> None:
    probes = Probes("abcdef", "KeyError")
    echo = probes.tools["echo"]
    with pytest.raises(TypeError, match="echo cannot use a dict"):
        echo.run({"phrase": "hi"}, ToolContext(tmp_path))
    assert echo.run(echo.args(phrase="hi", repeats=2), ToolContext(tmp_path)).content == "hi hi"
    assert probes.handed == ["dict", "EchoArgs"]


def test_the_probe_schemas_are_strict_and_described() -> None:
    for tool in Probes("abcdef", "ValueError").tools.values():
        schema = tool.parameters
        assert schema["additionalProperties"] is False
        assert all(prop.get("description") for prop in schema["properties"].values())
