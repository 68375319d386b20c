"""CallSlots: a fragment without an index gets one at the provider edge, so the accumulator's
index stays the course's `int`."""

from course_agent.protocol import ToolCallDelta
from course_agent.providers.call_slots import CallSlots
from course_agent.providers.gateway.sse import split_lines
from course_agent.providers.openai_chunks import events_from_lines


def test_a_given_index_is_kept_as_it_is() -> None:
    slots = CallSlots()
    assert [slots.place(3, "a"), slots.place(1, None), slots.place(3, None)] == [3, 1, 3]


def test_a_new_id_opens_the_next_slot_and_a_known_one_goes_back() -> None:
    slots = CallSlots()
    assert slots.place(None, "a") == 0
    assert slots.place(None, None) == 0  # no index, no id: the call being written
    assert slots.place(None, "b") == 1
    assert slots.place(None, "a") == 0
    assert slots.place(4, "c") == 4
    assert slots.place(None, "d") == 5  # after the highest slot seen


def test_the_wire_parser_gives_mistral_fragments_an_index() -> None:
    body = (
        'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "x", "function": '
        '{"name": "weather", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}\n\n'
        "data: [DONE]\n\n"
    )
    events = list(events_from_lines(split_lines([body]), "gateway"))
    assert events[0] == ToolCallDelta(0, "x", "weather", "{}")
    assert all(type(e.index) is int for e in events if isinstance(e, ToolCallDelta))
