import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.notebook.merges import (
    call_problem,
    merge_by_index,
    merge_by_subscript,
    merge_in_arrival_order,
)
from course_agent.protocol import ToolCallDelta as D

# Two calls from index 1, the second call's head first, arguments alternating (the course's case).
INTERLEAVED = [
    D(2, "call_b", "grep", ""),
    D(1, "call_a", "glob", ""),
    D(1, None, None, '{"pat'),
    D(2, None, None, '{"pattern":"di'),
    D(1, None, None, 'tern":"*.js"}'),
    D(2, None, None, 'vide"}'),
]
SEQUENTIAL = [
    D(0, "call_a", "glob", ""),
    D(0, None, None, '{"pattern":"*.js"}'),
    D(1, "call_b", "grep", ""),
    D(1, None, None, '{"pattern":"divide"}'),
]
GOOD = [("glob", '{"pattern":"*.js"}'), ("grep", '{"pattern":"divide"}')]


def calls(slots):
    return [(slot.get("name", ""), slot.get("args", "")) for slot in slots]


def test_by_index_merges_interleaved_calls_from_index_1():
    merged = merge_by_index(INTERLEAVED)
    assert calls(slot for _, slot in sorted(merged.items())) == GOOD


def test_by_subscript_leaves_a_phantom_call_when_the_index_starts_at_1():
    merged = merge_by_subscript(INTERLEAVED)
    assert calls(merged) == [("", ""), *GOOD]
    assert call_problem(merged[0]) == "no tool name: the gateway rejects the next request"


def test_arrival_order_stitches_interleaved_arguments_together():
    merged = merge_in_arrival_order(INTERLEAVED)
    assert calls(merged) == [("grep", ""), ("glob", '{"pat{"pattern":"ditern":"*.js"}vide"}')]
    assert call_problem(merged[1]).startswith("registry: arguments for glob are not valid JSON")
    # Issue 33: grep's head kept no arguments, which the registry refuses (pattern is required).
    assert (
        call_problem(merged[0]) == "registry: invalid arguments for grep: pattern: Field required"
    )


@pytest.mark.parametrize("merge", [merge_by_subscript, merge_in_arrival_order])
def test_both_wrong_ways_pass_on_a_sequential_stream_from_0(merge):
    assert calls(merge(SEQUENTIAL)) == GOOD  # why the bug survives testing against OpenAI


@pytest.mark.parametrize(
    ("slot", "problem"),
    [
        ({"name": "glob", "args": '{"pattern":"*"}'}, None),
        ({"name": "read_file", "args": '{"path":"a.txt","limit":5}'}, None),
        # no arguments at all means {}, and glob requires a pattern
        (
            {"name": "glob", "args": ""},
            "registry: invalid arguments for glob: pattern: Field required",
        ),
        ({"name": "", "args": "{}"}, "no tool name: the gateway rejects the next request"),
        (
            {"name": "glob", "args": '{"pat'},
            "registry: arguments for glob are not valid JSON (Unter",
        ),
        ({"name": "edit_file", "args": "{}"}, "registry: there is no tool named edit_file. Availa"),
        ({"name": "grep", "args": '{"pattern":"x","limit":"many"}'}, "registry: invalid arguments"),
    ],
)
def test_call_problem_names_what_a_gateway_or_tool_would_reject(slot, problem):
    found = call_problem(slot)
    if problem is None:
        assert found is None
    else:
        assert found.startswith(problem)


@given(st.lists(st.tuples(st.integers(0, 4), st.text(max_size=5)), max_size=30))
def test_by_index_keeps_each_calls_fragments_in_their_order(pieces):
    merged = merge_by_index([D(index, None, None, text) for index, text in pieces])
    assert set(merged) == {index for index, _ in pieces}
    for index, slot in merged.items():
        assert slot["args"] == "".join(text for i, text in pieces if i == index)
