import json
import socket
from pathlib import Path
from typing import Any

import pytest
from gateway import (
    STREAMS,
    Gateway,
    Reply,
    fixture_reply,
    html_reply,
    packed,
    sse_reply,
    status_reply,
)
from pydantic import BaseModel
from turns import Turn, merged

from course_agent.app.settings import choose
from course_agent.loop import SYSTEM_PROMPT, run_agent
from course_agent.protocol import (
    AgentStopped,
    GatewayError,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolDef,
    ToolFinished,
    ToolResult,
)
from course_agent.providers.anthropic_wire import ANTHROPIC, ANTHROPIC_VERSION, anthropic_wire
from course_agent.providers.http import HttpModel
from course_agent.providers.replay import ReplayModel
from course_agent.registry import ToolRegistry, default_registry

KEY = "sk-ant-test-SECRET-1234567890abcdef"
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def model_for(
    gateway: Gateway, timeout: float = 5.0, max_tokens: int | None = None, **options: Any
) -> HttpModel:
    # The loopback gateway serves under /v1; Anthropic's base URL is the root without it.
    root = gateway.url.removesuffix("/v1")
    wire = ANTHROPIC if max_tokens is None else anthropic_wire(max_tokens)
    return HttpModel(wire, root, KEY, "claude-test", timeout=timeout, **options)


def recorded_reply(name: str, piece: int | None = None) -> Reply:
    """An Anthropic recording. A .sse file is sent as it is (fixture_reply); a .jsonl line is sent
    as Anthropic names it, "event: <its type>\\ndata: <line>\\n\\n", and nothing after the last."""
    if name.endswith(".sse"):
        return fixture_reply(name, piece)
    lines = (STREAMS / name).read_text(encoding="utf-8").splitlines()
    text = "".join(f"event: {json.loads(x)['type']}\ndata: {x}\n\n" for x in lines if x.strip())
    body = text.encode()
    if piece is None:
        return Reply(parts=[line.encode() for line in text.splitlines(keepends=True)])
    return Reply(parts=[body[i : i + piece] for i in range(0, len(body), piece)])


# -- every Anthropic recording, over real HTTP, merged --------------------------------------------

# Written by hand from reading each file (see tests/data/streams/README.txt for what each shows).
EXPECTED = {
    # Text block 0, then the tool_use block 1: the call's index is 1 because the text came first.
    "anthropic-sdk-python_messages_tool_use.sse": Turn(
        text="I'll check the current weather in Paris for you.",
        calls=(ToolCall("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", '{"location": "Paris"}'),),
    ),
    # Cut off by max_tokens inside a string: no content_block_stop, the JSON never closes. The
    # call is merged anyway; the registry feeds the broken JSON back as a failed result.
    "anthropic-sdk-python_messages_tool_use_truncated_max_tokens.sse": Turn(
        text="I'll create a comprehensive tax guide for someone with multiple W2s and save it in "
        "a file called taxes.txt. Let me do that for you now.",
        finishes=("length",),
        calls=(
            ToolCall(
                "toolu_01EKqbqmZrGRXy18eN7m9kvY",
                "make_file",
                '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR '
                'INDIVIDUALS WITH MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes',
            ),
        ),
    ),
    # A tool without arguments: its only input_json_delta is "", so args stay "" (= {}).
    "vercel-ai_anthropic-messages_text_then_tool_no_args.jsonl": Turn(
        text="I'll update the issue list for you.",
        calls=(ToolCall("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", ""),),
    ),
    # No text: the tool_use is block 0. Pings between fragments and after the block.
    "vercel-ai_anthropic-messages_tool_use_pings.jsonl": Turn(
        calls=(
            ToolCall("toolu_019Zvehfe1XQWweT1pm7okyt", "weather", '{"location": "San Francisco"}'),
        ),
    ),
}


def is_anthropic_native(name: str) -> bool:
    return name.startswith(("anthropic-sdk-python_", "vercel-ai_anthropic-messages_"))


