"""`--record FILE` keeps the raw stream of a live session; `--replay FILE` plays it offline.

Live sessions are the scripted model served over loopback HTTP, in both wire formats; replays run
with no key and the gateway gone. tests/data/sessions/ holds a recording committed as a test.
"""

import json
from pathlib import Path

import pytest
from gateway import Gateway, Received, Reply, sse_reply
from IPython.utils.capture import capture_output
from scripted_gateway import ScriptedGateway

from course_agent.offline.repository import QUESTION, build_sandbox

KEY = "sk-test-RECORD-0123456789-never-saved"
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
SESSIONS = Path(__file__).parent / "data" / "sessions"
COMMITTED = SESSIONS / "scripted-why-red.jsonl"

# The cards of the course's offline question on the generated sandbox (as in test_cli.py).
CARDS = [
    '> glob({"pattern":"**/*.js"})',
    "v glob fed back 50 chars - src/calc.js",
    '> grep({"pattern":"divide\\\\("})',
    "v grep fed back 361 chars - src/calc.js:8:export function divide(a, b) {",
    '> read_file({"path":"src/calc.js"})',
    "v read_file fed back 386 chars - src/calc.js (lines 1-13 of 13)",
]
# The notebook's cards: the terminal's card lines with the arguments after the name.
NOTEBOOK_CARDS = [
    'v glob({"pattern":"**/*.js"}) fed back 50 chars - src/calc.js',
    'v grep({"pattern":"divide\\\\("}) fed back 361 chars - '
    "src/calc.js:8:export function divide(a, b) {",
    'v read_file({"path":"src/calc.js"}) fed back 386 chars - src/calc.js (lines 1-13 of 13)',
]
CONCLUSION = (
    "The test 'divide' is red because src/calc.js line 12 rounds down: "
    "`return Math.floor(a / b)` turns divide(7, 2) into 3, while test/calc.test.js expects 3.5. "
    "Return `a / b` without Math.floor and the test goes green."
)


def cards(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line[:2] in ("> ", "v ", "x ")]


def gateway_url(gateway: ScriptedGateway, provider: str) -> str:
    return gateway.root_url if provider == "anthropic" else gateway.url


@pytest.mark.parametrize("provider", KEYS)
def test_a_cli_session_replays_offline_line_for_line(cli, tmp_path, provider):
    root, recording = build_sandbox(tmp_path), tmp_path / "session.jsonl"
    with ScriptedGateway(wire=provider) as gateway:
        url = gateway_url(gateway, provider)
        args = ["--provider", provider, "--root", str(root), QUESTION]
        live = cli("--base-url", url, "--record", str(recording), *args, env={KEYS[provider]: KEY})
    assert live.returncode == 0, live.stdout + live.stderr
    assert cards(live.stdout) == CARDS

    replayed = cli("--replay", str(recording), *args)  # no key, and the gateway is gone
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    notice, *lines = replayed.stdout.splitlines()
    assert notice == f"replaying {recording} (offline)"
    origin, *live_lines = live.stdout.splitlines()  # live, the first line names the gateway
    assert origin == f"gateway {url} (--base-url), key from {KEYS[provider]} in the environment"
    assert lines == live_lines
    assert lines[-1] == CONCLUSION

    records = [json.loads(line) for line in recording.read_text().splitlines()]
    assert [record["status"] for record in records] == [200, 200, 200]
    assert [record["request"]["n_messages"] for record in records] == [2, 5, 7]
    assert KEY not in recording.read_text()


def run_cell(shell, source):
    with capture_output() as captured:
        result = shell.run_cell(source)
    assert result.error_in_exec is None
    return captured


