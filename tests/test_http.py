"""The HTTP client's bounds, over real loopback HTTP: time, memory, retries, the stream's contract.

Every gateway here is hostile or broken in one way; each must end in one GatewayError line naming
the gateway (and the cap or timeout, when one was hit), without the key, in bounded time and memory.
"""

from __future__ import annotations

import itertools
import json
import ssl
import time
import tracemalloc
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from gateway import (
    Gateway,
    Reply,
    endless,
    fixture_reply,
    gzipped,
    self_signed,
    sse_reply,
    status_reply,
)
from turns import merged

from course_agent.accumulator import ToolCallAccumulator
from course_agent.argument_caps import MAX_ARGUMENTS
from course_agent.loop import run_agent
from course_agent.protocol import AgentStopped, GatewayError, ToolCallDelta, ToolContext
from course_agent.providers import http as http_module
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.gateway.limits import (
    MAX_CALLS_HELD,
    MAX_ERROR_BODY,
    MAX_TEXT,
    MAX_TURN,
)
from course_agent.providers.gateway.retries import MAX_RETRY_WAIT
from course_agent.providers.gateway.sse import MAX_LINE
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.wire import WireFormat
from course_agent.registry import default_registry


def make(base_url: str, key: str, wire: WireFormat = OPENAI, **options: Any) -> HttpModel:
    return HttpModel(wire, base_url, key, "gpt-test", **options)


KEY = "sk-test-HTTP-SECRET-0123456789abcdef"
LONG_KEY = "sk-proj-" + "Ab1" * 60  # 188 characters
QUESTION = [{"role": "user", "content": "hi"}]
MB = 1 << 20


def model_for(gateway: Gateway, **options: Any) -> HttpModel:
    options = {"timeout": 5.0, "first_backoff": 0.01, **options}
    return make(gateway.url, options.pop("key", KEY), **options)


def failure(model: HttpModel) -> str:
    """The one line a model's stream ended in (it must end in one)."""
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    return message


def peak_memory(run: Callable[[], Any]) -> int:
    """The most Python memory (bytes) allocated at once while `run` ran, the server included."""
    tracemalloc.start()
    try:
        run()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return f"data: {json.dumps({'choices': [choice]})}\n\n".encode()


TEXT_CHUNK = chunk({"content": "a" * 1000})
DONE = chunk({}, "stop") + b"data: [DONE]\n\n"


# -- time: silence and the whole request (item 8) -------------------------------------------------


def test_bytes_trickling_without_a_newline_are_silence(gateway: Gateway) -> None:
    # One byte every 20 ms never lets httpx's read timeout fire; no line ever completes.
    gateway.queue(Reply(parts=endless(b"x"), interval=0.02, hold=10))
    message = failure(model_for(gateway, timeout=0.6))
    assert gateway.url in message
    assert "no data for 0.6 s" in message and "COURSE_AGENT_TIMEOUT" in message


def test_a_half_line_after_data_is_silence_too(gateway: Gateway) -> None:
    start = [TEXT_CHUNK, b'data: {"choices": [{"index": 0, "delta": {"content": "b']
    gateway.queue(Reply(parts=[*start, *endless(b"b", 1000)], interval=0.02, hold=10))
    events: list[Any] = []
    with pytest.raises(GatewayError, match=r"no data for 0\.6 s"):
        events.extend(model_for(gateway, timeout=0.6).stream(QUESTION, []))
    assert merged(events).text == "a" * 1000  # what came before the silence was passed on


def test_the_whole_request_is_bounded_even_while_data_flows(gateway: Gateway) -> None:
    # A data line every 50 ms: never silent, never finished.
    gateway.queue(Reply(parts=endless(chunk({"content": "."})), interval=0.05, hold=10))
    message = failure(model_for(gateway, timeout=5, request_timeout=0.5))
    assert gateway.url in message
    assert "0.5 s" in message and "COURSE_AGENT_REQUEST_TIMEOUT" in message


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
BEFORE_THE_ANSWER = {
    # httpx bounds each read by the silence timeout, not the series of reads before an answer's
    # headers: each of these sends a byte well within every read's timeout, and never an answer.
    "endless 100 Continue": lambda: endless(CONTINUE),
    "headers that never end": lambda: itertools.chain([b"HTTP/1.1 200 OK\r\nX: "], endless(b"a")),
}