def test_the_table_covers_every_anthropic_recording() -> None:
    copied = {path.name for path in STREAMS.iterdir() if is_anthropic_native(path.name)}
    assert copied == set(EXPECTED)
    assert (STREAMS / "README.txt").is_file()  # provenance travels with the copies


@pytest.mark.parametrize("delivery", ["by-line", "5-byte-writes", "gzip"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_stream_merges_to_the_expected_turn(
    gateway: Gateway, name: str, delivery: str
) -> None:
    reply = recorded_reply(name, None if delivery == "by-line" else 5)
    gateway.queue(packed(reply) if delivery == "gzip" else reply)
    assert merged(list(model_for(gateway).stream(QUESTION, []))) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_stream_recorded_again_replays_the_same_events(
    gateway: Gateway, name: str, tmp_path: Path
) -> None:
    recording = tmp_path / "session.jsonl"
    gateway.queue(recorded_reply(name, 5))
    live = list(model_for(gateway, record=recording).stream(QUESTION, []))
    assert list(ReplayModel(recording, ANTHROPIC).stream(QUESTION, [])) == live
    assert KEY not in recording.read_text()


def test_recorded_index_is_the_content_block_index(gateway: Gateway) -> None:
    gateway.queue(recorded_reply("anthropic-sdk-python_messages_tool_use.sse"))
    events = list(model_for(gateway).stream(QUESTION, []))
    assert {e.index for e in events if isinstance(e, ToolCallDelta)} == {1}


# -- what is sent --------------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "glob",
            "description": "List files.",
            "parameters": {"type": "object"},
        },
    }
]


def test_request_shape(gateway: Gateway) -> None:
    gateway.queue(recorded_reply("vercel-ai_anthropic-messages_tool_use_pings.jsonl"))
    messages = [{"role": "system", "content": "Be brief."}, *QUESTION]
    list(model_for(gateway, max_tokens=512).stream(messages, TOOLS))
    [request] = gateway.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == ANTHROPIC_VERSION == "2023-06-01"
    assert request.headers["accept"] == "text/event-stream"
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 512,
        "stream": True,
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": QUESTION[0]["content"]}]}
        ],
        "tools": [
            {"name": "glob", "description": "List files.", "input_schema": {"type": "object"}}
        ],
    }


def test_no_system_and_no_tools_are_left_out(gateway: Gateway) -> None:
    gateway.queue(recorded_reply("vercel-ai_anthropic-messages_tool_use_pings.jsonl"))
    list(model_for(gateway).stream(QUESTION, []))
    assert set(gateway.requests[0].body) == {"model", "max_tokens", "stream", "messages"}


def test_label_and_repr_name_model_and_gateway_but_not_the_key(gateway: Gateway) -> None:
    model = model_for(gateway)
    root = gateway.url.removesuffix("/v1")
    assert model.label == f"claude-test via {root}"
    assert repr(model) == f"HttpModel(wire='anthropic', base_url={root!r}, model='claude-test')"
    assert KEY not in repr(model) + model.label


# -- faults: one line, the cause, the gateway, what next, never the key -----------------------

