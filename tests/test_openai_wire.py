import socket
from pathlib import Path

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
from turns import Turn, merged

from course_agent.app.settings import choose
from course_agent.protocol import (
    GatewayError,
    ModelEvent,
    TextDelta,
    ToolCall,
)
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.replay import ReplayModel

KEY = "sk-test-SECRET-1234567890abcdef"
QUESTION = [{"role": "user", "content": "Why is the test red?"}]


def model_for(gateway: Gateway, timeout: float = 5.0, **options: float) -> HttpModel:
    return HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=timeout, **options)


# -- every OpenAI-style recording, over real HTTP, merged ----------------------------------------

# Written by hand from reading each file (see tests/data/streams/README.txt for what each shows).
EXPECTED = {
    "openai-python_parallel_tool_calls.sse": Turn(
        calls=(
            ToolCall(
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                '{"city": "Edinburgh", "country": "GB", "units": "c"}',
            ),
            ToolCall(
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                '{"ticker": "AAPL", "exchange": "NASDAQ"}',
            ),
        )
    ),
    "openai-python_single_pydantic_tool.sse": Turn(
        calls=(
            ToolCall(
                "call_c91SqDXlYFuETYv8mUHzz6pp",
                "GetWeatherArgs",
                '{"city":"Edinburgh","country":"UK","units":"c"}',
            ),
        )
    ),
    "openai-python_strict_tools.sse": Turn(
        calls=(
            ToolCall(
                "call_CTf1nWJLqSeRgDqaCG27xZ74",
                "get_weather",
                '{"city":"San Francisco","state":"CA"}',
            ),
        )
    ),
    "openai-python_non_strict_tool.sse": Turn(
        calls=(
            ToolCall("call_4XzlGBLtUe9dy3GVNV4jhq7h", "get_weather", '{"city":"New York City"}'),
        )
    ),
    "openai-python_plain_content.sse": Turn(
        text="I'm unable to provide real-time weather updates. To get the current weather in "
        "San Francisco, I recommend checking a reliable weather website or a weather app.",
        finishes=("stop",),
    ),
    # n=3: choices 1 and 2 say the same with other numbers (61, 59); only choice 0 counts.
    "openai-python_multiple_choices_n3.sse": Turn(
        text='{"city":"San Francisco","temperature":65,"units":"f"}', finishes=("stop",)
    ),
    "openai-python_max_tokens_length.sse": Turn(text='{"', finishes=("length",)),
    "pydantic-ai_openai-gpt4o_parallel_tool_calls_obfuscation.sse": Turn(
        calls=(
            ToolCall("call_3rqTYrA6H21AYUaRGP4F66oq", "get_country", "{}"),
            ToolCall("call_Xw9XMKBJU48kAAd78WgIswDx", "get_product_name", "{}"),
        )
    ),
    "pydantic-ai_openai-gpt4o-mini_tool_call.sse": Turn(
        calls=(ToolCall("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", '{"country":"UK"}'),)
    ),
    "pydantic-ai_groq-gpt-oss_tool_call_single_chunk.sse": Turn(
        calls=(
            ToolCall(
                "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
                "get_something_by_name",
                '{"name":"example"}',
            ),
        )
    ),
    # 30 keep-alive comments first; "stop" is sent twice, the second time with the usage.
    "pydantic-ai_openrouter_keepalive_comments.sse": Turn(
        text="I recommend naming your Python retry library `resilix`, as it conveys resilience "
        "and is modern and brandable.",
        finishes=("stop", "stop"),
    ),
    # Text first, then a call at index 1 (no index 0 ever) with an extra empty fragment.
    "vercel-ai_claude-openai-compat_index1_after_text.sse": Turn(
        text="Reading it.",
        calls=(ToolCall("toolu_sanitized", "read_file", '{"path": "a.txt"}'),),
    ),
    # ~220 reasoning_content chunks (ignored), then the whole call in one fragment.
    "vercel-ai_xai-grok3mini_tool_call_whole_args.jsonl": Turn(
        calls=(ToolCall("call_79382389", "weather", '{"location":"San Francisco"}'),)
    ),
    "vercel-ai_deepseek-reasoner_tool_call.jsonl": Turn(
        calls=(
            ToolCall(
                "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", '{"location": "San Francisco"}'
            ),
        )
    ),
    "vercel-ai_groq-llama33_tool_call_single_chunk.jsonl": Turn(
        calls=(ToolCall("tk85n1k4m", "weather", "{}"),)
    ),
    # No index, no type; the finish rides in the same chunk as the call.
    "vercel-ai_mistral_tool_call_no_index_finish_same_chunk.jsonl": Turn(
        calls=(ToolCall("gSIMJiOkT", "weather", '{"location": "San Francisco"}'),)
    ),
    # The continuation sends "name": "" with the whole arguments.
    "vercel-ai_mistral-api_glm_empty_name_continuation.jsonl": Turn(
        calls=(
            ToolCall(
                "chatcmpl-tool-9f149c74c42f265b",
                "webSearchTool",
                '{"query": "current Berlin weather"}',
            ),
        )
    ),
    # Continuations send "id": "".
    "vercel-ai_alibaba-qwen3max_empty_id_continuation.jsonl": Turn(
        calls=(
            ToolCall("call_eee11723464a4b9eb8cee71d", "weather", '{"location": "San Francisco"}'),
        )
    ),
    # The first chunk has "choices": [].
    "vercel-ai_azure_empty_choices_prompt_filter_first.jsonl": Turn(
        text="Capital of Denmark.", finishes=("stop",)
    ),
}
FAILING = {"pydantic-ai_groq-gpt-oss_midstream_error_event.sse"}


