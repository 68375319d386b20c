"""The guard around the loop: hostile calls, 32 calls a turn, parts that raise, a deadline."""

import json
import time
from pathlib import Path

import pytest
from gateway import Reply, sse_reply
from pydantic import BaseModel

from course_agent.app.guard import (
    GuardedRegistry,
    RunDeadline,
    run_guarded,
)
from course_agent.argument_caps import MAX_ARGUMENTS_CHARS
from course_agent.loop import MAX_CALLS, check_transcript
from course_agent.offline.repository import build_sandbox
from course_agent.protocol import (
    AgentStopped,
    Finish,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolDef,
    ToolFinished,
    ToolResult,
    ToolStarted,
)
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.registry import ToolRegistry, default_registry


class ListModel:
    """One prepared list of events per turn; the last turn repeats (a model that never stops)."""

    label = "list model"

    def __init__(self, *turns):
        self.turns = list(turns)

    def stream(self, messages, tools):
        turn = self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]
        yield from turn


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(build_sandbox(tmp_path))


def flood(calls: int) -> Reply:
    """One turn of `calls` glob calls, each whole in one chunk, as an OpenAI stream."""
    lines = []
    for index in range(calls):
        function = {"name": "glob", "arguments": '{"pattern": "src/*"}'}
        call = {"index": index, "id": f"call_{index}", "function": function}
        lines.append({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    lines.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    body = "".join(f"data: {json.dumps(line)}\n\n" for line in lines).encode()
    return Reply(parts=[body[i : i + 65536] for i in range(0, len(body), 65536)])


def test_a_thousand_calls_in_one_turn_run_32_and_answer_every_one(gateway, ctx):
    # Under limits.MAX_CALLS_HELD (1024): past it the turn ends as a gateway error instead.
    done = 'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}'
    gateway.queue(flood(1_000), sse_reply(f"{done}\n\n"))
    model = HttpModel(OPENAI, gateway.url, "sk-test", "flood")
    messages = []
    events = list(run_guarded("q", model, default_registry(), ctx, messages=messages))
    assert MAX_CALLS == 32
    assert sum(isinstance(e, ToolStarted) for e in events) == 32  # run
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1_000  # and every call answered, in order
    assert all(e.result.ok for e in finished[:32])
    [refused] = {(e.result.ok, e.result.content) for e in finished[32:]}
    assert refused[0] is False and refused[1].startswith("too many calls in one turn; at most 32")
    assert check_transcript(messages) is None
    assert events[-1] == AgentStopped("done")
    sent = gateway.requests[1].body["messages"]
    assert sum(m["role"] == "tool" for m in sent) == 1_000  # the transcript the gateway got


class EchoArgs(BaseModel):
    text: str


def run_echo(args: EchoArgs, ctx: ToolContext) -> ToolResult:
    return ToolResult(args.text)


ECHO = ToolDef(name="echo", description="Say text back.", args=EchoArgs, run=run_echo)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ('{"text": ' + "1" * 5000 + "}", "could not be read"),
        ("[" * 60_000, "could not be read"),
        ('{"text": "' + "x" * 70_000 + '"}', f"at most {MAX_ARGUMENTS_CHARS:,} are read"),
        ('{"text": "\\ud800"}', "lone surrogate"),
    ],
)
def test_hostile_arguments_are_refused_before_the_lesson_reads_them(args, words, tmp_path):
    guarded = GuardedRegistry(ToolRegistry([ECHO]))
    result = guarded.execute(ToolCall("c", "echo", args), ToolContext(tmp_path))
    assert result.ok is False and words in result.content


def test_plain_calls_pass_the_guard_unchanged(tmp_path):
    guarded = GuardedRegistry(ToolRegistry([ECHO]))
    call = ToolCall("c", "echo", '{"text": "hi"}')
    assert guarded.execute(call, ToolContext(tmp_path)) == ToolResult("hi")
    unknown = guarded.execute(ToolCall("c", "nope", "{}"), ToolContext(tmp_path))
    assert unknown.content.startswith("there is no tool named nope")


class RaisingAccumulator:
    def push(self, delta):
        raise KeyError("slot")

    def drain(self):
        return []


