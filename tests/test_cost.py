from hypothesis import given
from hypothesis import strategies as st

from course_agent.loop import run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolContext
from course_agent.registry import default_registry
from course_agent.render.cost import KINDS, cost_lines, message_chars, request_costs

SYSTEM = {"role": "system", "content": "be brief"}  # 8 chars
USER = {"role": "user", "content": "why red?"}  # 8 chars
CALLING = {
    "role": "assistant",
    "content": "Reading.",  # 8 chars
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": '{"p":1}'}}
    ],  # 4 + 7 chars
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "x" * 100}
ANSWER = {"role": "assistant", "content": "Because."}


def test_an_assistant_message_counts_its_text_and_its_calls():
    assert message_chars(CALLING) == 8 + 4 + 7
    assert message_chars({"role": "assistant", "content": None}) == 0


def test_request_k_carries_every_message_before_the_kth_answer():
    costs = request_costs([SYSTEM, USER, CALLING, RESULT, ANSWER])
    assert [cost.number for cost in costs] == [1, 2]
    assert dict(costs[0].chars) == {"system": 8, "user": 8, "assistant": 0, "tool": 0}
    assert dict(costs[1].chars) == {"system": 8, "user": 8, "assistant": 19, "tool": 100}
    assert costs[1].total == 135


def test_a_question_without_an_answer_yet_is_no_request():
    assert request_costs([SYSTEM, USER]) == []
    assert cost_lines([]) == ["no model request yet"]


def test_the_offline_run_pays_each_tool_result_once_per_later_request(tmp_path):
    messages: list[dict] = []
    events = run_agent(
        QUESTION,
        ScriptedModel(),
        default_registry(),
        ToolContext(build_sandbox(tmp_path)),
        messages=messages,
    )
    list(events)
    results = [len(m["content"]) for m in messages if m["role"] == "tool"]  # glob, grep, read_file
    costs = request_costs(messages)
    assert [cost.chars["tool"] for cost in costs] == [0, results[0] + results[1], sum(results)]
    assert all(cost.chars["system"] == len(messages[0]["content"]) for cost in costs)


def test_cost_lines_are_a_table_then_the_total():
    lines = cost_lines(request_costs([SYSTEM, USER, CALLING, RESULT, ANSWER]))
    assert lines[0].split() == ["request", "system", "user", "assistant", "tool", "total"]
    assert lines[2].split() == ["2", "8", "8", "19", "100", "135"]
    assert lines[-1] == "2 requests re-sent 151 characters in all; the last one alone carried 135"
    assert len({len(line) for line in lines[:-1]}) == 1  # the columns line up


messages_strategy = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(KINDS), "content": st.text(max_size=30) | st.none()}
    ),
    max_size=30,
)


@given(messages_strategy)
def test_every_message_is_paid_once_per_later_request(messages):
    costs = request_costs(messages)
    answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    expected = sum(
        message_chars(m) * sum(1 for a in answers if a > i) for i, m in enumerate(messages)
    )
    assert sum(cost.total for cost in costs) == expected
    assert len(costs) == len(answers)
    assert [cost.total for cost in costs] == sorted(cost.total for cost in costs)
