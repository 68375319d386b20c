"""Each channel out (text, call fragments, merged calls, tool results, stop messages) leaves with
every known key cut, however the key was split across the pieces of its channel."""

import itertools
import json

from gateway import Gateway, Reply
from hypothesis import given
from hypothesis import strategies as st

from course_agent.accumulator import ToolCallAccumulator
from course_agent.app.channels import (
    RedactingAccumulator,
    RedactingModel,
    RedactingRegistry,
    redacted_events,
    shown_events,
)
from course_agent.protocol import (
    AgentStopped,
    Finish,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolResult,
)
from course_agent.safety import redaction

KEY = "sk-test-CHANNELS-0123456789-never-shown"
DISTINCT = "CHANNELS-0123456789"  # the part no output may hold


class _Tools:
    """A registry whose one tool returns whatever text it was built with, key and all."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.tools = {"leak": None}

    def list(self) -> list:
        return []

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return ToolResult(self.content, meta={"lines": [self.content], "path": self.content})


def test_a_tool_result_leaves_the_registry_with_the_key_cut(tmp_path):
    redaction.remember_secrets([KEY])
    registry = RedactingRegistry(_Tools(f"line 1: token={KEY}\n"))
    result = registry.execute(ToolCall("c1", "leak", "{}"), ToolContext(root=tmp_path))
    assert result.content == "line 1: token=[redacted]\n"
    assert DISTINCT not in json.dumps(result.meta)


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_a_key_split_anywhere_in_the_text_is_cut_whole(cuts):
    redaction.remember_secrets([KEY])
    text = f"the key is {KEY}, as you asked"
    events = [TextDelta(piece) for piece in _pieces(text, cuts)] + [Finish("stop")]
    shown = list(redacted_events(events))
    joined = "".join(e.text for e in shown if isinstance(e, TextDelta))
    assert joined == "the key is [redacted], as you asked"
    assert isinstance(shown[-1], Finish)


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_a_key_split_anywhere_in_a_calls_arguments_is_cut_in_fragments_and_merged(cuts):
    redaction.remember_secrets([KEY])
    args = json.dumps({"pattern": KEY})
    deltas = [ToolCallDelta(0, "c1", "grep", None)]
    deltas += [ToolCallDelta(0, args_delta=piece) for piece in _pieces(args, cuts)]
    shown = list(redacted_events(deltas))
    fragments = "".join(e.args_delta or "" for e in shown if isinstance(e, ToolCallDelta))
    assert json.loads(fragments) == {"pattern": "[redacted]"}
    merger = RedactingAccumulator(ToolCallAccumulator())
    for delta in deltas:  # raw fragments, joined by the merger: the merged call is cut whole
        merger.push(delta)
    assert json.loads(merger.drain()[0].args) == {"pattern": "[redacted]"}


def test_a_stop_message_and_a_finished_call_leave_cut(tmp_path):
    redaction.remember_secrets([KEY])
    call = ToolCall("c1", "grep", json.dumps({"pattern": KEY}))
    events = [ToolFinished(call, ToolResult(KEY)), AgentStopped("error", f"gateway said {KEY}")]
    shown = repr(list(shown_events(events)))
    assert DISTINCT not in shown and "[redacted]" in shown


def test_the_model_wrapper_keeps_the_inner_models_attributes():
    class Inner:
        label = f"model via http://x/{KEY}"
        ends_at = 12.0

        def stream(self, messages, tools):
            yield TextDelta(KEY)

    redaction.remember_secrets([KEY])
    model = RedactingModel(Inner())
    assert model.ends_at == 12.0 and DISTINCT not in model.label
    assert "".join(e.text for e in model.stream([], [])) == "[redacted]"


def test_the_cli_sends_and_shows_a_read_file_result_with_the_key_cut(cli, tmp_path):
    (tmp_path / "notes.txt").write_text(f"deploy token: {KEY}\n")
    call = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": ""}}
    call["function"]["arguments"] = json.dumps({"path": "notes.txt"})
    first = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    second = [
        {"choices": [{"index": 0, "delta": {"content": "read it"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    replies = [
        Reply(parts=[f"data: {json.dumps(chunk)}\n\n".encode() for chunk in turn])
        for turn in (first, second)
    ]
    with Gateway() as gateway:
        gateway.queue(*replies)
        done = cli("--base-url", gateway.url, "read notes", env={"OPENAI_API_KEY": KEY})
        sent = json.dumps([request.body for request in gateway.requests])
    assert done.returncode == 0, done.stderr
    assert DISTINCT not in done.stdout + done.stderr
    assert DISTINCT not in sent and "[redacted]" in sent  # the tool message sent back is cut
