"""The official `openai` and `anthropic` SDKs as clients of the scripted gateway, over loopback.

Every scripted turn the suite uses (the course's question and INJECT=bad_args, on both wires) is
streamed to the SDK, which merges the calls its own way; the merge must equal course_agent's.
Each SDK is imported in the tests that use it: every xdist worker collects this module, one runs
it, and the two take 3.5 s to import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from scripted_gateway import ScriptedGateway

from course_agent.loop import run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolContext
from course_agent.providers.anthropic_messages import translate_messages, translate_tools
from course_agent.registry import default_registry

KEY = "sk-test-sdk-client"
SCRIPTS = [None, "bad_args"]
TOOLS = default_registry().list()


def offline_transcript(inject: str | None, tmp_path: Path) -> list[dict[str, Any]]:
    """The offline run's messages: what course_agent merged from every scripted turn."""
    messages: list[dict[str, Any]] = []
    ctx = ToolContext(build_sandbox(tmp_path))
    list(run_agent(QUESTION, ScriptedModel(inject), default_registry(), ctx, messages=messages))
    return messages


def answered_turns(messages: list[dict[str, Any]]) -> list[tuple[list[dict], dict]]:
    """(the messages sent, the assistant answer course_agent merged) for every model turn."""
    return [(messages[:i], m) for i, m in enumerate(messages) if m["role"] == "assistant"]


def merged_calls(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (c["function"]["name"], c["function"]["arguments"]) for c in answer.get("tool_calls", [])
    ]


@pytest.mark.parametrize("inject", SCRIPTS)
def test_every_scripted_turn_has_a_model_turn(inject, tmp_path):
    # The plain question takes 3 model turns and bad_args 4: the SDK tests below cover them all.
    turns = answered_turns(offline_transcript(inject, tmp_path))
    assert len(turns) == (4 if inject else 3)
    assert turns[-1][1]["content"].startswith("The test 'divide' is red because src/calc.js")


# -- openai ---------------------------------------------------------------------------------------


def docs_loop(stream: Any) -> tuple[str, dict[int, Any], list[str]]:
    """The text, the calls by index, and the finish reasons, merged as OpenAI's function-calling
    guide merges them: the first fragment of an index is kept, the others add their arguments."""
    text, final_tool_calls, finishes = [], {}, []
    for chunk in stream:
        delta = chunk.choices[0].delta
        text.append(delta.content or "")
        for tool_call in delta.tool_calls or []:
            index = tool_call.index
            if index not in final_tool_calls:
                final_tool_calls[index] = tool_call
            final_tool_calls[index].function.arguments += tool_call.function.arguments
        if chunk.choices[0].finish_reason:
            finishes.append(chunk.choices[0].finish_reason)
    return "".join(text), final_tool_calls, finishes


@pytest.mark.parametrize("inject", SCRIPTS)
def test_the_openai_sdk_merges_what_course_agent_merges(inject, tmp_path):
    import openai

    messages, script = offline_transcript(inject, tmp_path), ScriptedModel(inject)
    with ScriptedGateway(inject=inject) as gateway:
        client = openai.OpenAI(base_url=gateway.url, api_key=KEY, max_retries=0)
        for sent, answer in answered_turns(messages):
            stream = client.chat.completions.create(
                model="scripted", messages=sent, tools=TOOLS, stream=True
            )
            text, by_index, finishes = docs_loop(stream)
            assert text == (answer["content"] or "")
            calls = [by_index[index] for index in sorted(by_index)]  # the dict holds arrival order
            assert [(c.function.name, c.function.arguments) for c in calls] == merged_calls(answer)
            assert [c.id for c in calls] == [c["id"] for c in answer.get("tool_calls", [])]
            # Indexes from 1, as through a Claude gateway; the last call's head arrives first.
            assert list(by_index) == list(range(len(calls), 0, -1))
            assert finishes == [script.next_step(sent)[0].finish]


def test_the_openai_stream_helper_trips_on_index_1(tmp_path):
    import openai

    # The course's trap: the SDK's helper (ChatCompletionStreamState) keeps calls in a list and
    # looks fragment `index` up in it, so a stream whose calls start at index 1, as a gateway in
    # front of Claude sends them, fails inside the SDK. The loop above keys a dict and does not.
    sent, _ = answered_turns(offline_transcript(None, tmp_path))[0]
    with ScriptedGateway() as gateway:
        client = openai.OpenAI(base_url=gateway.url, api_key=KEY, max_retries=0)
        with (
            pytest.raises(IndexError) as trap,
            client.beta.chat.completions.stream(model="scripted", messages=sent, tools=TOOLS) as s,
        ):
            s.get_final_completion()
    assert "tool_call_chunk.index" in str(trap.traceback[-1].statement)  # the lookup, nothing else