def test_an_accumulator_that_raises_ends_the_turn_in_one_line(ctx):
    model = ListModel([ToolCallDelta(0, "a", "glob", "{}"), Finish("tool_calls")])
    messages = []
    events = list(
        run_guarded(
            "q", model, default_registry(), ctx, messages=messages, accumulator=RaisingAccumulator
        )
    )
    assert events[-1] == AgentStopped("error", "merging the stream failed: KeyError: 'slot'")
    assert check_transcript(messages) is None


class UnwrittenAccumulator:
    def __init__(self):
        raise NotImplementedError("write this part")


def test_an_accumulator_that_cannot_be_made_ends_the_turn_in_one_line(ctx):
    model = ListModel([ToolCallDelta(0, "a", "glob", "{}"), Finish("tool_calls")])
    run = run_guarded("q", model, default_registry(), ctx, accumulator=UnwrittenAccumulator)
    events = list(run)
    assert events[-1] == AgentStopped(
        "error", "merging the stream failed: NotImplementedError: write this part"
    )


def test_a_model_that_raises_ends_the_run_in_one_line(ctx):
    class Broken:
        label = "broken"

        def stream(self, messages, tools):
            yield TextDelta("a")
            raise ValueError("bad state")

    events = list(run_guarded("q", Broken(), default_registry(), ctx))
    assert events[-1] == AgentStopped("error", "the model's stream failed: ValueError: bad state")


# -- hole 7: a whole-run deadline ---------------------------------------------------------------


class SlowArgs(BaseModel):
    pass


def run_slow(args: SlowArgs, ctx: ToolContext) -> ToolResult:
    time.sleep(0.2)  # a tool that takes its whole budget every call (a FIFO .rgignore, say)
    return ToolResult("slept")


SLOW = ToolDef(name="slow", description="Take a while.", args=SlowArgs, run=run_slow)


def test_a_run_that_never_ends_stops_at_its_deadline_with_a_valid_transcript(tmp_path):
    # Every turn ends in a tool call, so no per-request deadline would ever stop it.
    model = ListModel([ToolCallDelta(0, None, "slow", "{}"), Finish("tool_calls")])
    messages = []
    events = list(
        run_guarded(
            "q",
            model,
            ToolRegistry([SLOW]),
            ToolContext(tmp_path),
            messages=messages,
            max_turns=10_000,
            deadline=RunDeadline(0.5),
        )
    )
    assert events[-1] == AgentStopped("error", RunDeadline(0.5).message())
    assert "stopped: the run took more than 0.5 s" in events[-1].message
    assert sum(isinstance(e, ToolFinished) for e in events) < 100
    assert check_transcript(messages) is None


def test_a_gateway_that_only_sends_keep_alives_stops_at_the_run_deadline(gateway, tmp_path):
    # Keep-alives are not data: only the silence (here an hour) or the run's deadline ends it.
    gateway.queue(sse_reply(": hello\n\n", ending="keepalive", hold=20.0))
    model = HttpModel(OPENAI, gateway.url, "sk-test", "drip", timeout=3600, request_timeout=3600)
    deadline = RunDeadline(1.0)
    deadline.bind(model)
    events = list(
        run_guarded("q", model, default_registry(), ToolContext(tmp_path), deadline=deadline)
    )
    assert events[-1] == AgentStopped("error", deadline.message())


def test_the_deadline_message_is_one_line_naming_how_to_change_it():
    message = RunDeadline(300).message()
    assert "\n" not in message and "--deadline" in message and "300 s" in message


def test_the_default_run_is_a_few_minutes():
    assert 60 <= RunDeadline().seconds <= 600


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("glob", {"pattern": "*" * 50_000_000}, "at most 65,536 are read"),  # ran for 280 s
        ("glob", {"pattern": "{" * 100_000}, "at most 65,536 are read"),  # RecursionError
        ("glob", {"pattern": "a" * 5000}, "pattern: String should have at most 4096 characters"),
        ("grep", {"pattern": "a" * 5000}, "pattern: String should have at most 4096 characters"),
        ("grep", {"pattern": "a", "glob": "*" * 5000}, "glob: String should have at most 4096"),
        ("read_file", {"path": "a/" * 2500}, "path: String should have at most 4096 characters"),
    ],
)
def test_oversized_arguments_are_refused_saying_the_cap(
    tmp_path: Path, name: str, args: dict[str, str], words: str
) -> None:
    guarded = GuardedRegistry(default_registry())
    result = guarded.execute(ToolCall("1", name, json.dumps(args)), ToolContext(tmp_path))
    assert result.ok is False and words in result.content
    assert len(result.content) < 1000
