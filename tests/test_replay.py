import io
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from gateway import Gateway, Reply, fixture_reply, status_reply

from course_agent.protocol import GatewayError, ModelEvent, TextDelta
from course_agent.providers import recording as recording_module
from course_agent.providers import replay as replay_module
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.replay import ReplayModel, read_recording

KEY = "sk-test-SECRET-1234567890abcdef"
SESSION = [
    "vercel-ai_claude-openai-compat_index1_after_text.sse",
    "openai-python_parallel_tool_calls.sse",
    "vercel-ai_mistral_tool_call_no_index_finish_same_chunk.jsonl",
    "pydantic-ai_openrouter_keepalive_comments.sse",
]


def transcript(turn: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": "hi"}] + [{"role": "assistant", "content": "."}] * turn


def outcome(model: HttpModel | ReplayModel, turn: int) -> list[ModelEvent] | str:
    """The events of one turn, or the error message it ended in."""
    try:
        return list(model.stream(transcript(turn), []))
    except GatewayError as error:
        return str(error)


def record_session(gateway: Gateway, record: Path | io.StringIO) -> list[list[ModelEvent] | str]:
    gateway.queue(*(fixture_reply(name) for name in SESSION))
    model = HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5, record=record)
    return [outcome(model, turn) for turn in range(len(SESSION))]


