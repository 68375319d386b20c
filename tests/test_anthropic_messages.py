from pathlib import Path
from typing import Any

import pytest

from course_agent.loop import run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolContext
from course_agent.providers.anthropic_messages import (
    tool_input,
    translate_messages,
    translate_tools,
)
from course_agent.registry import default_registry


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_tools_keep_name_description_and_schema() -> None:
    registry = default_registry()
    tools = translate_tools(registry.list())
    assert [tool["name"] for tool in tools] == ["glob", "grep", "read_file"]
    for tool, definition in zip(tools, registry.tools.values(), strict=True):
        assert tool == {
            "name": definition.name,
            "description": definition.description,
            "input_schema": definition.parameters,
        }


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"pattern": "**/*.js"}', {"pattern": "**/*.js"}),
        ("", {}),  # a tool without arguments streams none
        ("  ", {}),
        ('{"filename": "taxes.txt", "lines_of_text": [\n"# COMPRE', {}),  # cut by max_tokens
        ('{"pattern": "div', {}),  # the scripted bad_args call
        ("[1, 2]", {}),  # JSON, but not an object
        ("null", {}),
        ('{"x": 1e999}', {}),  # infinity: no JSON can carry it back
        ('{"x": NaN}', {}),
        ("[" * 5000, {}),  # json.loads: RecursionError
        ('{"x": ' + "9" * 5000 + "}", {}),  # json.loads: ValueError past 4,300 digits
    ],
)
def test_tool_input_is_always_an_object(arguments: str, expected: dict[str, Any]) -> None:
    assert tool_input(arguments) == expected


def test_a_tool_turn_translates_to_anthropic_blocks() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Why is the test red?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                call("toolu_1", "glob", '{"pattern": "**/*.js"}'),
                call("toolu_2", "grep", '{"pattern": "div'),
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "src/calc.js"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "arguments ... not valid JSON"},
    ]
    system, turns = translate_messages(messages)
    assert system == "Be brief."
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "Why is the test red?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "glob",
                    "input": {"pattern": "**/*.js"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {}},
            ],
        },
        # Both results in ONE user message, in call order; no is_error (the loop cannot say).
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src/calc.js"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "arguments ... not valid JSON",
                },
            ],
        },
    ]


def test_a_question_after_results_joins_their_user_turn_after_them() -> None:
    messages = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": None, "tool_calls": [call("t1", "glob", "{}")]},
        {"role": "tool", "tool_call_id": "t1", "content": "not run: the turn was interrupted"},
        {"role": "user", "content": "q2"},
    ]
    _, turns = translate_messages(messages)
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user"]
    assert [block["type"] for block in turns[2]["content"]] == ["tool_result", "text"]
    assert turns[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "glob", "input": {}}]


def test_an_assistant_that_said_nothing_is_left_out() -> None:
    messages = [
        {"role": "system", "content": "one"},
        {"role": "system", "content": "two"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "q2"},
    ]
    system, turns = translate_messages(messages)
    assert system == "one\n\ntwo"
    assert turns == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "q1"}, {"type": "text", "text": "q2"}],
        }
    ]


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError, match="'function' message"):
        translate_messages([{"role": "function", "content": "x"}])


@pytest.mark.parametrize("inject", [None, "bad_args"])
def test_every_transcript_of_a_run_is_a_valid_anthropic_conversation(
    inject: str | None, tmp_path: Path
) -> None:
    """Roles alternate, starting with the user, and each tool_use is answered in the next turn."""
    messages: list[dict[str, Any]] = []
    ctx = ToolContext(build_sandbox(tmp_path))
    list(
        run_agent(
            QUESTION, ScriptedModel(inject, "anthropic"), default_registry(), ctx, messages=messages
        )
    )
    system, turns = translate_messages(messages)
    assert system.startswith("You are a coding agent")
    assert [turn["role"] for turn in turns] == ["user", "assistant"] * (len(turns) // 2)
    for asked, answered in zip(turns[1::2], turns[2::2], strict=False):
        uses = [b["id"] for b in asked["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in answered["content"] if b["type"] == "tool_result"]
        assert uses == results
        assert all(isinstance(b["input"], dict) for b in asked["content"] if "input" in b)
