"""The key battery (issue 30 item 1): every spelling of a key, in every channel out (the model's
text, a call's arguments, a tool result, an error message, a recorded event), split at every
position, through HttpModel over loopback in six stream shapes, the CLI, --record, --replay, and
the magic with its widget state. Nothing shown may spell the key in any way the redactor knows."""

import base64
import io
import itertools
import json
from typing import ClassVar

import pytest
from gateway import Gateway, Received, Reply, sse_reply
from hypothesis import given, settings
from hypothesis import strategies as st

from course_agent.app.channels import RedactingRegistry, redacted_events, shown_events
from course_agent.protocol import (
    AgentStopped,
    Finish,
    GatewayError,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolResult,
)
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.replay import ReplayModel
from course_agent.safety import redaction
from course_agent.safety.redaction import REDACTED, redact

KEY = "sk-BATTERY-0123456789abcdef"  # 27 characters, key-shaped
MIDDLE = "battery-0123"  # any output holding this (in any case) holds the key's own part


def _b64(data: bytes, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()


SPELLINGS = {
    "as written": KEY,
    "upper case": KEY.upper(),
    "lower case": KEY.lower(),
    "mixed case": KEY.swapcase(),
    "JSON \\u escapes": "".join(f"\\u{ord(ch):04x}" for ch in KEY),
    "one \\u escape": f"\\u{ord(KEY[0]):04x}" + KEY[1:],
    "URL-encoded": "".join(f"%{ord(ch):02X}" for ch in KEY),
    "one %-escape": KEY[:5] + f"%{ord(KEY[5]):02x}" + KEY[6:],
    "UTF-16 LE with BOM": "\ufffd\ufffd" + "".join(ch + "\0" for ch in KEY),
    "UTF-16 BE": "".join("\0" + ch for ch in KEY),
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
    "base64": _b64(KEY.encode()),
    "base64 of Bearer": _b64(f"Bearer {KEY}".encode()),
    "base64url, offset": _b64(b"x" + KEY.encode(), urlsafe=True),
    "prefix of 20": KEY[:20],
    "prefix of 24, upper": KEY[:24].upper(),
}


@pytest.fixture(autouse=True)
def known_key():
    before = set(redaction._KNOWN)
    redaction.remember_secrets([KEY])
    yield
    redaction._KNOWN.clear()
    redaction._KNOWN.update(before)


def clean(text: str) -> bool:
    """No spelling of the key the redactor knows, nor the key's own part in any case."""
    return redact(text, [KEY]) == text and MIDDLE not in text.lower()


def test_every_spelling_is_one_the_redactor_cuts_and_the_battery_is_not_vacuous():
    for name, spelled in SPELLINGS.items():
        assert not clean(f"before {spelled} after"), name
        shown = redact(f"before {spelled} after", [KEY])
        assert REDACTED in shown and clean(shown), name


# -- the channels of a model's events, split at every position -----------------------------------


def _text(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _args(events) -> str:
    return "".join(e.args_delta or "" for e in events if isinstance(e, ToolCallDelta))


@pytest.mark.parametrize("name", SPELLINGS)
def test_text_and_arguments_split_at_every_position_are_cut_whole(name):
    whole = f"before {SPELLINGS[name]} after"
    arguments = json.dumps({"pattern": whole})
    expected_text, expected_args = redact(whole, [KEY]), redact(arguments, [KEY])
    assert clean(expected_text) and clean(expected_args)
    for at in range(len(whole) + 1):
        events = [TextDelta(whole[:at]), TextDelta(whole[at:]), Finish("stop")]
        assert _text(redacted_events(events)) == expected_text, at
    for at in range(len(arguments) + 1):
        events = [ToolCallDelta(0, "c1", "grep", arguments[:at])]
        events += [ToolCallDelta(0, args_delta=arguments[at:]), Finish("tool_calls")]
        assert _args(redacted_events(events)) == expected_args, at


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(SPELLINGS)),
    cuts=st.lists(st.integers(0, 400), min_size=1, max_size=8),
)
def test_text_split_into_many_pieces_is_cut_whole(name, cuts):
    whole = f"x {SPELLINGS[name]} y"
    points = sorted({0, len(whole), *(cut % (len(whole) + 1) for cut in cuts)})
    events = [TextDelta(whole[a:b]) for a, b in itertools.pairwise(points)]
    assert _text(redacted_events(events)) == redact(whole, [KEY])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=KEY + KEY.upper() + "\\u00%&#;x7 ", max_size=40), max_size=30))