def test_record_then_replay_gives_identical_events(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    live = record_session(gateway, recording)
    replay = ReplayModel(recording)
    assert [outcome(replay, turn) for turn in range(len(SESSION))] == live
    assert all(isinstance(turn, list) and turn for turn in live)


def test_replay_is_deterministic(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    record_session(gateway, recording)
    first, second = ReplayModel(recording), ReplayModel(recording)
    assert [outcome(first, n) for n in range(4)] == [outcome(second, n) for n in range(4)]


def test_recording_format(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    record_session(gateway, recording)
    records = [json.loads(line) for line in recording.read_text().splitlines()]
    assert len(records) == len(SESSION)
    assert records[1]["request"] == {"gateway": gateway.url, "model": "gpt-test", "n_messages": 2}
    assert records[1]["status"] == 200
    # The events as the stream showed them, in order: what a replay plays back.
    assert records[1]["events"][-1] == {"finish": "tool_calls"}
    assert next(event for event in records[1]["events"] if "call" in event)["call"][0] == 0


def test_recording_to_an_open_file(gateway: Gateway) -> None:
    sink = io.StringIO()
    record_session(gateway, sink)
    assert len(sink.getvalue().splitlines()) == len(SESSION)


def test_errors_are_recorded_and_replayed_without_the_key(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "errors.jsonl"
    # Both replies echo the Authorization header, as leaky gateways do.
    unauthorised = '{"error": {"message": "bad key {authorization}"}}'
    midstream = 'event: error\ndata: {"error": {"message": "said {authorization}"}}\n\n'
    gateway.queue(
        status_reply(401, unauthorised, echo_authorization=True),
        Reply(parts=[midstream.encode()], echo_authorization=True),
    )
    model = HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5, record=recording)
    live = [outcome(model, 0), outcome(model, 1)]
    replay = ReplayModel(recording)
    replayed = [outcome(replay, 0), outcome(replay, 1)]

    assert replayed == live
    assert "HTTP 401" in live[0] and "mid-stream" in live[1]
    assert KEY not in recording.read_text()
    assert "[redacted]" in recording.read_text()


def test_key_is_nowhere_in_a_normal_recording(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    record_session(gateway, recording)
    assert KEY not in recording.read_text()
    assert "SECRET" not in recording.read_text()


def test_exhausted_recording_says_so(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    record_session(gateway, recording)
    replay = ReplayModel(recording)
    for turn in range(len(SESSION)):
        outcome(replay, turn)
    with pytest.raises(GatewayError, match="holds 4 responses and all were played"):
        list(replay.stream(transcript(0), []))


def test_missing_recording(tmp_path: Path) -> None:
    with pytest.raises(GatewayError, match=r"cannot read recording .*record=path"):
        ReplayModel(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[]",
        '{"status": 200}',
        '{"lines": []}',
        '{"status": 200, "lines": [1, 2]}',  # lines that are not text
        '{"status": 200, "lines": [{"a": 1}]}',
        '{"status": 200, "lines": "data: x"}',
        '{"status": "200", "lines": []}',
        '{"status": 200, "lines": [], "request": "x"}',  # a request that is not an object
        '{"status": 200, "lines": [], "request": {"gateway": 7}}',
        '{"status": 200, "lines": [], "request": {"model": []}}',
        '{"status": 200, "lines": ' + "[" * 100_000,  # json.loads: RecursionError
        '{"status": 200, "lines": [], "n": ' + "1" * 5000 + "}",  # json.loads: ValueError
    ],
)
def test_malformed_recording_names_the_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"status": 200, "lines": []}\n' + line + "\n")
    with pytest.raises(GatewayError, match="line 2 is not a recorded response"):
        read_recording(path)


def test_label_names_the_file(gateway: Gateway, tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    record_session(gateway, recording)
    assert ReplayModel(recording).label == "replay of session.jsonl"


def test_another_wire_format_brings_its_own_parser(gateway: Gateway, tmp_path: Path) -> None:
    # A recording of the older form keeps the body's lines, and replays through the parser.
    recording = tmp_path / "session.jsonl"
    record = {"request": {"gateway": gateway.url}, "status": 200, "lines": ["data: {}"]}
    recording.write_text(json.dumps(record) + "\n")

    def first_line(lines: Iterable[str], gateway_url: str) -> Iterator[ModelEvent]:
        yield TextDelta(f"{gateway_url} {next(iter(lines))[:5]}")

    replay = ReplayModel(recording, replace(OPENAI, parse=first_line))
    assert list(replay.stream(transcript(0), [])) == [TextDelta(f"{gateway.url} data:")]


def test_a_replayed_anthropic_error_names_the_anthropic_settings(tmp_path):
    recording = tmp_path / "error.jsonl"
    record = {
        "request": {"gateway": "https://api.anthropic.com", "model": "claude", "n_messages": 2},
        "status": 401,
        "lines": ['{"type":"error","error":{"type":"authentication_error","message":"bad key"}}'],
    }
    recording.write_text(json.dumps(record) + "\n")
    with pytest.raises(GatewayError) as caught:
        list(ReplayModel(recording, ANTHROPIC).stream([], []))
    assert "ANTHROPIC_API_KEY" in str(caught.value) and "OPENAI" not in str(caught.value)


def test_a_recording_cut_short_by_a_failure_is_still_one_valid_line(
    gateway: Gateway, tmp_path: Path
) -> None:
    # Lines are written as they arrive, not kept: a turn that breaks off still closes its record.
    recording = tmp_path / "session.jsonl"
    text = 'data: {"choices": [{"index": 0, "delta": {"content": "Lo"}}]}\n\n'
    gateway.queue(Reply(parts=[text.encode()], ending="drop"))
    model = HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5, record=recording)
    live = outcome(model, 0)
    assert "dropped the connection" in live
    [record] = read_recording(recording)
    assert record["events"] == [{"text": "Lo"}, {"error": live}]
    assert outcome(ReplayModel(recording), 0) == live  # the same error, replayed


def test_a_recording_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"status": 200, "lines": []}\n{"status": 200, "lines": ["\xff\xfe"]}\n')
    with pytest.raises(GatewayError, match=r"bad\.jsonl is not UTF-8 text"):
        read_recording(path)


def test_a_recording_is_read_up_to_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real cap is 64 MB; one line of 1 GB was read whole (3.3 GB of memory at its peak).
    monkeypatch.setattr(replay_module, "MAX_RECORDING", 1 << 10)
    path = tmp_path / "big.jsonl"
    path.write_text('{"status": 200, "lines": ["' + "a" * 5000 + '"]}\n')
    with pytest.raises(GatewayError, match=r"big\.jsonl holds more than 1 KB"):
        read_recording(path)
    path.write_text('{"status": 200, "lines": ["' + "a" * 900 + '"]}\n')
    [record] = read_recording(path)
    assert record["lines"] == ["a" * 900]


def test_recording_one_answer_stops_at_the_cap_a_replay_reads(
    gateway: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks without end: never silent, so only the request timeout (600 s) ended them, with
    # 1.6 GB written to the recording by then.
    monkeypatch.setattr(recording_module, "MAX_RECORDING", 64 << 10)
    chunk = b'data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}\n\n'
    gateway.queue(Reply(parts=itertools.repeat(chunk)))
    recording = tmp_path / "session.jsonl"
    model = HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5, record=recording)
    message = outcome(model, 0)
    assert isinstance(message, str) and "would pass 64 KB" in message
    assert gateway.url in message
    assert len(read_recording(recording)) == 1  # still one valid response, and not over the cap
    assert 60 << 10 < len(recording.read_text()) <= 64 << 10


def test_a_key_with_a_character_escaped_is_not_recorded(gateway: Gateway, tmp_path: Path) -> None:
    line = 'data: {"choices": [{"index": 0, "delta": {"content": "\\u0073' + KEY[1:] + '"}}]}'
    gateway.queue(Reply(parts=[f"{line}\n\n".encode()], ending="drop"))
    recording = tmp_path / "session.jsonl"
    outcome(HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5, record=recording), 0)
    assert KEY[1:] not in recording.read_text() and "[redacted]" in recording.read_text()