@pytest.mark.parametrize("include_usage", [False, True])
def test_openai_chunks_validate_and_usage_comes_when_asked(include_usage, tmp_path):
    import openai
    from openai.types.chat import ChatCompletionChunk

    sent, _ = answered_turns(offline_transcript(None, tmp_path))[0]
    options = {"stream_options": {"include_usage": True}} if include_usage else {}
    with ScriptedGateway() as gateway:
        client = openai.OpenAI(base_url=gateway.url, api_key=KEY, max_retries=0)
        chunks = list(
            client.chat.completions.create(
                model="scripted", messages=sent, tools=TOOLS, stream=True, **options
            )
        )
        body = gateway.requests[-1].body
    assert body["stream"] is True
    raw = [chunk.model_dump(exclude_unset=True) for chunk in chunks]
    for chunk in raw:  # the SDK's own type, validated (not merely constructed)
        ChatCompletionChunk.model_validate(chunk)
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["id"] == raw[0]["id"] and chunk["model"] == "scripted"
        assert isinstance(chunk["created"], int) and chunk["created"] > 0
    # As OpenAI streams it: usage only when asked, then in one last chunk without choices.
    with_usage = [chunk for chunk in raw if chunk.get("usage")]
    if include_usage:
        assert with_usage == [raw[-1]] and raw[-1]["choices"] == []
        usage = raw[-1]["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        assert all("usage" in chunk and chunk["usage"] is None for chunk in raw[:-1])
    else:
        assert with_usage == [] and all(chunk["choices"] for chunk in raw)


# -- anthropic ------------------------------------------------------------------------------------


def anthropic_request(sent: list[dict[str, Any]]) -> dict[str, Any]:
    system, turns = translate_messages(sent)
    return {
        "model": "scripted",
        "max_tokens": 1024,
        "system": system,
        "messages": turns,
        "tools": translate_tools(TOOLS),
    }


def tool_input(arguments: str) -> Any:
    """What a tool_use block's input holds for arguments course_agent merged: the JSON object.
    The SDK parses the arguments as partial JSON, so bad_args' broken `{"pattern": "div` drops its
    unfinished string and becomes {}; course_agent keeps the text to quote it back to the model."""
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return {}


@pytest.mark.parametrize("inject", SCRIPTS)
def test_the_anthropic_sdk_merges_what_course_agent_merges(inject, tmp_path):
    import anthropic

    messages, script = offline_transcript(inject, tmp_path), ScriptedModel(inject)
    stop_reasons = {"tool_calls": "tool_use", "stop": "end_turn"}
    with ScriptedGateway(wire="anthropic", inject=inject) as gateway:
        client = anthropic.Anthropic(base_url=gateway.root_url, api_key=KEY, max_retries=0)
        for sent, answer in answered_turns(messages):
            with client.messages.stream(**anthropic_request(sent)) as stream:
                final = stream.get_final_message()
            text = "".join(block.text for block in final.content if block.type == "text")
            assert text == (answer["content"] or "")
            uses = [block for block in final.content if block.type == "tool_use"]
            assert [(use.name, use.input) for use in uses] == [
                (name, tool_input(arguments)) for name, arguments in merged_calls(answer)
            ]
            assert [use.id[:6] for use in uses] == ["toolu_"] * len(uses)
            assert final.role == "assistant" and final.model == "scripted"
            # The course's second trap rides along: turn 2 says end_turn while it calls read_file.
            assert final.stop_reason == stop_reasons[script.next_step(sent)[0].finish]
            assert final.usage.output_tokens > 0


@pytest.mark.parametrize("inject", SCRIPTS)
def test_anthropic_events_validate_against_the_sdk_types(inject, tmp_path):
    import anthropic
    from anthropic.types import RawMessageStreamEvent

    events = pydantic.TypeAdapter(RawMessageStreamEvent)
    messages = offline_transcript(inject, tmp_path)
    with ScriptedGateway(wire="anthropic", inject=inject) as gateway:
        client = anthropic.Anthropic(base_url=gateway.root_url, api_key=KEY, max_retries=0)
        for sent, _ in answered_turns(messages):
            raw = client.messages.create(**anthropic_request(sent), stream=True)
            seen = [event.model_dump(exclude_unset=True) for event in raw]
            for event in seen:
                events.validate_python(event)  # raises on a missing field the API always sends
            start = seen[0]["message"]
            assert start["content"] == [] and start["type"] == "message"
            assert start["stop_reason"] is None and start["stop_sequence"] is None
            assert start["usage"]["input_tokens"] > 0
            delta = next(event for event in seen if event["type"] == "message_delta")
            assert delta["usage"]["output_tokens"] > 0
            assert [event["type"] for event in seen][-2:] == ["message_delta", "message_stop"]