def test_a_channel_never_holds_more_than_one_key_in_its_longest_spelling(pieces):
    stream = redaction.StreamRedactor([KEY])
    for piece in pieces:
        stream.feed(piece)
        assert stream.holding <= redaction.LONGEST_SPELLING * len(KEY)


@pytest.mark.parametrize("name", SPELLINGS)
def test_a_tool_result_and_a_stop_message_leave_cut(tmp_path, name):
    spelled = SPELLINGS[name]

    class Leaky:
        tools: ClassVar = {"leak": None}

        def list(self):
            return []

        def execute(self, call, ctx):
            return ToolResult(f"found {spelled}\n", meta={"lines": [spelled], "path": spelled})

    result = RedactingRegistry(Leaky()).execute(ToolCall("c1", "leak", "{}"), ToolContext(tmp_path))
    assert clean(result.content) and clean(json.dumps(result.meta, ensure_ascii=False))
    [stopped] = shown_events([AgentStopped("error", f"gateway said {spelled}")])
    assert clean(stopped.message)


# -- six stream shapes over loopback, the key split at every position, recorded and replayed -----


def _openai(*chunks: dict) -> list[str]:
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]


def _anthropic(*events: dict) -> list[str]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]


STOP = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
CALLS = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
MESSAGE_START = {"type": "message_start", "message": {"id": "m", "role": "assistant"}}
MESSAGE_END = [
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
    {"type": "message_stop"},
]


def choice_then_choice_without_index(first: str, second: str) -> list[str]:
    return _openai(
        {"choices": [{"index": 0, "delta": {"content": first}}]},
        {"choices": [{"delta": {"content": second}}]},
        STOP,
    )


def fragment_then_fragment_without_index(first: str, second: str) -> list[str]:
    call = {"index": 0, "id": "c1", "function": {"name": "glob", "arguments": first}}
    return _openai(
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": second}}]}}]},
        CALLS,
    )


def json_key_spelled_with_an_escape(first: str, second: str) -> list[str]:
    escaped = 'data: {"choices": [{"index": 0, "\\u0064elta": {"content": %s}}]}\n\n'
    return [escaped % json.dumps(first), *choice_then_choice_without_index("", second)[1:]]


def one_line_split_between_two_reads(first: str, second: str) -> list[str]:
    line = f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': first + second}}]})}"
    at = line.index(json.dumps(first + second)[:-1]) + len(json.dumps(first)) - 1
    return [line[:at], line[at:] + "\n\n", *_openai(STOP)]


def anthropic_block_start_text_then_delta(first: str, second: str) -> list[str]:
    return _anthropic(
        MESSAGE_START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": first},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": second},
        },
        {"type": "content_block_stop", "index": 0},
        *MESSAGE_END,
    )


def anthropic_tool_input_in_two_deltas(first: str, second: str) -> list[str]:
    block = {"type": "tool_use", "id": "t1", "name": "glob", "input": {}}
    delta = {"type": "input_json_delta"}
    return _anthropic(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": {**delta, "partial_json": first}},
        {"type": "content_block_delta", "index": 0, "delta": {**delta, "partial_json": second}},
        {"type": "content_block_stop", "index": 0},
        *MESSAGE_END,
    )


