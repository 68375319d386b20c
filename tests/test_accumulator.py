import json
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import course_agent.accumulator as accumulator_module
from course_agent.accumulator import ToolCallAccumulator
from course_agent.protocol import ToolCall, ToolCallDelta
from course_agent.providers.call_slots import CallSlots
from course_agent.providers.gateway.sse import split_lines
from course_agent.providers.openai_chunks import events_from_chunk, events_from_lines


def merge(*deltas: ToolCallDelta) -> list[ToolCall]:
    """Merge as the provider edge and the accumulator do together: a fragment sent without an
    index (Mistral's, written here as index=None) gets its slot from CallSlots, as the wire parser
    gives it, and the accumulator merges by index alone."""
    slots, accumulator = CallSlots(), ToolCallAccumulator()
    for delta in deltas:
        accumulator.push(replace(delta, index=slots.place(delta.index, delta.id)))
    return accumulator.drain()


def test_nothing_pushed_drains_nothing() -> None:
    assert ToolCallAccumulator().drain() == []


def test_course_example_merges_one_call() -> None:
    assert merge(
        ToolCallDelta(1, "call_abc", "glob", ""),
        ToolCallDelta(1, args_delta='{"pat'),
        ToolCallDelta(1, args_delta='tern":"**/'),
        ToolCallDelta(1, args_delta='*.js"}'),
    ) == [ToolCall("call_abc", "glob", '{"pattern":"**/*.js"}')]


def test_index_starting_at_one_interleaved_merges_into_two_calls() -> None:
    # The course's acceptance case: the second call's head arrives first, then fragments alternate.
    assert merge(
        ToolCallDelta(2, "call_b", "grep", ""),
        ToolCallDelta(1, "call_a", "glob", ""),
        ToolCallDelta(2, args_delta='{"pattern"'),
        ToolCallDelta(1, args_delta='{"pattern"'),
        ToolCallDelta(2, args_delta=':"div"}'),
        ToolCallDelta(1, args_delta=':"*.js"}'),
    ) == [
        ToolCall("call_a", "glob", '{"pattern":"*.js"}'),
        ToolCall("call_b", "grep", '{"pattern":"div"}'),
    ]


def test_gaps_and_large_indexes_drain_in_index_order() -> None:
    assert merge(
        ToolCallDelta(40, "c", "third", "{}"),
        ToolCallDelta(7, "a", "first", "{}"),
        ToolCallDelta(12, "b", "second", "{}"),
    ) == [ToolCall("a", "first", "{}"), ToolCall("b", "second", "{}"), ToolCall("c", "third", "{}")]


def test_empty_string_never_wipes_id_or_name() -> None:
    # Qwen sends "id": "" on continuations, GLM sends "name": "".
    assert merge(
        ToolCallDelta(0, "call_q", "weather", ""),
        ToolCallDelta(0, "", "", '{"location": '),
        ToolCallDelta(0, "", None, '"Paris"}'),
    ) == [ToolCall("call_q", "weather", '{"location": "Paris"}')]


def test_repeated_name_and_id_are_not_concatenated() -> None:
    assert merge(
        ToolCallDelta(0, "call_r", "read_file", '{"pa'),
        ToolCallDelta(0, "call_r", "read_file", 'th": "a"}'),
    ) == [ToolCall("call_r", "read_file", '{"path": "a"}')]


def test_fallback_id_uses_the_index() -> None:
    assert merge(ToolCallDelta(3, None, "glob", "{}"), ToolCallDelta(5, "", "grep", "{}")) == [
        ToolCall("call_3", "glob", "{}"),
        ToolCall("call_5", "grep", "{}"),
    ]


def test_name_may_be_missing_and_args_may_stay_empty() -> None:
    assert merge(ToolCallDelta(0, "x")) == [ToolCall("x", "", "")]


