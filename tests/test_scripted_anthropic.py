"""The scripted Anthropic events: the fields the API always sends, and the calls they carry."""

from __future__ import annotations

import functools
import json
from typing import Any

import pydantic
from hypothesis import given
from hypothesis import strategies as st
from turns import merged

from course_agent.offline.scripted_anthropic import message_events
from course_agent.providers.anthropic_events import events_from_event


@functools.cache
def sdk_event() -> pydantic.TypeAdapter[Any]:
    """The official SDK's own event type; imported here, as every xdist worker collects this
    module but one runs it (the SDK takes 2.5 s to import)."""
    from anthropic.types import RawMessageStreamEvent

    return pydantic.TypeAdapter(RawMessageStreamEvent)


words = st.lists(st.text(min_size=1, max_size=8), max_size=5)
calls = st.lists(
    st.tuples(
        st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
        st.lists(st.text(max_size=6), min_size=1, max_size=6),
    ),
    max_size=3,
)


def test_message_start_carries_what_the_api_sends():
    start = message_events("msg_1", ["Hi"], [], "end_turn", input_tokens=42)[0]
    assert start == {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 42, "output_tokens": 1},
        },
    }


def test_message_delta_counts_one_output_token_per_delta():
    events = message_events("msg_1", ["a ", "b"], [("toolu_1", "glob", ["{", "}"])], "tool_use", 9)
    delta = events[-2]
    assert delta["type"] == "message_delta" and events[-1] == {"type": "message_stop"}
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"] == {"output_tokens": 2 + 3}  # two words; "", "{" and "}"


@given(words, calls)
def test_every_event_validates_and_the_calls_merge_back(text, pieces):
    named = [(f"toolu_{n}", name, parts) for n, (name, parts) in enumerate(pieces)]
    events = message_events("msg_1", text, named, "tool_use", 1)
    for event in events:
        if event["type"] != "ping":  # the SDK skips pings before it parses events
            sdk_event().validate_python(event)
    # Through the wire and back: course_agent's parser and accumulator recover text and calls.
    turn = merged([e for event in events for e in events_from_event(json.loads(json.dumps(event)))])
    assert turn.text == "".join(text)
    assert [(c.id, c.name, c.args) for c in turn.calls] == [
        (call_id, name, "".join(parts)) for call_id, name, parts in named
    ]
    # Blocks are numbered in order: the text (if any) is block 0, then one block per call.
    starts = [e["index"] for e in events if e["type"] == "content_block_start"]
    assert starts == list(range(int(bool(text)) + len(named)))