@pytest.mark.parametrize("preamble", BEFORE_THE_ANSWER.values(), ids=BEFORE_THE_ANSWER.keys())
def test_the_whole_request_is_bounded_before_the_answer_too(
    gateway: Gateway, preamble: Callable[[], Iterable[bytes]]
) -> None:
    # Past `hold` the gateway answers after all; a client bounded in time hangs up long before.
    late = [chunk({"content": "late"}), DONE]
    gateway.queue(Reply(parts=late, preamble=preamble(), interval=0.02, hold=10))
    message = failure(model_for(gateway, timeout=5, request_timeout=0.5, max_retries=0))
    assert gateway.url in message
    assert "0.5 s" in message and "COURSE_AGENT_REQUEST_TIMEOUT" in message
    assert gateway.hung_up.wait(5)  # the client hung up before the gateway gave up


def test_the_whole_request_is_bounded_before_the_answer_over_tls_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over TLS the socket to shut is the TLS one: the TCP socket under it has been detached.
    cert, key = self_signed(tmp_path)
    trusting = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(http_module, "_tls", lambda: trusting)
    with Gateway(tls=(cert, key)) as gateway:
        late = [chunk({"content": "late"}), DONE]
        gateway.queue(Reply(parts=late, preamble=endless(CONTINUE), interval=0.02, hold=10))
        message = failure(model_for(gateway, timeout=5, request_timeout=0.5, max_retries=0))
        assert gateway.url.startswith("https://") and gateway.url in message
        assert "0.5 s" in message and "COURSE_AGENT_REQUEST_TIMEOUT" in message
        assert gateway.hung_up.wait(5)  # the client hung up before the gateway gave up
        gateway.queue(Reply(parts=[chunk({"content": "hi"}), DONE]))  # and TLS itself works
        assert merged(list(model_for(gateway).stream(QUESTION, []))).text == "hi"


@pytest.mark.parametrize("seconds", [1e10, 1e300])
def test_timeouts_past_what_a_socket_can_wait_are_waited_as_long_as_it_can(
    gateway: Gateway, seconds: float
) -> None:
    # The socket layer overflows past about 300 years (OverflowError, not an httpx error).
    gateway.queue(Reply(parts=[chunk({"content": "hi"}), DONE]))
    model = model_for(gateway, timeout=seconds, request_timeout=seconds)
    assert merged(list(model.stream(QUESTION, []))).text == "hi"


# -- memory: every cap (item 9) -------------------------------------------------------------------


def test_endless_text_stops_at_the_text_cap(gateway: Gateway) -> None:
    gateway.queue(Reply(parts=endless(TEXT_CHUNK)))
    message = failure(model_for(gateway))
    assert gateway.url in message and "text" in message and f"{MAX_TEXT // MB} MB" in message


def test_endless_arguments_stop_at_the_arguments_cap(gateway: Gateway) -> None:
    opening = chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "glob"}}]})
    piece = chunk({"tool_calls": [{"index": 0, "function": {"arguments": "a" * 1000}}]})
    gateway.queue(Reply(parts=itertools.chain([opening], endless(piece))))
    message = failure(model_for(gateway))
    assert gateway.url in message and "arguments" in message
    assert f"{MAX_ARGUMENTS // MB} MB" in message


def opening(index: int, name: str = "glob") -> bytes:
    return chunk({"tool_calls": [{"index": index, "function": {"name": name, "arguments": ""}}]})


def test_endless_calls_stop_at_the_calls_cap(gateway: Gateway) -> None:
    # 32 run; the rest were all held until the turn ended (a million: 400 MB).
    gateway.queue(Reply(parts=(opening(n) for n in itertools.count())))
    model = model_for(gateway)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert gateway.url in messages[0] and f"more than {MAX_CALLS_HELD} calls" in messages[0]
    assert peak < 8 * MB


def test_endless_calls_with_long_names_stop_at_the_turn_cap(gateway: Gateway) -> None:
    # No call has any arguments, and each name fits in a line: together they fill memory.
    name = "n" * (256 << 10)
    gateway.queue(Reply(parts=(opening(n, name) for n in itertools.count())))
    model = model_for(gateway)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert gateway.url in messages[0] and f"more than {MAX_TURN // MB} MB" in messages[0]
    assert peak < MAX_TURN + 4 * MAX_LINE + 8 * MB