# shape -> (its wire format, whether the halves are a call's arguments)
SHAPES = {
    choice_then_choice_without_index: (OPENAI, False),
    fragment_then_fragment_without_index: (OPENAI, True),
    json_key_spelled_with_an_escape: (OPENAI, False),
    one_line_split_between_two_reads: (OPENAI, False),
    anthropic_block_start_text_then_delta: (ANTHROPIC, False),
    anthropic_tool_input_in_two_deltas: (ANTHROPIC, True),
}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.__name__)
@pytest.mark.parametrize("name", ["as written", "JSON \\u escapes", "UTF-16 BE", "base64"])
def test_six_stream_shapes_split_at_every_position_show_record_and_replay_no_key(
    tmp_path, shape, name
):
    wire, is_call = SHAPES[shape]
    whole = f"say {SPELLINGS[name]} ok"
    channel = json.dumps({"pattern": whole}) if is_call else whole
    positions = range(len(channel) + 1)
    recording = tmp_path / "session.jsonl"
    with Gateway() as gateway:
        gateway.queue(*(sse_reply(*shape(channel[:at], channel[at:])) for at in positions))
        model = HttpModel(wire, gateway.url, KEY, "m", timeout=10, record=recording)
        for at in positions:
            shown = _args if is_call else _text
            got = shown(model.stream([{"role": "user", "content": "q"}], []))
            assert got == redact(channel, [KEY]), (at, got)
    assert clean(recording.read_text(encoding="utf-8"))
    replay = ReplayModel(recording, wire)
    for _ in positions:
        events = list(replay.stream([], []))
        assert clean(_args(events) if is_call else _text(events))


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(SPELLINGS)),
    shape=st.sampled_from(list(SHAPES)),
    at=st.integers(0, 1 << 10),
)
def test_every_spelling_in_every_shape_split_anywhere_is_shown_and_recorded_cut(name, shape, at):
    wire, is_call = SHAPES[shape]
    whole = f"say {SPELLINGS[name]} ok"
    channel = json.dumps({"pattern": whole}) if is_call else whole
    at %= len(channel) + 1
    sink = io.StringIO()
    with Gateway() as gateway:
        gateway.queue(sse_reply(*shape(channel[:at], channel[at:])))
        model = HttpModel(wire, gateway.url, KEY, "m", timeout=10, record=sink)
        events = list(model.stream([], []))
    assert (_args if is_call else _text)(events) == redact(channel, [KEY])
    assert clean(sink.getvalue())


@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
@pytest.mark.parametrize("name", SPELLINGS)
def test_an_error_body_holding_a_spelling_is_shown_recorded_and_replayed_cut(tmp_path, wire, name):
    body = json.dumps({"error": {"message": f"bad key {SPELLINGS[name]} here"}})  # \u-escaped
    midstream = f"event: error\ndata: {body}\n\n"
    recording = tmp_path / "errors.jsonl"
    with Gateway() as gateway:
        gateway.queue(
            Reply(401, {"Content-Type": "application/json"}, [body.encode()]),
            sse_reply(midstream),
        )
        model = HttpModel(wire, gateway.url, KEY, "m", timeout=10, max_retries=0, record=recording)
        live = []
        for _ in range(2):
            with pytest.raises(GatewayError) as caught:
                list(model.stream([], []))
            live.append(str(caught.value))
    assert all(clean(message) for message in live), live
    assert clean(recording.read_text(encoding="utf-8"))
    redaction._KNOWN.discard(KEY)  # a replay in a process that knows no key: nothing to cut with
    replay = ReplayModel(recording, wire)
    for message in live:
        with pytest.raises(GatewayError) as caught:
            list(replay.stream([], []))
        assert str(caught.value) == message


# -- through the faces: the CLI, --record, --replay, the magic and its widget state --------------

NOTES = "\n".join(f"{name}: {spelled}" for name, spelled in SPELLINGS.items()) + "\n"
SAID = " ".join(SPELLINGS.values())