def test_drain_does_not_reset() -> None:
    accumulator = ToolCallAccumulator()
    accumulator.push(ToolCallDelta(0, "x", "glob", "{}"))
    assert accumulator.drain() == accumulator.drain() == [ToolCall("x", "glob", "{}")]


# -- arguments as the wire sends them, through the chunk parser --------------------------------


def via_chunks(*entries: dict[str, Any]) -> list[ToolCall]:
    accumulator = ToolCallAccumulator()
    for entry in entries:
        for event in events_from_chunk(
            {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}
        ):
            assert isinstance(event, ToolCallDelta)
            accumulator.push(event)
    return accumulator.drain()


def test_args_null_then_text() -> None:
    assert via_chunks(
        {"index": 0, "id": "a", "function": {"name": "glob", "arguments": None}},
        {"index": 0, "function": {"arguments": '{"pattern": "*"}'}},
    ) == [ToolCall("a", "glob", '{"pattern": "*"}')]


def test_args_whole_in_one_fragment() -> None:
    assert via_chunks(
        {"index": 0, "id": "a", "function": {"name": "glob", "arguments": '{"pattern": "*"}'}},
    ) == [ToolCall("a", "glob", '{"pattern": "*"}')]


def test_args_as_a_parsed_object() -> None:
    [call] = via_chunks(
        {"index": 0, "id": "a", "function": {"name": "glob", "arguments": {"pattern": "*é"}}},
    )
    assert json.loads(call.args) == {"pattern": "*é"}


# -- no index at all (Mistral): providers/call_slots.py places them at the wire --------------------


def test_missing_index_single_call() -> None:
    assert merge(ToolCallDelta(None, "gSIMJiOkT", "weather", '{"location": "SF"}')) == [
        ToolCall("gSIMJiOkT", "weather", '{"location": "SF"}')
    ]


def test_missing_index_new_id_opens_a_call_and_no_id_continues_the_last() -> None:
    assert merge(
        ToolCallDelta(None, "a", "glob", '{"pattern"'),
        ToolCallDelta(None, None, None, ': "*"}'),
        ToolCallDelta(None, "b", "grep", '{"pattern"'),
        ToolCallDelta(None, "", None, ': "x"}'),
    ) == [ToolCall("a", "glob", '{"pattern": "*"}'), ToolCall("b", "grep", '{"pattern": "x"}')]


def test_missing_index_known_id_goes_back_to_its_call() -> None:
    assert merge(
        ToolCallDelta(None, "a", "glob", "{"),
        ToolCallDelta(None, "b", "grep", "["),
        ToolCallDelta(None, "a", None, "}"),
        ToolCallDelta(None, "b", None, "]"),
    ) == [ToolCall("a", "glob", "{}"), ToolCall("b", "grep", "[]")]


def test_missing_index_opens_after_the_highest_index() -> None:
    assert merge(
        ToolCallDelta(4, "a", "glob", "{}"),
        ToolCallDelta(None, "b", "grep", "{}"),
    ) == [ToolCall("a", "glob", "{}"), ToolCall("b", "grep", "{}")]


def test_missing_index_and_id_from_the_start_is_call_zero() -> None:
    assert merge(ToolCallDelta(None, None, "glob", "{"), ToolCallDelta(None, None, None, "}")) == [
        ToolCall("call_0", "glob", "{}")
    ]


# -- the property: any calls, cut anywhere, any index offset, any interleaving -----------------

# Quotes, backslashes, control and multi-byte characters are where naive merging breaks.
tricky_text = st.text(alphabet=st.sampled_from('ab "\\/\n\t{}[]:,é中😀\u2028') | st.characters())
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def call_specs(
    draw: st.DrawFn, ids: st.SearchStrategy[str | None]
) -> list[tuple[str | None, str, str]]:
    """Calls as (id or None, name, arguments as JSON text); ids that are present are unique."""
    count = draw(st.integers(1, 4))
    names = draw(st.lists(st.text(min_size=1, max_size=12), min_size=count, max_size=count))
    call_ids = draw(
        st.lists(ids, min_size=count, max_size=count, unique_by=lambda i: i or object())
    )
    return [
        (call_id, name, json.dumps(draw(json_values), ensure_ascii=draw(st.booleans())))
        for call_id, name in zip(call_ids, names, strict=True)
    ]