def test_a_line_without_end_stops_at_the_line_cap(gateway: Gateway) -> None:
    gateway.queue(Reply(parts=endless(b"data: " + b"a" * 65536)))
    message = failure(model_for(gateway))
    assert gateway.url in message and "line" in message and f"{MAX_LINE // MB} MB" in message


def test_an_event_of_endless_data_lines_stops_at_the_line_cap(gateway: Gateway) -> None:
    # Each line is short; the event they make (data lines are joined) never ends.
    gateway.queue(Reply(parts=endless(b"data: " + b"a" * 1000 + b"\n")))
    message = failure(model_for(gateway))
    assert gateway.url in message and f"{MAX_LINE // MB} MB" in message


def test_a_gigabyte_error_body_is_read_to_64_kb(gateway: Gateway, tmp_path: Path) -> None:
    gigabyte = endless(b"x" * 65536, 16384)  # written lazily: the server never holds it
    gateway.queue(Reply(500, {"Content-Type": "text/plain"}, gigabyte))
    recording = tmp_path / "error.jsonl"
    model = model_for(gateway, max_retries=0, record=recording)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert "HTTP 500" in messages[0] and gateway.url in messages[0]
    assert peak < 8 * MB
    [record] = [json.loads(line) for line in recording.read_text().splitlines()]
    assert record["events"] == [{"error": messages[0]}]  # what was shown, not the body
    assert MAX_ERROR_BODY == 65536


def test_a_gzip_bomb_error_body_is_cut_on_its_unpacked_size(
    gateway: Gateway, tmp_path: Path
) -> None:
    bomb = gzipped(endless(b"x" * MB, 1024))  # 1 GB unpacked, about 1 MB on the wire
    headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    gateway.queue(Reply(502, headers, bomb))
    recording = tmp_path / "error.jsonl"
    model = model_for(gateway, max_retries=0, record=recording)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert "HTTP 502" in messages[0]
    assert peak < 8 * MB
    [record] = [json.loads(line) for line in recording.read_text().splitlines()]
    assert record["events"] == [{"error": messages[0]}]


def test_a_gzip_bomb_stream_stops_at_the_line_cap(gateway: Gateway) -> None:
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    gateway.queue(Reply(200, headers, gzipped(endless(b"\0" * MB, 1024))))
    model = model_for(gateway)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert f"{MAX_LINE // MB} MB" in messages[0]
    assert peak < 4 * MAX_LINE + 8 * MB  # the line being cut, its decoded copy, and buffers


def test_endless_bytes_after_a_gzipped_stream_are_refused_at_once(gateway: Gateway) -> None:
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    start = list(gzipped([chunk({"content": "hi"})]))
    gateway.queue(Reply(200, headers, itertools.chain(start, endless(b"\0" * 65536))))
    model = model_for(gateway, timeout=30)
    messages: list[str] = []
    peak = peak_memory(lambda: messages.append(failure(model)))
    assert gateway.url in messages[0] and "does not unpack as gzip" in messages[0]
    assert peak < 8 * MB


def test_a_gzipped_stream_is_read(gateway: Gateway) -> None:
    body = (Path(__file__).parent / "data/streams/openai-python_plain_content.sse").read_bytes()
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    gateway.queue(Reply(200, headers, list(gzipped([body[:500], body[500:]]))))
    assert merged(list(model_for(gateway).stream(QUESTION, []))).finishes == ("stop",)


def test_an_encoding_the_client_did_not_ask_for_is_refused(gateway: Gateway) -> None:
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "br"}
    gateway.queue(Reply(200, headers, [b"\x1b\x00\x00"]))
    message = failure(model_for(gateway))
    assert gateway.url in message and "br" in message


def test_no_line_is_kept_without_recording(gateway: Gateway) -> None:
    # 20,000 one-character fragments: keeping each received line took 4.2 MB here (measured).
    opening = chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "glob"}}]})
    piece = chunk({"tool_calls": [{"index": 0, "function": {"arguments": "a"}}]})
    body = opening + piece * 20_000 + chunk({}, "tool_calls")
    gateway.queue(Reply(parts=[body[i : i + 65536] for i in range(0, len(body), 65536)]))
    model, merger = model_for(gateway), ToolCallAccumulator()

    def run() -> None:
        for event in model.stream(QUESTION, []):
            if isinstance(event, ToolCallDelta):
                merger.push(event)

    peak = peak_memory(run)
    assert merger.drain()[0].args == "a" * 20_000
    assert peak < 2 * MB  # measured: 0.6 MB, the HTTP client's own buffers