def test_a_magic_session_replays_offline_with_the_same_cards(shell, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    root = build_sandbox(tmp_path)
    with ScriptedGateway() as gateway:
        live = run_cell(
            shell, f"%%agent --base-url {gateway.url} --root {root} --record s.jsonl\n{QUESTION}"
        )
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run_cell(shell, f"%%agent --replay s.jsonl --root {root}\n{QUESTION}")

    assert [output.data["text/plain"] for output in live.outputs] == NOTEBOOK_CARDS
    assert [output.data for output in replayed.outputs] == [output.data for output in live.outputs]
    origin, shown = live.stdout.split("\n", 1)
    assert (
        origin == f"gateway {gateway.url} (--base-url), key from OPENAI_API_KEY in the environment"
    )
    assert replayed.stdout == "replaying s.jsonl (offline)\n" + shown
    assert replayed.stderr == live.stderr == ""
    assert KEY not in Path("s.jsonl").read_text()


def test_recording_where_it_cannot_be_written_is_one_line(cli, tmp_path):
    root = build_sandbox(tmp_path)
    with ScriptedGateway() as gateway:
        args = ["--base-url", gateway.url, "--root", str(root), "--record", "no/such/dir/s.jsonl"]
        done = cli(*args, QUESTION, env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        "! cannot write the recording no/such/dir/s.jsonl (No such file or directory); "
        "record to a file in a folder that exists and is writable"
    )
    assert "Traceback" not in done.stdout + done.stderr


# -- a recorded session is a test -----------------------------------------------------------------


def test_the_committed_session_replays_its_cards_and_conclusion(cli, tmp_path):
    root = build_sandbox(tmp_path)
    done = cli("--replay", str(COMMITTED), "--root", str(root), QUESTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert cards(done.stdout) == CARDS
    assert done.stdout.splitlines()[-1] == CONCLUSION


def test_the_committed_session_replays_in_the_magic(shell, tmp_path):
    root = build_sandbox(tmp_path)
    captured = run_cell(shell, f"%%agent --replay {COMMITTED} --root {root}\n{QUESTION}")
    assert [output.data["text/plain"] for output in captured.outputs] == NOTEBOOK_CARDS
    assert captured.stdout.endswith(f"{CONCLUSION}\n")


def test_a_replay_runs_the_tools_for_real(cli, tmp_path):
    # The recording holds what the model said, not what the tools found: change the file and the
    # read_file card changes with it, while the model's words (the conclusion) stay as recorded.
    root = build_sandbox(tmp_path)
    with (root / "src" / "calc.js").open("a") as file:
        file.write("// reviewed\n")
    done = cli("--replay", str(COMMITTED), "--root", str(root), QUESTION)
    assert cards(done.stdout)[:5] == CARDS[:5]
    assert (
        cards(done.stdout)[5] == "v read_file fed back 402 chars - src/calc.js (lines 1-14 of 14)"
    )
    assert done.stdout.splitlines()[-1] == CONCLUSION


def test_the_committed_session_holds_model_output_and_no_key():
    records = [json.loads(line) for line in COMMITTED.read_text().splitlines()]
    assert [record["status"] for record in records] == [200, 200, 200]
    text = COMMITTED.read_text()
    assert "sk-" not in text and "Bearer" not in text
    # What the model said is there; what read_file found (the whole of calc.js) is not.
    assert "rounds " in text and "export function add" not in text


# -- hole 3: a key split over two stream lines is recorded whole, as [redacted] -----------------


def key_in_two_lines(received: Received) -> Reply:
    """A gateway that echoes the key as a call's arguments, half in one line, half in the next."""
    if any(m["role"] == "tool" for m in received.body["messages"]):
        answer = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
        return sse_reply(f"data: {json.dumps(answer)}\n\n", "data: [DONE]\n\n")
    pieces = ['{"pattern": "' + KEY[:14], KEY[14:] + '"}']
    lines = [
        {"index": 0, "id": "call_1", "function": {"name": "glob", "arguments": pieces[0]}},
        {"index": 0, "function": {"arguments": pieces[1]}},
    ]
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [line]}}]} for line in lines]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return sse_reply(*(f"data: {json.dumps(c)}\n\n" for c in chunks), "data: [DONE]\n\n")


def test_a_key_split_over_two_stream_lines_is_never_recorded_nor_replayed(cli, tmp_path):
    root, recording = build_sandbox(tmp_path), tmp_path / "session.jsonl"
    with Gateway(key_in_two_lines) as gateway:
        args = ["--root", str(root), "q"]
        live = cli("--base-url", gateway.url, "--record", str(recording), *args,
                   env={"OPENAI_API_KEY": KEY})  # fmt: skip
    assert live.returncode == 0, live.stdout + live.stderr
    saved = recording.read_text()
    assert KEY[:14] not in saved and KEY[14:] not in saved and "[redacted]" in saved

    replayed = cli("--replay", str(recording), *args)  # no key set: nothing left to cut
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert KEY[:14] not in replayed.stdout and KEY[14:] not in replayed.stdout
    assert '> glob({"pattern": "[redacted]"})' in replayed.stdout.splitlines()