@st.composite
def fragments_of(
    draw: st.DrawFn, index: int | None, call_id: str | None, name: str, args: str
) -> list[ToolCallDelta]:
    """One call as the wire cuts it: the head carries id and name; later fragments carry nothing,
    an empty string, or the same value again; the arguments are cut at arbitrary points."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(args) - 1)), max_size=8)))
    pieces = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
    if draw(st.booleans()):
        pieces.insert(0, "")  # OpenAI's head fragment carries "arguments": ""
    repeat_id = draw(st.sampled_from([None, "", call_id]))
    repeat_name = draw(st.sampled_from([None, "", name]))
    head = ToolCallDelta(index, call_id, name, pieces[0])
    return [head] + [ToolCallDelta(index, repeat_id, repeat_name, p) for p in pieces[1:]]


@st.composite
def interleaved(draw: st.DrawFn, per_call: list[list[ToolCallDelta]]) -> list[ToolCallDelta]:
    """A random merge of the calls' fragment lists that keeps each call's own order."""
    owners = draw(st.permutations([n for n, frags in enumerate(per_call) for _ in frags]))
    queues = [list(frags) for frags in per_call]
    return [queues[n].pop(0) for n in owners]


@given(data=st.data())
def test_any_split_any_offset_any_interleaving_drains_the_same_calls(data: st.DataObject) -> None:
    specs = data.draw(call_specs(st.none() | st.text(min_size=1, max_size=10)))
    # Indexes start anywhere and may skip: a start, then strictly increasing by 1 + a gap.
    start = data.draw(st.sampled_from([0, 1]) | st.integers(0, 10**6))
    gaps = data.draw(st.lists(st.integers(0, 3), min_size=len(specs), max_size=len(specs)))
    indexes = [start + n + sum(gaps[: n + 1]) for n in range(len(specs))]
    per_call = [
        data.draw(fragments_of(index, call_id, name, args))
        for index, (call_id, name, args) in zip(indexes, specs, strict=True)
    ]
    arrival = data.draw(interleaved(per_call))

    expected = [
        ToolCall(call_id or f"call_{index}", name, args)
        for index, (call_id, name, args) in zip(indexes, specs, strict=True)
    ]
    assert merge(*arrival) == expected


@given(data=st.data())
def test_without_index_calls_are_told_apart_by_id(data: st.DataObject) -> None:
    specs = data.draw(call_specs(st.text(min_size=1, max_size=10)))  # every call has an id
    per_call = [data.draw(fragments_of(None, call_id, name, args)) for call_id, name, args in specs]
    if data.draw(st.booleans()):
        # Fragments that repeat their id may interleave; the others must come one call at a time.
        per_call = [[replace(f, id=frags[0].id) for f in frags] for frags in per_call]
        arrival = data.draw(interleaved(per_call))
    else:
        arrival = [fragment for frags in per_call for fragment in frags]

    # Without an index the only order is the order in which the calls' heads arrived.
    heads = list(dict.fromkeys(fragment.id for fragment in arrival if fragment.id))
    by_id = {call_id: ToolCall(call_id, name, args) for call_id, name, args in specs}
    assert merge(*arrival) == [by_id[call_id] for call_id in heads]


@given(data=st.data())
def test_continuations_may_drop_the_index(data: st.DataObject) -> None:
    """Heads carry an index; later fragments may leave it out. A fragment with neither index nor
    id continues the call being written, so only calls whose continuations repeat their id may
    interleave; the others arrive one call at a time, in any order of calls."""
    specs = data.draw(call_specs(st.none() | st.text(min_size=1, max_size=10)))
    start = data.draw(st.integers(0, 5))
    per_call = []
    for n, (call_id, name, args) in enumerate(specs):
        fragments = data.draw(fragments_of(start + 2 * n, call_id, name, args))
        if data.draw(st.booleans()):
            fragments = fragments[:1] + [replace(f, index=None) for f in fragments[1:]]
        per_call.append(fragments)
    # A continuation that names neither its index nor its id can only follow its own head.
    anonymous = any(f.index is None and not f.id for frags in per_call for f in frags)
    if anonymous:
        order = data.draw(st.permutations(range(len(per_call))))
        arrival = [fragment for n in order for fragment in per_call[n]]
    else:
        arrival = data.draw(interleaved(per_call))

    expected = [
        ToolCall(call_id or f"call_{start + 2 * n}", name, args)
        for n, (call_id, name, args) in enumerate(specs)
    ]
    assert merge(*arrival) == expected


def wire_entry(draw: st.DrawFn, delta: ToolCallDelta) -> dict[str, Any]:
    """One `tool_calls` entry as a gateway writes it: a missing value is a key left out or null."""
    entry: dict[str, Any] = {}
    function: dict[str, Any] = {}
    for target, key, value in [
        (entry, "index", delta.index),
        (entry, "id", delta.id),
        (function, "name", delta.name),
        (function, "arguments", delta.args_delta),
    ]:
        if value is not None or draw(st.booleans()):
            target[key] = value
    if function or draw(st.booleans()):
        entry["function"] = function
    return entry


@given(data=st.data())
def test_the_same_holds_through_chunk_json_and_sse(data: st.DataObject) -> None:
    """The first property end to end: fragments as chunk JSON on an SSE body, several entries to a
    chunk or one, keys left out or null, cut into lines and parsed as every gateway's body is."""
    specs = data.draw(call_specs(st.none() | st.text(min_size=1, max_size=10)))
    start = data.draw(st.integers(0, 3))
    indexed = data.draw(st.booleans())  # without indexes (Mistral), every head has an id
    if not indexed:
        specs = [(call_id or f"id{n}", name, args) for n, (call_id, name, args) in enumerate(specs)]
    per_call = [
        data.draw(fragments_of(start + n if indexed else None, call_id, name, args))
        for n, (call_id, name, args) in enumerate(specs)
    ]
    if indexed:
        arrival = data.draw(interleaved(per_call))
    else:
        arrival = [fragment for frags in per_call for fragment in frags]

    body = []
    while arrival:
        size = data.draw(st.integers(1, 3))
        entries = [wire_entry(data.draw, delta) for delta in arrival[:size]]
        arrival = arrival[size:]
        chunk = {"choices": [{"index": 0, "delta": {"tool_calls": entries}}]}
        body.append(f"data: {json.dumps(chunk, ensure_ascii=data.draw(st.booleans()))}\n\n")
    body.append('data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}\n\n')
    body.append("data: [DONE]\n\n")
    text = "".join(body)  # then cut anywhere, as the network delivers it
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    lines = split_lines(text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True))

    accumulator = ToolCallAccumulator()
    for event in events_from_lines(lines, "http://gateway.test/v1"):
        if isinstance(event, ToolCallDelta):
            accumulator.push(event)
    expected = [
        ToolCall(call_id or f"call_{start + n}", name, args)
        for n, (call_id, name, args) in enumerate(specs)
    ]
    assert accumulator.drain() == expected


def test_push_builds_one_partial_call_per_call_not_per_fragment(monkeypatch) -> None:
    built = []

    class Counted(accumulator_module.PartialCall):
        def __init__(self, *args, **kwargs) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(accumulator_module, "PartialCall", Counted)
    merger = ToolCallAccumulator()
    merger.push(ToolCallDelta(0, "a", "glob"))
    for _ in range(100):
        merger.push(ToolCallDelta(0, args_delta="x"))
    merger.push(ToolCallDelta(0, args_delta="y"))
    assert len(built) == 1
    assert merger.drain()[0].args == "x" * 100 + "y"
