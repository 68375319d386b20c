"""The loop against both models behind one fixture, plus the edges a script cannot reach."""

import json

import pytest
from gateway import Gateway, Received, sse_reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.loop import check_transcript, run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import (
    AgentStopped,
    Finish,
    GatewayError,
    TextDelta,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolStarted,
)
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.registry import default_registry


class ListModel:
    """A model that plays back one prepared list of events per turn (a test double for edges)."""

    label = "list model"

    def __init__(self, *turns):
        self.turns = list(turns)
        self.seen = []

    def stream(self, messages, tools):
        self.seen.append([dict(m) for m in messages])
        for event in self.turns.pop(0):
            if isinstance(event, Exception):
                raise event
            yield event


def scripted_gateway_model(inject):
    """The scripted model's wire text, served over loopback HTTP to the real client."""
    script = ScriptedModel(inject=inject)

    def respond(received: Received):
        chunks = script.chunks(*script.next_step(received.body["messages"]))
        return sse_reply(*[f"data: {json.dumps(c)}\n\n" for c in chunks], "data: [DONE]\n\n")

    return Gateway(respond)


def models(inject):
    """Both models behind one fixture: the scripted one, and the real client talking to it."""

    @pytest.fixture(params=["scripted", "openai-compatible over loopback"])
    def fixture(request):
        if request.param == "scripted":
            yield ScriptedModel(inject=inject)
            return
        with scripted_gateway_model(inject) as gateway:
            yield HttpModel(OPENAI, gateway.url, "sk-test", "scripted")

    return fixture


any_model = models(None)
any_bad_args_model = models("bad_args")


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(build_sandbox(tmp_path))


def names(events, kind=ToolFinished):
    return [e.call.name for e in events if isinstance(e, kind)]


def test_offline_question_runs_glob_grep_read_file_then_concludes(any_model, ctx):
    messages = []
    events = list(run_agent(QUESTION, any_model, default_registry(), ctx, messages=messages))
    assert names(events, ToolStarted) == ["glob", "grep", "read_file"]
    assert names(events) == ["glob", "grep", "read_file"]
    assert events[-1] == AgentStopped("done")
    assert "line 12" in messages[-1]["content"] and "Math.floor" in messages[-1]["content"]
    assert check_transcript(messages) is None
    assert all(e.result.ok for e in events if isinstance(e, ToolFinished))


def test_bad_args_are_fed_back_and_the_run_still_finishes(any_bad_args_model, ctx):
    messages = []
    events = list(
        run_agent(QUESTION, any_bad_args_model, default_registry(), ctx, messages=messages)
    )
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.call.name, e.result.ok) for e in finished] == [
        ("edit_file", False),
        ("read_file", False),
        ("grep", False),
        ("read_file", True),
    ]
    assert finished[0].result.content.startswith("there is no tool named edit_file")
    assert "path" in finished[1].result.content and "offset" in finished[1].result.content
    assert "not valid JSON" in finished[2].result.content
    assert events[-1] == AgentStopped("done")
    assert check_transcript(messages) is None


def test_stop_with_fragments_is_still_a_tool_turn(ctx):
    model = ListModel(
        [ToolCallDelta(3, "c", "glob", '{"pattern": "src/*"}'), Finish("stop")],
        [TextDelta("two files"), Finish("stop")],
    )
    messages = []
    events = list(run_agent("q", model, default_registry(), ctx, messages=messages))
    assert names(events) == ["glob"]
    assert messages[2]["tool_calls"][0]["id"] == "c"  # the assistant carries its call
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "c",
        "content": "src/calc.js\nsrc/invoiceReport.js",
    }
    assert model.seen[1][-1]["role"] == "tool"  # the result was sent back


def test_gateway_error_ends_the_turn_and_keeps_the_transcript_valid(ctx):
    model = ListModel(
        [ToolCallDelta(0, "c", "glob", '{"pattern": "*"}'), Finish("tool_calls")],
        [TextDelta("half"), GatewayError("gateway http://127.0.0.1:1 dropped the connection")],
    )
    messages = []
    events = list(run_agent("q", model, default_registry(), ctx, messages=messages))
    assert events[-1] == AgentStopped("error", "gateway http://127.0.0.1:1 dropped the connection")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert check_transcript(messages) is None