def leaky_gateway(received: Received) -> Reply:
    """Turn 1: text holding every spelling once for each place it can be split, split there
    between two chunks; a read_file of a file holding every spelling; a glob whose pattern holds
    the key, split between two fragments. Turn 2: the same text again, then the end."""
    text = [
        piece
        for spelled in SPELLINGS.values()
        for at in range(len(spelled) + 1)
        for piece in (spelled[:at], spelled[at:] + " ")
    ]
    chunks = [{"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in text]
    if not any(message["role"] == "tool" for message in received.body["messages"]):
        pattern = json.dumps({"pattern": f"**/{KEY}*"})
        calls = [
            {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": ""}},
            {"index": 0, "function": {"arguments": json.dumps({"path": "notes.txt"})}},
            {"index": 1, "id": "c2", "function": {"name": "glob", "arguments": pattern[:20]}},
            {"index": 1, "function": {"arguments": pattern[20:]}},
        ]
        chunks += [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]} for call in calls]
        chunks.append(CALLS)
    else:
        chunks.append(STOP)
    return sse_reply(*_openai(*chunks))


def test_the_cli_shows_sends_records_and_replays_no_spelling(cli, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    recording = tmp_path / "session.jsonl"
    with Gateway(leaky_gateway) as gateway:
        args = ["--root", str(root), "--record", str(recording), "q"]
        live = cli("--base-url", gateway.url, *args, env={"OPENAI_API_KEY": KEY})
        sent = json.dumps([request.body for request in gateway.requests], ensure_ascii=False)
    assert live.returncode == 0, live.stdout + live.stderr
    assert REDACTED in live.stdout and "read_file" in live.stdout
    for text in (live.stdout, live.stderr, sent, recording.read_text(encoding="utf-8")):
        assert clean(text)
    replayed = cli("--replay", str(recording), "--root", str(root), "q")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert clean(replayed.stdout + replayed.stderr) and "read_file" in replayed.stdout


def test_the_cli_shows_a_mid_stream_error_and_its_replay_without_the_key(cli, tmp_path):
    message = " ".join(list(SPELLINGS.values())[:6])
    body = json.dumps({"error": {"message": message}})
    recording = tmp_path / "errors.jsonl"
    with Gateway() as gateway:
        gateway.queue(sse_reply(f"event: error\ndata: {body}\n\n"))
        args = ["--base-url", gateway.url, "--root", str(tmp_path), "--record", str(recording)]
        live = cli(*args, "q", env={"OPENAI_API_KEY": KEY})
    assert live.returncode == 1 and "mid-stream" in live.stdout + live.stderr
    replayed = cli("--replay", str(recording), "--root", str(tmp_path), "q")
    assert replayed.returncode == 1
    for text in (
        live.stdout + live.stderr,
        replayed.stdout + replayed.stderr,
        recording.read_text(),
    ):
        assert clean(text)


def _widget_values(widget) -> list[str]:
    values = [v for v in widget.get_state().values() if isinstance(v, str)]
    for child in getattr(widget, "children", ()):
        values += _widget_values(child)
    return values


def test_the_magic_its_cards_widget_state_and_transcript_hold_no_spelling(
    shell, monkeypatch, tmp_path
):
    from IPython.utils.capture import capture_output

    from course_agent.notebook import magics

    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    cards = []

    class Keeping(magics.LiveCards):
        def start(self, call, position):
            cards.append(super().start(call, position))
            return cards[-1]

    monkeypatch.setattr(magics, "LiveCards", Keeping)
    monkeypatch.setattr(magics.AgentMagics, "_notebook_frontend", lambda self: True)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Gateway(leaky_gateway) as gateway, capture_output() as captured:
        shell.run_cell(f"%%agent --base-url {gateway.url} --root {root} --pace 0\nq")
    assert len(cards) == 2
    for card in cards:
        card._unfold(True)  # the fragments list, drawn on demand
    shown = [captured.stdout, captured.stderr]
    shown += [json.dumps(output.data, ensure_ascii=False) for output in captured.outputs]
    shown += [value for card in cards for value in _widget_values(card.box)]
    shown.append(json.dumps(shell.magics.conversation.messages, ensure_ascii=False))
    assert any(REDACTED in text for text in shown)
    for text in shown:
        assert clean(text)


def test_a_recording_to_an_open_file_holds_what_was_shown():
    sink = io.StringIO()
    whole = f"k={KEY}."
    with Gateway() as gateway:
        gateway.queue(sse_reply(*choice_then_choice_without_index(whole[:9], whole[9:])))
        model = HttpModel(OPENAI, gateway.url, KEY, "m", timeout=10, record=sink)
        shown = _text(model.stream([], []))
    [record] = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert shown == f"k={REDACTED}." == "".join(e.get("text", "") for e in record["events"])


def test_the_magic_records_and_replays_no_spelling(shell, monkeypatch, tmp_path):
    from IPython.utils.capture import capture_output

    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Gateway(leaky_gateway) as gateway, capture_output() as live:
        shell.run_cell(f"%%agent --base-url {gateway.url} --root {root} --record s.jsonl\nq")
    redaction._KNOWN.discard(KEY)  # replayed where no key is known: nothing left to cut with
    monkeypatch.delenv("OPENAI_API_KEY")
    with capture_output() as replayed:
        shell.run_cell(f"%%agent --replay s.jsonl --root {root}\nq")
    saved = (tmp_path / "s.jsonl").read_text(encoding="utf-8")
    for captured in (live, replayed):
        shown = [captured.stdout, captured.stderr]
        shown += [json.dumps(output.data, ensure_ascii=False) for output in captured.outputs]
        assert "read_file" in " ".join(shown)
        for text in shown:
            assert clean(text)
    assert clean(saved) and REDACTED in saved
    assert clean(json.dumps(shell.magics.conversation.messages, ensure_ascii=False))
