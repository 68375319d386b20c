"""Extension checks 1-2: a designed tool is read as the model sees it, then used in a registry by
a scripted model through the real loop."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import pytest
from extension_lab import namespace, solved
from pydantic import BaseModel, Field

from course_agent.loop import check_transcript, run_agent
from course_agent.offline.repository import build_sandbox
from course_agent.protocol import AgentStopped, ToolContext, ToolDef, ToolFinished
from course_agent.registry import ToolRegistry, default_registry
from course_agent.selftest.design import (
    DESIGN,
    LIST_QUESTION,
    WIRED,
    AddedToolScript,
)
from course_agent.selftest.judge import CheckFailed, run_part
from course_agent.tools.list_dir import run_list_dir


@pytest.fixture(scope="module")
def tool() -> ToolDef:
    return namespace(solved())["list_dir_tool"]()


def test_the_labs_design_passes_both_checks(tool: ToolDef) -> None:
    assert run_part(DESIGN, {"list_dir_tool": lambda: tool}, random.Random(1)).startswith(
        "list_dir: a verb-noun name"
    )
    assert "the scripted model used it" in run_part(
        WIRED, {"list_dir_tool": lambda: tool}, random.Random(1)
    )


def test_the_scripted_model_calls_the_added_tool_then_answers(
    tmp_path: Path, tool: ToolDef
) -> None:
    ctx = ToolContext(build_sandbox(tmp_path))
    registry = ToolRegistry(
        [*default_registry().tools.values(), dataclasses.replace(tool, name="list_entries")]
    )
    messages: list[dict] = []
    events = list(run_agent(LIST_QUESTION, AddedToolScript(), registry, ctx, messages=messages))
    ran = [
        (e.call.name, e.call.args, e.result.content) for e in events if isinstance(e, ToolFinished)
    ]
    assert ran == [("list_entries", '{"path": "src"}', "calc.js\ninvoiceReport.js")]
    assert events[-1] == AgentStopped("done")
    assert messages[-1]["content"] == "src/ holds: calc.js, invoiceReport.js."
    assert check_transcript(messages) is None


def test_without_an_added_tool_the_script_says_so(tmp_path: Path) -> None:
    messages: list[dict] = []
    list(
        run_agent(
            LIST_QUESTION,
            AddedToolScript(),
            default_registry(),
            ToolContext(tmp_path),
            messages=messages,
        )
    )
    assert messages[-1]["content"] == "No tool was added to the course's three."


class Arguments(BaseModel):
    directory: str = Field(".", description="the directory; default .")


@pytest.mark.parametrize(
    ("made", "problem"),
    [
        (
            lambda: {"name": "list_dir"},
            "list_dir_tool() returned {'name': 'list_dir'}: return ToolDef(",
        ),
        (lambda: ToolDef("list_dir", "d", dict, run_list_dir), "args must be a pydantic BaseModel"),
    ],
)
def test_something_that_is_no_tool_is_told_what_to_return(made, problem: str) -> None:
    with pytest.raises(CheckFailed, match=re.escape(problem)):
        run_part(DESIGN, {"list_dir_tool": made}, random.Random(1))


def test_other_parameters_than_the_labs_are_named(tool: ToolDef) -> None:
    other = dataclasses.replace(tool, args=Arguments)
    with pytest.raises(
        CheckFailed,
        match=r"list_dir has parameters \['directory'\]: the lab's tool takes path and limit",
    ):
        run_part(WIRED, {"list_dir_tool": lambda: other}, random.Random(1))
