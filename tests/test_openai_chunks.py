import json
from typing import Any

import pytest

from course_agent.protocol import Finish, GatewayError, TextDelta, ToolCallDelta
from course_agent.providers.gateway.contract import BrokenChunk
from course_agent.providers.gateway.errors import error_summary
from course_agent.providers.openai_chunks import events_from_chunk, events_from_lines


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }


def test_text_delta() -> None:
    assert events_from_chunk(chunk({"content": "Hi"})) == [TextDelta("Hi")]


@pytest.mark.parametrize("content", ["", None])
def test_empty_or_null_content_is_no_text(content: str | None) -> None:
    assert events_from_chunk(chunk({"role": "assistant", "content": content})) == []


def test_reasoning_is_ignored() -> None:
    delta = {"content": None, "reasoning_content": "First, I", "reasoning": "x"}
    assert events_from_chunk(chunk(delta)) == []


def test_tool_call_fragment_fields() -> None:
    entry = {
        "index": 1,
        "id": "call_a",
        "type": "function",
        "function": {"name": "glob", "arguments": '{"pat'},
    }
    assert events_from_chunk(chunk({"tool_calls": [entry]})) == [
        ToolCallDelta(index=1, id="call_a", name="glob", args_delta='{"pat')
    ]


def test_continuation_fragment_has_only_arguments() -> None:
    entry = {"index": 1, "function": {"arguments": 'tern"'}}
    assert events_from_chunk(chunk({"tool_calls": [entry]})) == [
        ToolCallDelta(index=1, args_delta='tern"')
    ]


def test_a_missing_index_is_given_one_at_the_wire() -> None:
    entry = {"id": "gSIMJiOkT", "function": {"name": "weather", "arguments": "{}"}}
    assert events_from_chunk(chunk({"tool_calls": [entry]})) == [
        ToolCallDelta(index=0, id="gSIMJiOkT", name="weather", args_delta="{}")
    ]


def test_empty_strings_are_passed_on_for_the_accumulator_to_ignore() -> None:
    entry = {"index": 0, "id": "", "function": {"name": "", "arguments": ""}}
    assert events_from_chunk(chunk({"tool_calls": [entry]})) == [
        ToolCallDelta(index=0, id="", name="", args_delta="")
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"path": "a.txt"}', '{"path": "a.txt"}'),  # a string, as is
        (None, None),  # null: nothing to add
        ({"path": "é.txt", "n": 2}, '{"path": "é.txt", "n": 2}'),  # parsed object: dumped
        ([], "[]"),
    ],
)
def test_arguments_are_normalised_to_text(arguments: Any, expected: str | None) -> None:
    entry = {"index": 0, "function": {"arguments": arguments}}
    [event] = events_from_chunk(chunk({"tool_calls": [entry]}))
    assert isinstance(event, ToolCallDelta)
    assert event.args_delta == expected


def test_several_fragments_in_one_chunk_keep_their_order() -> None:
    entries = [
        {"index": 2, "id": "b", "function": {"name": "grep", "arguments": ""}},
        {"index": 1, "id": "a", "function": {"name": "glob", "arguments": ""}},
    ]
    assert [e.index for e in events_from_chunk(chunk({"tool_calls": entries}))] == [2, 1]


def test_finish_reason_comes_after_the_fragment_in_the_same_chunk() -> None:
    entry = {"id": "x", "function": {"name": "weather", "arguments": "{}"}}
    found = events_from_chunk(chunk({"content": None, "tool_calls": [entry]}, "tool_calls"))
    assert found == [
        ToolCallDelta(index=0, id="x", name="weather", args_delta="{}"),
        Finish("tool_calls"),
    ]


def test_text_and_finish_in_one_chunk() -> None:
    assert events_from_chunk(chunk({"content": "."}, "stop")) == [TextDelta("."), Finish("stop")]