# -- retries (item 11) ----------------------------------------------------------------------------

RETRYABLE = [408, 409, 429, 500, 502, 503, 504, 529]


def answer() -> Reply:
    return fixture_reply("openai-python_plain_content.sse")


@pytest.mark.parametrize("status", RETRYABLE)
def test_each_transient_status_is_retried(gateway: Gateway, status: int) -> None:
    gateway.queue(status_reply(status, '{"error": {"message": "busy"}}'), answer())
    assert merged(list(model_for(gateway).stream(QUESTION, []))).finishes == ("stop",)
    assert len(gateway.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_refusal_is_not_retried(gateway: Gateway, status: int) -> None:
    gateway.queue(status_reply(status, '{"error": {"message": "no"}}'), answer())
    assert f"HTTP {status}" in failure(model_for(gateway))
    assert len(gateway.requests) == 1


def test_a_reset_before_the_first_byte_is_retried(gateway: Gateway) -> None:
    gateway.queue(Reply(ending="abort"), answer())
    assert merged(list(model_for(gateway).stream(QUESTION, []))).finishes == ("stop",)
    assert len(gateway.requests) == 2


def test_retries_are_bounded(gateway: Gateway) -> None:
    gateway.queue(*[Reply(ending="abort")] * 3, answer())
    message = failure(model_for(gateway, max_retries=2))
    assert gateway.url in message and "try again" in message
    assert len(gateway.requests) == 3


def test_a_failure_after_the_stream_started_is_not_retried(gateway: Gateway) -> None:
    gateway.queue(Reply(parts=[TEXT_CHUNK], ending="reset"), answer())
    assert "dropped the connection" in failure(model_for(gateway))
    assert len(gateway.requests) == 1


@pytest.mark.parametrize(
    "retry_after",
    ["3600", format_datetime(datetime.now(timezone.utc) + timedelta(hours=1), usegmt=True)],
    ids=["seconds", "http-date"],
)
def test_a_retry_after_longer_than_the_budget_is_reported_at_once(
    gateway: Gateway, retry_after: str
) -> None:
    gateway.queue(status_reply(429, '{"error": {"message": "slow"}}', {"Retry-After": retry_after}))
    gateway.queue(answer())
    started = time.monotonic()
    message = failure(model_for(gateway))
    assert "HTTP 429" in message and "asks to wait" in message and gateway.url in message
    assert len(gateway.requests) == 1
    assert time.monotonic() - started < MAX_RETRY_WAIT  # reported, not waited out


def test_a_retry_after_past_the_request_deadline_is_reported_at_once(gateway: Gateway) -> None:
    gateway.queue(status_reply(503, "", {"Retry-After": "5"}), answer())
    message = failure(model_for(gateway, request_timeout=2))
    assert "HTTP 503" in message and "asks to wait 5 s" in message
    assert len(gateway.requests) == 1


def test_a_retry_after_in_the_past_is_retried_at_once(gateway: Gateway) -> None:
    gateway.queue(status_reply(429, "", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    gateway.queue(answer())
    assert merged(list(model_for(gateway).stream(QUESTION, []))).finishes == ("stop",)


# -- the stream's contract (item 12) --------------------------------------------------------------

BROKEN = {
    "choices not objects": b'data: {"choices": ["a"]}\n\n',
    "choices an object": b'data: {"choices": {"index": 0}}\n\n',
    "delta a string": b'data: {"choices": [{"index": 0, "delta": "hi"}]}\n\n',
    "tool_calls an object": b'data: {"choices": [{"index": 0, "delta": {"tool_calls": {}}}]}\n\n',
    "call a string": b'data: {"choices": [{"index": 0, "delta": {"tool_calls": ["x"]}}]}\n\n',
    "index a string": (
        b'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0", "id": "c",'
        b' "function": {"name": "glob", "arguments": "{}"}}]}}]}\n\n'
    ),
    "function a list": (
        b'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,'
        b' "function": []}]}}]}\n\n'
    ),
    "name a number": (
        b'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,'
        b' "function": {"name": 7}}]}}]}\n\n'
    ),
    "finish_reason a list": b'data: {"choices": [{"index": 0, "finish_reason": []}]}\n\n',
}


@pytest.mark.parametrize("body", BROKEN.values(), ids=BROKEN.keys())
def test_a_chunk_that_breaks_the_contract_is_a_gateway_error(
    gateway: Gateway, body: bytes, tmp_path: Path
) -> None:
    gateway.queue(Reply(parts=[body, DONE]))
    stopped = list(run_agent("hi", model_for(gateway), default_registry(), ToolContext(tmp_path)))
    last = stopped[-1]
    assert isinstance(last, AgentStopped) and last.reason == "error"
    assert gateway.url in last.message and "merging" not in last.message
    assert "OPENAI_BASE_URL" in last.message


ANTHROPIC_BROKEN = {
    "index a string": (
        b'data: {"type": "content_block_start", "index": "1", "content_block": '
        b'{"type": "tool_use", "id": "t", "name": "glob"}}\n\n'
    ),
    "content_block a string": (
        b'data: {"type": "content_block_start", "index": 0, "content_block": "x"}\n\n'
    ),
    "delta a list": b'data: {"type": "content_block_delta", "index": 0, "delta": []}\n\n',
    "text a number": (
        b'data: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "text_delta", "text": 5}}\n\n'
    ),
    "stop_reason a list": b'data: {"type": "message_delta", "delta": {"stop_reason": []}}\n\n',
    # Arguments for a call that was never opened would make a call without a name, which the
    # next request carries back: Anthropic refuses it, and every request after it.
    "input_json_delta for a block never started": (
        b'data: {"type": "content_block_delta", "index": 3, '
        b'"delta": {"type": "input_json_delta", "partial_json": "{}"}}\n\n'
    ),
    "input_json_delta after its block stopped": (
        b'data: {"type": "content_block_start", "index": 0, "content_block": '
        b'{"type": "tool_use", "id": "t", "name": "glob"}}\n\n'
        b'data: {"type": "content_block_stop", "index": 0}\n\n'
        b'data: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "input_json_delta", "partial_json": "{}"}}\n\n'
    ),
    "input_json_delta for a text block": (
        b'data: {"type": "content_block_start", "index": 0, "content_block": '
        b'{"type": "text", "text": ""}}\n\n'
        b'data: {"type": "content_block_delta", "index": 0, '
        b'"delta": {"type": "input_json_delta", "partial_json": "{}"}}\n\n'
    ),
}


@pytest.mark.parametrize("body", ANTHROPIC_BROKEN.values(), ids=ANTHROPIC_BROKEN.keys())
def test_an_anthropic_event_that_breaks_the_contract_is_a_gateway_error(
    gateway: Gateway, body: bytes, tmp_path: Path
) -> None:
    end = b'data: {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}\n\n'
    gateway.queue(Reply(parts=[body, end]))
    root = gateway.url.removesuffix("/v1")
    model = make(root, KEY, ANTHROPIC, timeout=5.0)
    last = list(run_agent("hi", model, default_registry(), ToolContext(tmp_path)))[-1]
    assert isinstance(last, AgentStopped) and last.reason == "error"
    assert root in last.message and "merging" not in last.message
    assert "ANTHROPIC_BASE_URL" in last.message


def test_a_long_redirect_location_leaves_no_prefix_of_the_key(gateway: Gateway) -> None:
    location = f"https://elsewhere.example/{'p' * 154}?key={LONG_KEY}"  # the key at 185 of 200
    gateway.queue(status_reply(302, "", {"Location": location}))
    message = failure(model_for(gateway, key=LONG_KEY))
    assert "HTTP 302" in message and LONG_KEY[:10] not in message


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_reported_and_not_followed(gateway: Gateway, status: int) -> None:
    with Gateway() as elsewhere:
        target = f"{elsewhere.url}/chat/completions?leak={KEY}"
        gateway.queue(status_reply(status, "", {"Location": target}))
        message = failure(model_for(gateway))
    assert not elsewhere.requests  # the key was never sent there
    assert f"HTTP {status}" in message and gateway.url in message
    assert f"{elsewhere.url}/chat/completions?leak=[redacted]" in message
    assert KEY not in message


@pytest.mark.parametrize(
    "base_url",
    [
        "http://",
        "https:///v1",
        "http://[::1/v1",
        "http://127.0.0.1:99999/v1",
        "http://exa mple.com/v1",
        "http://user:hunter2@gateway.example/v1",
        "https://gateway.example/v1?key=1",
    ],
)
def test_an_invalid_base_url_is_refused_up_front(base_url: str) -> None:
    with pytest.raises(GatewayError) as caught:
        make(base_url, KEY)
    message = str(caught.value)
    assert "OPENAI_BASE_URL" in message and "hunter2" not in message


# -- redaction (item 3) ---------------------------------------------------------------------------


def test_a_long_key_cut_by_the_excerpt_leaves_no_prefix(gateway: Gateway) -> None:
    body = json.dumps({"error": {"message": f"{'x' * 150} sent {LONG_KEY}, refused"}})
    gateway.queue(status_reply(401, body))
    message = failure(model_for(gateway, key=LONG_KEY))
    assert LONG_KEY[:10] not in message and "sent [redacted]" in message


def test_a_long_key_in_a_midstream_error_leaves_no_prefix(gateway: Gateway) -> None:
    error = json.dumps({"error": {"message": f"{'x' * 150} sent {LONG_KEY}"}})
    gateway.queue(sse_reply(TEXT_CHUNK.decode(), f"event: error\ndata: {error}\n\n"))
    message = failure(model_for(gateway, key=LONG_KEY))
    assert LONG_KEY[:10] not in message and "[redacted]" in message


SHORT_KEY = "sk-SECRET123"


def test_a_short_key_after_url_encoding_is_cut(gateway: Gateway, tmp_path: Path) -> None:
    gateway.queue(status_reply(400, f"bad request: /v1?auth=Bearer%20{SHORT_KEY}&stream=1"))
    recording = tmp_path / "session.jsonl"
    message = failure(model_for(gateway, key=SHORT_KEY, record=recording))
    assert "auth=Bearer%20[redacted]&stream=1" in message
    assert SHORT_KEY not in recording.read_text()


def test_a_url_encoded_key_is_cut_from_message_and_recording(
    gateway: Gateway, tmp_path: Path
) -> None:
    key = "sk-abc/def+ghi=jkl-0123456789"
    encoded = "sk-abc%2Fdef%2Bghi%3Djkl-0123456789"
    gateway.queue(status_reply(401, f'{{"error": {{"message": "unknown key {encoded}"}}}}'))
    recording = tmp_path / "session.jsonl"
    message = failure(model_for(gateway, key=key, record=recording))
    assert "unknown key [redacted]" in message
    assert encoded not in recording.read_text() and "[redacted]" in recording.read_text()


def test_a_key_cut_at_the_error_body_cap_leaves_no_prefix(gateway: Gateway, tmp_path: Path) -> None:
    # The key straddles the 64 KB cut: what is kept of the body ends with half of it.
    body = b"x" * (MAX_ERROR_BODY - 20) + LONG_KEY.encode() + b"y" * 1000
    gateway.queue(Reply(500, {"Content-Type": "text/plain"}, [body]))
    recording = tmp_path / "error.jsonl"
    failure(model_for(gateway, key=LONG_KEY, max_retries=0, record=recording))
    assert LONG_KEY[:10] not in recording.read_text()


# -- what json.loads raises besides JSONDecodeError -----------------------------------------------

DEEP = "[" * 100_000  # RecursionError, not JSONDecodeError
LONG_NUMBER = "1" * 5000  # ValueError: past Python's 4,300-digit limit on int(str)
UNREADABLE_JSON = {
    "deep data line": (200, f"data: {DEEP}\n\n"),
    "long index": (200, f'data: {{"choices": [{{"index": {LONG_NUMBER}}}]}}\n\n'),
    "deep error event": (200, f"event: error\ndata: {DEEP}\n\n"),
    "deep error body": (400, DEEP),
    "long number in an error body": (400, f'{{"error": {{"code": {LONG_NUMBER}}}}}'),
    "deep JSON answer": (200, DEEP),
}


@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
@pytest.mark.parametrize(
    ("status", "body"), UNREADABLE_JSON.values(), ids=list(UNREADABLE_JSON.keys())
)
def test_json_that_json_loads_cannot_read_is_a_gateway_error(
    gateway: Gateway, wire: WireFormat, status: int, body: str
) -> None:
    kind = "application/json" if body.startswith(("[", "{")) else "text/event-stream"
    gateway.queue(Reply(status, {"Content-Type": kind}, [body.encode()]))
    root = gateway.url.removesuffix("/v1") if wire is ANTHROPIC else gateway.url
    message = failure(make(root, KEY, wire, timeout=5.0, max_retries=0))
    assert root in message