def is_openai_style(name: str) -> bool:
    """The README's OpenAI Chat Completions recordings; Anthropic's native ones are not."""
    return name.startswith(("openai-python_", "pydantic-ai_", "vercel-ai_")) and not (
        name.startswith("vercel-ai_anthropic-messages_")
    )


def test_the_table_covers_every_openai_style_recording() -> None:
    copied = {path.name for path in STREAMS.iterdir() if is_openai_style(path.name)}
    assert copied == set(EXPECTED) | FAILING
    assert len(copied) == 20


@pytest.mark.parametrize("delivery", ["by-line", "5-byte-writes", "gzip"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_stream_merges_to_the_expected_turn(
    gateway: Gateway, name: str, delivery: str
) -> None:
    reply = fixture_reply(name, None if delivery == "by-line" else 5)
    gateway.queue(packed(reply) if delivery == "gzip" else reply)
    assert merged(list(model_for(gateway).stream(QUESTION, []))) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_stream_recorded_again_replays_the_same_events(
    gateway: Gateway, name: str, tmp_path: Path
) -> None:
    recording = tmp_path / "session.jsonl"
    gateway.queue(fixture_reply(name, 5))
    live = list(model_for(gateway, record=recording).stream(QUESTION, []))
    assert list(ReplayModel(recording).stream(QUESTION, [])) == live
    assert KEY not in recording.read_text()


def test_groq_midstream_error_event_is_a_gateway_error(gateway: Gateway) -> None:
    gateway.queue(fixture_reply("pydantic-ai_groq-gpt-oss_midstream_error_event.sse"))
    events: list[ModelEvent] = []
    with pytest.raises(GatewayError) as caught:
        events.extend(model_for(gateway).stream(QUESTION, []))
    message = str(caught.value)
    assert gateway.url in message
    assert "mid-stream" in message
    assert "tool_use_failed" in message
    assert events == []  # only reasoning came before the error


# -- what is sent ------------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "glob", "parameters": {"type": "object"}}}]


def test_request_shape(gateway: Gateway) -> None:
    gateway.queue(fixture_reply("openai-python_plain_content.sse"))
    list(model_for(gateway).stream(QUESTION, TOOLS))
    [request] = gateway.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["accept-encoding"] == "gzip, deflate"  # all the client unpacks
    assert request.body == {
        "model": "gpt-test",
        "messages": QUESTION,
        "tools": TOOLS,
        "stream": True,
    }


def test_empty_tools_are_left_out(gateway: Gateway) -> None:
    gateway.queue(fixture_reply("openai-python_plain_content.sse"))
    list(model_for(gateway).stream(QUESTION, []))
    assert "tools" not in gateway.requests[0].body


def test_no_key_means_no_authorization_header(gateway: Gateway) -> None:
    gateway.queue(fixture_reply("openai-python_plain_content.sse"))
    list(HttpModel(OPENAI, gateway.url + "/", "", "local", timeout=5).stream(QUESTION, []))
    assert "authorization" not in gateway.requests[0].headers
    assert gateway.requests[0].path == "/v1/chat/completions"  # the trailing slash is dropped


def test_label_and_repr_name_model_and_gateway_but_not_the_key(gateway: Gateway) -> None:
    model = model_for(gateway)
    assert model.label == f"gpt-test via {gateway.url}"
    assert repr(model) == f"HttpModel(wire='openai', base_url={gateway.url!r}, model='gpt-test')"
    assert KEY not in repr(model)


def test_events_arrive_before_the_body_ends(gateway: Gateway) -> None:
    # The gateway sends one chunk, then stalls: the text must already be out when the wait fails.
    data = 'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
    gateway.queue(sse_reply(data, ending="stall"))
    events: list[ModelEvent] = []
    with pytest.raises(GatewayError, match=r"sent nothing for 0\.5 s"):
        events.extend(model_for(gateway, timeout=0.5).stream(QUESTION, []))
    assert events == [TextDelta("Hel")]


def test_multibyte_text_written_one_byte_at_a_time(gateway: Gateway) -> None:
    text = "Grüße, ✓ 中文 😀"
    chunk = '{"choices": [{"index": 0, "delta": {"content": "%s"}, "finish_reason": "stop"}]}'
    body = f"data: {chunk % text}\n\ndata: [DONE]\n\n".encode()
    gateway.queue(Reply(parts=[body[i : i + 1] for i in range(len(body))]))  # UTF-8 split too
    assert merged(list(model_for(gateway).stream(QUESTION, []))) == Turn(text, ("stop",))


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_inside_json_stay_in_their_line(
    gateway: Gateway, separator: str
) -> None:
    # JSON allows these raw inside a string; httpx's iter_lines (str.splitlines) cuts at them.
    text = f"one{separator}two"
    chunk = '{"choices": [{"index": 0, "delta": {"content": "%s"}, "finish_reason": "stop"}]}'
    gateway.queue(sse_reply(f"data: {chunk % text}\n\n", "data: [DONE]\n\n"))
    assert merged(list(model_for(gateway).stream(QUESTION, []))) == Turn(text, ("stop",))


# -- every failure: one line, the cause, the gateway, what next, never the key -----------------

CHUNK = 'data: {"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": null}]}\n\n'
ECHO = '{"error": {"message": "Incorrect API key provided: {authorization}", "code": "bad_key"}}'

FAULTS = {
    "401 echoing the header": (status_reply(401, ECHO, echo_authorization=True), "OPENAI_API_KEY"),
    "403": (status_reply(403, '{"error": {"message": "forbidden"}}'), "OPENAI_API_KEY"),
    "404 html": (html_reply(404), "OPENAI_BASE_URL (it usually ends in /v1)"),
    "404 model": (
        status_reply(404, '{"error": {"message": "The model `gpt-test` does not exist"}}'),
        "model name 'gpt-test'",
    ),
    "400 echoing the header": (
        status_reply(400, "bad request from {authorization}", echo_authorization=True),
        "HTTP 400",
    ),
    "500": (status_reply(500, "Internal Server Error"), "HTTP 500"),
    "502 html": (status_reply(502, "<html><body>Bad Gateway</body></html>"), "HTTP 502"),
    "503": (status_reply(503, '{"error": {"message": "overloaded"}}'), "overloaded"),
    "307": (status_reply(307, "", {"Location": "https://elsewhere.example/v1"}), "redirect"),
    "html page": (html_reply(), "HTML page"),
    "json not a stream": (
        status_reply(
            200, '{"error": {"message": "no streaming {authorization}"}}', echo_authorization=True
        ),
        "not an event stream",
    ),
    "dropped mid-stream": (sse_reply(CHUNK, ending="drop"), "dropped the connection"),
    "reset mid-stream": (sse_reply(CHUNK, ending="reset"), "dropped the connection"),
    "no done no finish": (sse_reply(CHUNK), "before the answer was complete"),
    "event error": (
        sse_reply(CHUNK, 'event: error\ndata: {"error": {"message": "upstream died"}}\n\n'),
        "mid-stream: upstream died",
    ),
    "error payload": (
        sse_reply(
            CHUNK, 'data: {"error": {"message": "Provider returned error", "code": 502}}\n\n'
        ),
        "502: Provider returned error",
    ),
    "invalid json": (sse_reply(CHUNK, 'data: {"choices": [{"index": 0,\n\n'), "not JSON"),
    "keep-alives forever": (sse_reply(ending="keepalive", hold=20), "only keep-alives"),
    "string index": (
        sse_reply(
            'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "1"}]}}]}\n\n'
        ),
        "a tool call's index is '1', not a whole number; check that OPENAI_BASE_URL",
    ),
    "nothing at all": (sse_reply(ending="stall", hold=20), "sent nothing for 0.5 s"),
}


def assert_clean(message: str, *fragments: str) -> None:
    assert "\n" not in message
    assert "Traceback" not in message
    assert KEY not in message
    assert "SECRET" not in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(("reply", "cause"), FAULTS.values(), ids=FAULTS.keys())
def test_fault_is_one_clean_line(gateway: Gateway, reply: Reply, cause: str) -> None:
    gateway.queue(reply)
    model = model_for(gateway, timeout=0.5, max_retries=0)  # the 5xx are reported at once
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    assert_clean(str(caught.value), cause, gateway.url)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_echoed_key_is_redacted_not_dropped(gateway: Gateway) -> None:
    gateway.queue(status_reply(401, ECHO, echo_authorization=True))
    with pytest.raises(GatewayError, match=r"Incorrect API key provided: Bearer \[redacted\]"):
        list(model_for(gateway).stream(QUESTION, []))


def test_even_a_placeholder_key_is_cut_wherever_it_occurs(gateway: Gateway, tmp_path: Path) -> None:
    # Local gateways take any key; a short one is still a key, cut as a substring everywhere.
    body = '{"error": {"message": "model xyz does not exist; sent {authorization}"}}'
    gateway.queue(status_reply(404, body, echo_authorization=True))
    recording = tmp_path / "session.jsonl"
    model = HttpModel(OPENAI, gateway.url, "xyz", "m", timeout=5, record=recording)
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    assert "model [redacted] does not exist; sent Bearer [redacted]" in str(caught.value)
    assert "does not exist; sent Bearer [redacted]" in recording.read_text()
    assert "xyz" not in str(caught.value) + recording.read_text()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    "base_url",
    [f"http://127.0.0.1:{closed_port()}/v1", "http://no-such-gateway.invalid/v1"],
    ids=["refused", "unknown-host"],
)
def test_cannot_connect(base_url: str) -> None:
    model = HttpModel(OPENAI, base_url, KEY, "gpt-test", timeout=5)
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    assert_clean(str(caught.value), "cannot connect", base_url, "OPENAI_BASE_URL")


@pytest.mark.parametrize("base_url", ["api.openai.com/v1", "", "ftp://host/v1"])
def test_base_url_without_scheme_is_refused_up_front(base_url: str) -> None:
    with pytest.raises(GatewayError, match="not an http"):
        HttpModel(OPENAI, base_url, KEY, "gpt-test")


@pytest.mark.parametrize("key", [KEY + "\n", " " + KEY, KEY + "é"])
def test_malformed_key_is_refused_without_showing_it(key: str) -> None:
    with pytest.raises(GatewayError) as caught:
        HttpModel(OPENAI, "https://api.openai.com/v1", key, "gpt-test")
    assert_clean(str(caught.value), "OPENAI_API_KEY")


# -- 429: retried a bounded number of times, honouring Retry-After (the rest: test_http.py) -----


def test_429_is_retried_then_succeeds(gateway: Gateway) -> None:
    gateway.queue(
        status_reply(429, '{"error": {"message": "slow down"}}', {"Retry-After": "0"}),
        status_reply(429, '{"error": {"message": "slow down"}}', {"Retry-After": "1"}),
        fixture_reply("openai-python_plain_content.sse"),
    )
    turn = merged(list(model_for(gateway, max_retries=2).stream(QUESTION, [])))
    assert turn.finishes == ("stop",)
    assert len(gateway.requests) == 3
    assert gateway.requests[0].body == gateway.requests[2].body  # the same request each time


def test_429_reported_after_max_retries(gateway: Gateway) -> None:
    limited = status_reply(429, '{"error": {"message": "rate limit"}}', {"Retry-After": "0"})
    gateway.queue(limited, limited, limited, fixture_reply("openai-python_plain_content.sse"))
    with pytest.raises(GatewayError) as caught:
        list(model_for(gateway, max_retries=2).stream(QUESTION, []))
    assert_clean(str(caught.value), "HTTP 429", "rate-limited", gateway.url)
    assert len(gateway.requests) == 3  # 1 try + 2 retries; the success was never asked for


def test_no_retries_when_max_retries_is_zero(gateway: Gateway) -> None:
    gateway.queue(status_reply(429, "", {"Retry-After": "0"}))
    with pytest.raises(GatewayError, match="HTTP 429"):
        list(model_for(gateway, max_retries=0).stream(QUESTION, []))
    assert len(gateway.requests) == 1


# -- built by settings.choose ----------------------------------------------------------------------


def test_choose_hands_http_model_the_openai_wire_and_both_timeouts(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": KEY, "COURSE_AGENT_TIMEOUT": "7", "OPENAI_BASE_URL": "http://gw/v1/"}
    model = choose(env=env, root=tmp_path).model
    assert isinstance(model, HttpModel) and model.wire is OPENAI
    assert (model.base_url, model.model) == ("http://gw/v1", "gpt-4o-mini")
    assert (model.timeout, model.request_timeout) == (7, 300)
    env["COURSE_AGENT_REQUEST_TIMEOUT"] = "30"
    assert choose(env=env, root=tmp_path).model.request_timeout == 30


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_a_request_timeout_that_is_not_seconds_is_refused(tmp_path: Path, value: str) -> None:
    env = {"OPENAI_API_KEY": KEY, "COURSE_AGENT_REQUEST_TIMEOUT": value}
    with pytest.raises(ValueError, match=f"COURSE_AGENT_REQUEST_TIMEOUT={value!r} is not a number"):
        choose(env=env, root=tmp_path)
