import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from gateway import STREAMS
from hypothesis import given
from hypothesis import strategies as st

from course_agent.accumulator import ToolCallAccumulator
from course_agent.loop import run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel, Step
from course_agent.protocol import (
    AgentEvent,
    AgentStopped,
    Finish,
    GatewayError,
    ModelEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolStarted,
)
from course_agent.providers.anthropic_events import events_from_event, events_from_lines
from course_agent.registry import default_registry


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def stop_reason(reason: str) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None}}


def sse(*payloads: dict[str, Any], named: bool = True) -> list[str]:
    """Payloads as SSE lines, each under its own `event:` name (or none, as Vercel replays)."""
    text = "".join(
        (f"event: {p['type']}\n" if named else "") + f"data: {json.dumps(p)}\n\n" for p in payloads
    )
    return text.splitlines(keepends=True)


# -- one event -> events -------------------------------------------------------------------------

TOOL_USE = {"type": "tool_use", "id": "toolu_a", "name": "glob", "input": {}}

ONE_EVENT = {
    "tool_use start opens a call": (start(1, TOOL_USE), [ToolCallDelta(1, "toolu_a", "glob")]),
    "input_json_delta adds to it": (
        delta(1, {"type": "input_json_delta", "partial_json": '{"pat'}),
        [ToolCallDelta(1, args_delta='{"pat')],
    ),
    "empty first fragment": (
        delta(1, {"type": "input_json_delta", "partial_json": ""}),
        [ToolCallDelta(1, args_delta=None)],
    ),
    "text_delta": (delta(0, {"type": "text_delta", "text": "I'll"}), [TextDelta("I'll")]),
    "empty text start": (start(0, {"type": "text", "text": ""}), []),
    "thinking is not the answer": (delta(0, {"type": "thinking_delta", "thinking": "hm"}), []),
    "thinking start": (start(0, {"type": "thinking", "thinking": ""}), []),
    "content_block_stop": ({"type": "content_block_stop", "index": 1}, []),
    "ping": ({"type": "ping"}, []),
    "message_start": ({"type": "message_start", "message": {"content": []}}, []),
    "message_stop": ({"type": "message_stop"}, []),
    "message_delta without a reason": ({"type": "message_delta", "delta": {}}, []),
    "an event type from the future": ({"type": "content_block_glow", "index": 0}, []),
}


@pytest.mark.parametrize(("payload", "expected"), ONE_EVENT.values(), ids=ONE_EVENT.keys())
def test_one_event(payload: dict[str, Any], expected: list[ModelEvent]) -> None:
    assert events_from_event(payload) == expected


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("tool_use", "tool_calls"),
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("stop_sequence", "stop"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),  # unknown to the loop: passed on as Anthropic said it
    ],
)
def test_stop_reason_becomes_the_loops_finish(reason: str, finish: str) -> None:
    assert events_from_event(stop_reason(reason)) == [Finish(finish)]


# -- a body -> events ------------------------------------------------------------------------------


def test_pings_anywhere_and_the_same_without_event_names() -> None:
    payloads = [
        {"type": "ping"},
        start(0, TOOL_USE),
        {"type": "ping"},
        delta(0, {"type": "input_json_delta", "partial_json": '{"pattern": "*"}'}),
        {"type": "ping"},
        {"type": "content_block_stop", "index": 0},
        stop_reason("tool_use"),
        {"type": "ping"},
        {"type": "message_stop"},
    ]
    expected = [
        ToolCallDelta(0, "toolu_a", "glob"),
        ToolCallDelta(0, args_delta='{"pattern": "*"}'),
        Finish("tool_calls"),
    ]
    assert list(events_from_lines(sse(*payloads), "gw")) == expected
    assert list(events_from_lines(sse(*payloads, named=False), "gw")) == expected


def test_reading_stops_at_message_stop() -> None:
    # Vercel's harness appends "data: [DONE]", which is not JSON: it is never read.
    lines = [*sse(stop_reason("end_turn"), {"type": "message_stop"}), "data: [DONE]\n", "\n"]
    assert list(events_from_lines(lines, "gw")) == [Finish("stop")]


def test_every_recorded_event_is_parsed() -> None:
    # The truncated recording pads its data lines after the JSON object: still one object each.
    text = (STREAMS / "anthropic-sdk-python_messages_tool_use_truncated_max_tokens.sse").read_text()
    events = list(events_from_lines(text.splitlines(keepends=True), "gw"))
    assert events[-1] == Finish("length")
    assert sum(isinstance(e, ToolCallDelta) for e in events) == 5  # start + 4 fragments, no stop