@pytest.mark.parametrize(
    "whole",
    [
        {"choices": [], "usage": {"total_tokens": 3}},  # the usage-only last chunk
        {"id": "", "object": "", "choices": [], "prompt_filter_results": []},  # Azure's first
        {"object": "chat.completion.chunk"},  # no choices key at all
        chunk({"content": "other"}, "stop", index=1),  # n=3: choice 1 is not ours
        {"choices": [{"index": 0, "finish_reason": None}]},  # no delta
    ],
)
def test_chunks_that_yield_nothing(whole: dict[str, Any]) -> None:
    assert events_from_chunk(whole) == []


def test_only_choice_zero_counts_when_choices_share_a_chunk() -> None:
    whole = {
        "choices": [
            {"index": 1, "delta": {"content": "B"}, "finish_reason": None},
            {"index": 0, "delta": {"content": "A"}, "finish_reason": None},
        ]
    }
    assert events_from_chunk(whole) == [TextDelta("A")]


# -- events_from_lines: a whole body ------------------------------------------------------------

GATEWAY = "https://gateway.example/v1"


def body(*payloads: Any, done: bool = True) -> list[str]:
    lines = []
    for payload in payloads:
        lines += [f"data: {json.dumps(payload)}", ""]
    return [*lines, "data: [DONE]", ""] if done else lines


def test_lines_to_events() -> None:
    lines = body(chunk({"content": "Hi"}), chunk({}, "stop"), {"choices": [], "usage": {}})
    assert list(events_from_lines(lines, GATEWAY)) == [TextDelta("Hi"), Finish("stop")]


def test_done_ends_the_stream_even_if_more_follows() -> None:
    lines = [*body(chunk({"content": "a"})), "data: {not json", ""]
    assert list(events_from_lines(lines, GATEWAY)) == [TextDelta("a")]


def test_finish_without_done_is_accepted() -> None:
    lines = body(chunk({"content": "a"}, "stop"), done=False)
    assert list(events_from_lines(lines, GATEWAY)) == [TextDelta("a"), Finish("stop")]


def assert_one_line_error(lines: list[str], *fragments: str) -> None:
    with pytest.raises(GatewayError) as caught:
        list(events_from_lines(lines, GATEWAY))
    message = str(caught.value)
    assert "\n" not in message
    for fragment in (GATEWAY, *fragments):
        assert fragment in message


def test_no_done_and_no_finish_is_an_error() -> None:
    assert_one_line_error(body(chunk({"content": "a"}), done=False), "before the answer")


def test_invalid_json_is_an_error() -> None:
    assert_one_line_error(['data: {"choices": [', ""], "not JSON", '{"choices": [')


def test_a_payload_that_is_not_an_object_is_an_error() -> None:
    assert_one_line_error(["data: [1, 2]", ""], "[1, 2]")


def test_event_error_is_an_error() -> None:
    lines = body(chunk({"content": "a"}), done=False)
    lines += ["event: error", 'data: {"error": {"code": "overloaded", "message": "busy"}}', ""]
    assert_one_line_error(lines, "mid-stream", "overloaded: busy")


def test_error_payload_without_event_line_is_an_error() -> None:
    # OpenRouter's style: a normal data line whose payload carries an "error" object.
    payload = {"error": {"message": "Provider returned error", "code": 502}, "choices": []}
    assert_one_line_error(body(payload), "502: Provider returned error")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"error": {"message": "bad", "type": "invalid_request_error"}},
            "invalid_request_error: bad",
        ),
        ({"error": "plain"}, "plain"),
        ({"detail": "Not Found"}, "Not Found"),
        ("  two\n lines ", "two lines"),
        ({"error": {"message": "x" * 500}}, "x" * 197 + "..."),
    ],
)
def test_error_summary_is_one_short_line(payload: Any, expected: str) -> None:
    assert error_summary(payload) == expected


def test_arguments_too_deep_to_write_back_break_the_chunk() -> None:
    arguments: list[object] = []
    for _ in range(100_000):
        arguments = [arguments]
    call = {"index": 0, "function": {"name": "glob", "arguments": arguments}}
    with pytest.raises(BrokenChunk, match="nested too deeply"):
        events_from_chunk(chunk({"tool_calls": [call]}))