def test_no_question_goes_on_from_the_kept_transcript(ctx):
    model = ListModel(
        [ToolCallDelta(0, "c", "glob", '{"pattern": "*"}'), Finish("tool_calls")],
        [GatewayError("gateway http://127.0.0.1:1 answered HTTP 503")],
        [TextDelta("two files"), Finish("stop")],
        [TextDelta("still two"), Finish("stop")],
    )
    messages = []
    list(run_agent("q", model, default_registry(), ctx, messages=messages))
    events = list(run_agent(None, model, default_registry(), ctx, messages=messages))
    assert events[-1] == AgentStopped("done")
    assert model.seen[2] == model.seen[1]  # the retry resent the kept transcript as it was
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]

    list(run_agent("q", model, default_registry(), ctx, messages=messages))  # a question: asked
    assert [m["role"] for m in messages][-2:] == ["user", "assistant"]


def test_max_turns_stops_with_a_clear_message(ctx):
    turn = [ToolCallDelta(0, None, "glob", '{"pattern": "*"}'), Finish("tool_calls")]
    model = ListModel(*[list(turn) for _ in range(3)])
    events = list(run_agent("q", model, default_registry(), ctx, max_turns=3))
    assert events[-1].reason == "max_turns" and "--max-turns" in events[-1].message
    assert len(names(events)) == 3


def test_closing_the_generator_mid_turn_still_answers_every_call(ctx):
    both = [
        ToolCallDelta(0, "a", "glob", "{}"),
        ToolCallDelta(1, "b", "glob", "{}"),
        Finish("tool_calls"),
    ]
    messages = []
    events = run_agent("q", ListModel(both), default_registry(), ctx, messages=messages)
    for event in events:
        if isinstance(event, ToolStarted):
            break  # a student pressing stop while the first call runs
    events.close()
    assert check_transcript(messages) is None
    assert messages[-1]["content"].startswith("not run")


def test_a_conversation_continues_across_questions(ctx):
    model = ListModel([TextDelta("first"), Finish("stop")], [TextDelta("second"), Finish("stop")])
    messages = []
    list(run_agent("one", model, default_registry(), ctx, messages=messages))
    list(run_agent("two", model, default_registry(), ctx, messages=messages))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert model.seen[1][-1] == {"role": "user", "content": "two"}


def test_an_invalid_transcript_is_never_sent(ctx):
    model = ListModel()
    broken = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
            ],
        }
    ]
    events = list(run_agent("q", model, default_registry(), ctx, messages=broken))
    assert events[-1].reason == "error" and "'x'" in events[-1].message
    assert model.seen == []


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "tool", "tool_call_id": "a", "content": ""}], "answers no pending call"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a"}]}, {"role": "user", "content": ""}],
            "no tool message before the next user",
        ),
        (
            [
                {"role": "assistant", "tool_calls": [{"id": "a"}]},
                {"role": "tool", "tool_call_id": "a", "content": ""},
                {"role": "tool", "tool_call_id": "a", "content": ""},
            ],
            "answers no pending call",
        ),
    ],
)
def test_check_transcript_names_what_is_wrong(messages, problem):
    assert problem in check_transcript(messages)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=st.lists(
        st.tuples(
            st.none() | st.sampled_from(["a", "b", ""]),  # ids missing, empty or repeated
            st.sampled_from(["glob", "grep", "read_file"]) | st.text(max_size=10),
            st.text(max_size=30) | st.sampled_from(['{"pattern": "**"}', '{"path": "x"}', ""]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_calls_get_exactly_one_result_each_in_order(ctx, calls):
    turn = [ToolCallDelta(n, call_id, name, args) for n, (call_id, name, args) in enumerate(calls)]
    model = ListModel([*turn, Finish("tool_calls")], [TextDelta("done"), Finish("stop")])
    messages = []
    events = list(run_agent("q", model, default_registry(), ctx, messages=messages))

    assert events[-1] == AgentStopped("done")
    ids = [call_id or f"call_{n}" for n, (call_id, _, _) in enumerate(calls)]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ids
    assert [e.call.id for e in events if isinstance(e, ToolFinished)] == ids
    assert check_transcript(messages) is None
    assert model.seen[1] == messages[:-1]  # all of it went back to the model