FAULTS = {
    "event: error": (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n',
        "reported an error mid-stream: overloaded_error: Overloaded",
    ),
    "error type without the event name": (
        'data: {"type": "error", "error": {"type": "api_error", "message": "boom"}}\n\n',
        "api_error: boom",
    ),
    "event: error with plain text": (
        "event: error\ndata: Overloaded\n\n",
        "mid-stream: Overloaded",
    ),
    "not JSON": ('event: ping\ndata: {"type": \n\n', "where an event object belongs"),
    "JSON but not an object": ("data: [1, 2]\n\n", "'[1, 2]' where an event object belongs"),
    "ends before any stop reason": (
        'data: {"type": "content_block_delta", "index": 0, '
        '"delta": {"type": "text_delta", "text": "a"}}\n\n',
        "closed the stream before the answer was complete",
    ),
}


@pytest.mark.parametrize(("body", "cause"), FAULTS.values(), ids=FAULTS.keys())
def test_fault_is_a_gateway_error_naming_the_gateway(body: str, cause: str) -> None:
    with pytest.raises(GatewayError) as caught:
        list(events_from_lines(body.splitlines(keepends=True), "https://gw.example"))
    assert cause in str(caught.value)
    assert "https://gw.example" in str(caught.value)


def test_events_before_an_error_are_yielded_first() -> None:
    lines = sse(delta(0, {"type": "text_delta", "text": "Hi"}), {"type": "error", "error": {}})
    events: list[ModelEvent] = []
    with pytest.raises(GatewayError):
        events.extend(events_from_lines(lines, "gw"))
    assert events == [TextDelta("Hi")]


# -- the invariant: whatever the cuts and pings, each tool_use block merges back whole ----------

arguments = st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=12), max_size=3)


@given(
    text=st.text(max_size=20),
    calls=st.lists(
        st.tuples(st.from_regex(r"[a-z_]{1,10}", fullmatch=True), arguments), max_size=3
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6),
    pings=st.booleans(),
)
def test_fragments_merge_back_to_each_block(
    text: str, calls: list[tuple[str, dict[str, str]]], cuts: list[int], pings: bool
) -> None:
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if text:
        blocks.append(({"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]))
    expected = []
    for number, (name, args) in enumerate(calls):
        raw = json.dumps(args)
        points = sorted({min(cut, len(raw)) for cut in cuts} | {0, len(raw)})
        pieces = [raw[a:b] for a, b in pairwise(points)]
        block = {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": {}}
        blocks.append((block, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
        expected.append(ToolCall(f"toolu_{number}", name, raw))

    payloads: list[dict[str, Any]] = []
    for index, (block, deltas) in enumerate(blocks):
        payloads.append(start(index, block))
        for body in deltas:
            payloads += [delta(index, body)] + ([{"type": "ping"}] if pings else [])
        payloads.append({"type": "content_block_stop", "index": index})
    payloads += [stop_reason("tool_use" if calls else "end_turn"), {"type": "message_stop"}]

    merger, said = ToolCallAccumulator(), []
    for event in events_from_lines(sse(*payloads), "gw"):
        if isinstance(event, ToolCallDelta):
            merger.push(event)
        elif isinstance(event, TextDelta):
            said.append(event.text)
    assert merger.drain() == expected
    assert "".join(said) == text
    # The first call's index is the number of blocks before it: 1 after text, 0 without.
    assert min(merger.by_index, default=None) == (None if not calls else int(bool(text)))


# -- the scripted model's Anthropic wire goes through this parser ---------------------------------


def test_scripted_text_block_is_index_0_and_tool_use_blocks_follow() -> None:
    step = Step("Let me look.", [("glob", '{"pattern":"**/*.js"}'), ("grep", '{"pattern":"x"}')])
    events = ScriptedModel(wire="anthropic").anthropic_events(step, turn=1)
    starts = [(e["index"], e["content_block"]["type"]) for e in events if "content_block" in e]
    assert starts == [(0, "text"), (1, "tool_use"), (2, "tool_use")]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    # Without text, the first tool_use is block 0: the index depends on what came before.
    events = ScriptedModel(wire="anthropic").anthropic_events(Step(calls=step.calls), turn=1)
    assert [e["index"] for e in events if "content_block" in e] == [0, 1]


def seen(event: AgentEvent) -> tuple[Any, ...]:
    """What people see of an event, minus the call ids (call_1_1 on one wire, toolu_1_1 on the
    other)."""
    if isinstance(event, (ToolStarted, ToolFinished)):
        result = event.result.content if isinstance(event, ToolFinished) else None
        return type(event).__name__, event.call.name, event.call.args, result
    return (event,)


@pytest.mark.parametrize("inject", [None, "bad_args"])
def test_scripted_wires_run_the_same_session(inject: str | None, tmp_path: Path) -> None:
    ctx = ToolContext(build_sandbox(tmp_path))
    runs = {
        wire: list(run_agent(QUESTION, ScriptedModel(inject, wire), default_registry(), ctx))
        for wire in ("openai", "anthropic")
    }
    assert [seen(e) for e in runs["openai"]] == [seen(e) for e in runs["anthropic"]]
    assert runs["anthropic"][-1] == AgentStopped("done")
    assert {e.call.id[:6] for e in runs["anthropic"] if isinstance(e, ToolStarted)} == {"toolu_"}