TEXT = (
    'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    '"delta": {"type": "text_delta", "text": "a"}}\n\n'
)
# What Anthropic answers a wrong key with; this one echoes the key, as a leaky proxy might.
UNAUTHORISED = json.dumps(
    {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {KEY}"}}
)
OVERLOADED = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'

FAULTS = {
    "401": (status_reply(401, UNAUTHORISED), "check ANTHROPIC_API_KEY"),
    "529 overloaded, three times": (
        [status_reply(529, OVERLOADED, {"Retry-After": "0"})] * 3,
        "HTTP 529 (overloaded_error: Overloaded)",
    ),
    "event error mid-stream": (
        sse_reply(TEXT, f"event: error\ndata: {OVERLOADED}\n\n"),
        "mid-stream: overloaded_error: Overloaded",
    ),
    "404 with /v1 twice": (
        status_reply(404, '{"type": "error", "error": {"type": "not_found_error"}}'),
        "ANTHROPIC_BASE_URL (the API root, without /v1)",
    ),
    "html page": (html_reply(), "HTML page"),
    "openai chunks": (sse_reply('data: "chat.completion.chunk"\n\n'), "ANTHROPIC_BASE_URL"),
    "string index": (
        sse_reply(
            'data: {"type": "content_block_delta", "index": "1", '
            '"delta": {"type": "input_json_delta", "partial_json": "{"}}\n\n'
        ),
        "a content block's index is '1', not a whole number; check that ANTHROPIC_BASE_URL",
    ),
    "dropped mid-stream": (sse_reply(TEXT, ending="drop"), "dropped the connection"),
    "no stop reason": (sse_reply(TEXT), "before the answer was complete"),
    "nothing at all": (sse_reply(ending="stall", hold=20), "sent nothing for 0.5 s"),
}


def assert_clean(message: str, *fragments: str) -> None:
    assert "\n" not in message
    assert KEY not in message
    assert "SECRET" not in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(("reply", "cause"), FAULTS.values(), ids=FAULTS.keys())
def test_fault_is_one_clean_line(gateway: Gateway, reply: Reply | list[Reply], cause: str) -> None:
    gateway.queue(*(reply if isinstance(reply, list) else [reply]))
    with pytest.raises(GatewayError) as caught:
        list(model_for(gateway, timeout=0.5).stream(QUESTION, []))
    assert_clean(str(caught.value), cause, gateway.url.removesuffix("/v1"))
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_echoed_key_is_redacted_in_the_message_and_the_recording(
    gateway: Gateway, tmp_path: Path
) -> None:
    recording = tmp_path / "session.jsonl"
    gateway.queue(status_reply(401, UNAUTHORISED))
    with pytest.raises(GatewayError, match=r"bad key \[redacted\]"):
        list(model_for(gateway, record=recording).stream(QUESTION, []))
    saved = recording.read_text()
    assert KEY not in saved and "[redacted]" in saved


def test_cannot_connect_names_anthropic_base_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = HttpModel(ANTHROPIC, f"http://127.0.0.1:{port}", KEY, "claude-test", timeout=5)
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    assert_clean(str(caught.value), "cannot connect", "ANTHROPIC_BASE_URL")


@pytest.mark.parametrize(
    ("base_url", "key", "cause"),
    [
        ("api.anthropic.com", KEY, "ANTHROPIC_BASE_URL 'api.anthropic.com' is not an http(s) URL"),
        ("https://api.anthropic.com", KEY + "\n", "ANTHROPIC_API_KEY contains a space"),
    ],
)
def test_bad_settings_are_refused_up_front(base_url: str, key: str, cause: str) -> None:
    with pytest.raises(GatewayError) as caught:
        HttpModel(ANTHROPIC, base_url, key, "claude-test")
    assert_clean(str(caught.value), cause)


def test_429_is_retried_honouring_retry_after(gateway: Gateway) -> None:
    # The SDKs' other retried statuses, 529 included, are in test_http.py.
    limited = '{"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}'
    gateway.queue(
        status_reply(429, limited, {"Retry-After": "0"}),
        recorded_reply("vercel-ai_anthropic-messages_tool_use_pings.jsonl"),
    )
    turn = merged(list(model_for(gateway, max_retries=1).stream(QUESTION, [])))
    assert turn.finishes == ("tool_calls",)
    assert len(gateway.requests) == 2


# -- the loop over the Anthropic wire: results go back as tool_result blocks --------------------


class City(BaseModel):
    location: str


class Document(BaseModel):
    filename: str
    lines_of_text: list[str]


class Nothing(BaseModel):
    pass


def answer(text: str) -> Reply:
    """A short final answer: one text block, end_turn."""
    events = [
        {"type": "message_start", "message": {"id": "msg_2", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    return sse_reply(*(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))


def registry_of(name: str, args: type[BaseModel], reply: str) -> ToolRegistry:
    return ToolRegistry([ToolDef(name, f"{name} for tests", args, lambda a, c: ToolResult(reply))])


def run_two_turns(
    gateway: Gateway, fixture: str, registry: ToolRegistry, tmp_path: Path
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Turn 1 is the recording, turn 2 a text answer; returns the loop's events and both bodies."""
    gateway.queue(recorded_reply(fixture), answer("Done."))
    events = list(run_agent("Go.", model_for(gateway), registry, ToolContext(tmp_path)))
    return events, [request.body for request in gateway.requests]


def test_two_turn_session_sends_tool_use_and_tool_result(gateway: Gateway, tmp_path: Path) -> None:
    registry = registry_of("get_weather", City, "Paris: 18 C, light rain")
    events, (first, second) = run_two_turns(
        gateway, "anthropic-sdk-python_messages_tool_use.sse", registry, tmp_path
    )
    assert events[-1] == AgentStopped("done")
    assert first["system"] == second["system"] == SYSTEM_PROMPT
    assert first["tools"][0]["name"] == "get_weather"
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll check the current weather in Paris for you."},
                {
                    "type": "tool_use",
                    "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                    "name": "get_weather",
                    "input": {"location": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                    "content": "Paris: 18 C, light rain",
                }
            ],
        },
    ]


def test_call_cut_off_by_max_tokens_is_fed_back_not_a_crash(
    gateway: Gateway, tmp_path: Path
) -> None:
    registry = registry_of("make_file", Document, "written")
    events, (_, second) = run_two_turns(
        gateway,
        "anthropic-sdk-python_messages_tool_use_truncated_max_tokens.sse",
        registry,
        tmp_path,
    )
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert not finished.result.ok
    assert finished.result.content.startswith("arguments for make_file are not valid JSON")
    assert events[-1] == AgentStopped("done")
    tool_use = second["messages"][1]["content"][-1]
    assert (tool_use["name"], tool_use["input"]) == ("make_file", {})  # broken JSON is sent as {}
    [result] = second["messages"][2]["content"]
    assert result["tool_use_id"] == tool_use["id"]
    assert result["content"] == finished.result.content


def test_tool_without_arguments_runs_with_empty_input(gateway: Gateway, tmp_path: Path) -> None:
    registry = registry_of("updateIssueList", Nothing, "3 issues updated")
    events, (_, second) = run_two_turns(
        gateway, "vercel-ai_anthropic-messages_text_then_tool_no_args.jsonl", registry, tmp_path
    )
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.call.args == ""  # registry.execute_call reads "" as {}
    assert finished.result == ToolResult("3 issues updated")
    assert second["messages"][1]["content"][-1]["input"] == {}


# -- chosen by settings.choose(provider=...) -----------------------------------------------------

BOTH = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": KEY}


@pytest.mark.parametrize(
    ("provider", "env", "wire"),
    [
        ("anthropic", {"ANTHROPIC_API_KEY": KEY}, "anthropic"),
        ("anthropic", BOTH, "anthropic"),
        (None, {"ANTHROPIC_API_KEY": KEY}, "anthropic"),  # the only key set
        (None, BOTH, "openai"),  # both set: OpenAI, as before
    ],
)
def test_choose_provider(
    provider: str | None, env: dict[str, str], wire: str, tmp_path: Path
) -> None:
    setup = choose(provider=provider, env=env, root=tmp_path)
    assert isinstance(setup.model, HttpModel) and setup.model.wire.name == wire
    assert KEY not in setup.notice + repr(setup.model) + setup.model.label


def test_choose_anthropic_defaults_and_overrides(tmp_path: Path) -> None:
    model = choose(provider="anthropic", env={"ANTHROPIC_API_KEY": KEY}, root=tmp_path).model
    assert repr(model) == (
        "HttpModel(wire='anthropic', base_url='https://api.anthropic.com', "
        "model='claude-haiku-4-5')"
    )
    env = {
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": "http://proxy.example/",
        "COURSE_AGENT_MODEL": "claude-sonnet-4-5",
    }
    model = choose(provider="anthropic", env=env, root=tmp_path).model
    assert repr(model) == (
        "HttpModel(wire='anthropic', base_url='http://proxy.example', model='claude-sonnet-4-5')"
    )
    model = choose(provider="anthropic", env=env, model="claude-x", root=tmp_path).model
    assert repr(model).endswith("model='claude-x')")


def test_choose_says_why_it_picked_anthropic(tmp_path: Path) -> None:
    setup = choose(env={"ANTHROPIC_API_KEY": KEY}, root=tmp_path)
    assert setup.notice == "ANTHROPIC_API_KEY is the only key set: using Anthropic"
    assert choose(provider="anthropic", env={"ANTHROPIC_API_KEY": KEY}, root=tmp_path).notice == ""


@pytest.mark.parametrize(
    ("provider", "env", "variable"),
    [
        ("openai", {"ANTHROPIC_API_KEY": KEY}, "OPENAI_API_KEY"),
        ("anthropic", {"OPENAI_API_KEY": "sk-o"}, "ANTHROPIC_API_KEY"),
    ],
)
def test_choose_without_the_providers_key_refuses(provider, env, variable, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"^no API key: set {variable} "):  # not offline unasked
        choose(provider=provider, env=env, root=tmp_path)


def test_choose_offline_anthropic_speaks_the_anthropic_wire(tmp_path: Path) -> None:
    setup = choose(provider="anthropic", mock=True, env={}, root=tmp_path)
    assert repr(setup.model) == "ScriptedModel(inject=None, wire='anthropic')"
    mocked = choose(provider="anthropic", mock=True, env={"ANTHROPIC_API_KEY": KEY}, root=tmp_path)
    assert repr(mocked.model) == "ScriptedModel(inject=None, wire='anthropic')"


def test_choose_replays_an_anthropic_recording(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    gateway.queue(*(recorded_reply(name) for name in sorted(EXPECTED)))
    live = model_for(gateway, record=recording)
    turns = [merged(list(live.stream(QUESTION, []))) for _ in EXPECTED]
    assert KEY not in recording.read_text()
    replay = choose(provider="anthropic", replay=recording, env={}, root=tmp_path).model
    assert [merged(list(replay.stream(QUESTION, []))) for _ in EXPECTED] == turns


def test_choose_refuses_an_unknown_provider(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown provider 'claude': use 'openai' or 'anthropic'"):
        choose(provider="claude", env={}, root=tmp_path)


@pytest.mark.parametrize(
    "arguments",
    ['{"pattern": "*", "x": 1e999}', "[" * 5000, '{"pattern": ' + "9" * 5000 + "}"],
    ids=["infinity", "deep", "long number"],
)
def test_arguments_json_cannot_carry_poisons_the_next_request_never(
    gateway: Gateway, tmp_path: Path, arguments: str
) -> None:
    # The call's arguments go back as a tool_use block's `input` object in the next request:
    # infinity cannot be sent as JSON, and the others cannot even be read. The call fails, the
    # next request still goes out, and the conversation goes on.
    def event(kind: str, **fields: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"

    block = {"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": arguments}
    call = [
        event("content_block_start", index=0, content_block=block),
        event("content_block_delta", index=0, delta=delta),
        event("message_delta", delta={"stop_reason": "tool_use"}),
        event("message_stop"),
    ]
    answer = [
        event("content_block_start", index=0, content_block={"type": "text", "text": "ok"}),
        event("message_delta", delta={"stop_reason": "end_turn"}),
        event("message_stop"),
    ]
    gateway.queue(sse_reply(*call), sse_reply(*answer))
    events = list(run_agent("q", model_for(gateway), default_registry(), ToolContext(tmp_path)))
    assert events[-1] == AgentStopped("done")
    sent = gateway.requests[1].body["messages"][1]["content"][0]
    assert sent["type"] == "tool_use" and sent["input"] == {}
