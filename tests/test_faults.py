"""Every gateway fault as a user meets it: the CLI in a subprocess, %%agent in a real IPython shell.

Each fault is one line naming its cause and the gateway, with no traceback and no key; the CLI
exits 1; the magic keeps a valid transcript, and running the cell again retries the broken turn.
"""

import pytest
from gateway import Reply, endless, html_reply, sse_reply, status_reply
from IPython.utils.capture import capture_output
from scripted_gateway import ScriptedGateway

from course_agent.loop import check_transcript
from course_agent.offline.repository import QUESTION, build_sandbox

KEY = "sk-test-FAULTS-0123456789-never-shown"
CHUNK = 'data: {"choices": [{"index": 0, "delta": {"content": "Lo"}, "finish_reason": null}]}\n\n'
WORDS = CHUNK.replace('"Lo"', '"' + "Lorem ipsum " * 80 + '"').encode()  # about 1 KB of text
SILENT_TIMEOUT = "0.5"  # COURSE_AGENT_TIMEOUT (s) for a gateway that sends nothing, or keep-alives
TIMEOUT = "30"  # for the rest: far above any loopback reply, far below pytest's patience
LIMITED = status_reply(429, '{"error": {"message": "slow down"}}', {"Retry-After": "0"})
NOW = {"Retry-After": "0"}  # a transient status, retried at once: three of them are reported
ANSWER = "the test goes green."  # the scripted model's last words

# name -> (the replies the gateway sends instead of the script's, words the one line must hold)
FAULTS: dict[str, tuple[list[Reply], str]] = {
    "401": (
        [status_reply(401, '{"error": {"message": "bad key", "code": "invalid_api_key"}}')],
        "HTTP 401",
    ),
    "404": (
        [status_reply(404, '{"error": {"message": "The model `gpt-4o-mini` does not exist"}}')],
        "HTTP 404",
    ),
    # One try and two retries, each honouring Retry-After, then the 429 is reported (5xx too).
    "429 three times": ([LIMITED, LIMITED, LIMITED], "HTTP 429"),
    "500 three times": ([status_reply(500, "Internal Server Error", NOW)] * 3, "HTTP 500"),
    "502 three times": (
        [status_reply(502, "<html><body>Bad Gateway</body></html>", NOW)] * 3,
        "HTTP 502",
    ),
    "503 three times": (
        [status_reply(503, '{"error": {"message": "overloaded"}}', NOW)] * 3,
        "HTTP 503",
    ),
    "reset mid-stream": ([sse_reply(CHUNK, ending="reset")], "dropped the connection"),
    "dropped mid-stream": ([sse_reply(CHUNK, ending="drop")], "dropped the connection"),
    "no [DONE], no finish": ([sse_reply(CHUNK)], "before the answer was complete"),
    "event: error": (
        [sse_reply(CHUNK, 'event: error\ndata: {"error": {"message": "upstream died"}}\n\n')],
        "error mid-stream: upstream died",
    ),
    "invalid JSON": ([sse_reply(CHUNK, 'data: {"choices": [{"index": 0,\n\n')], "not JSON"),
    "HTML page": ([html_reply()], "HTML page"),
    "keep-alives only": ([sse_reply(ending="keepalive", hold=20)], "only keep-alives"),
    "nothing at all": ([sse_reply(ending="stall", hold=20)], "sent nothing for 0.5 s"),
    # Text without end: stopped at the cap on one turn's text (1 MB), not at the machine's memory.
    "endless text": ([Reply(parts=endless(WORDS))], "more than 1 MB of text in one turn"),
}
SILENT = {"keep-alives only", "nothing at all"}


def timeout_for(fault: str) -> str:
    return SILENT_TIMEOUT if fault in SILENT else TIMEOUT


def cards(lines: list[str]) -> list[str]:
    """`> glob`, `v glob`, ...: the mark and tool name of every card line."""
    return [" ".join(line.split()[:2]).split("(")[0] for line in lines if line[:2] in ("> ", "v ")]


FIRST_TURN_CARDS = ["> glob", "v glob", "> grep", "v grep"]  # the two calls of turn 1


@pytest.mark.parametrize("turn", [1, 2], ids=["first turn", "second turn"])
@pytest.mark.parametrize("fault", FAULTS)
def test_cli_reports_the_fault_in_one_line_and_exits_1(cli, tmp_path, fault, turn):
    replies, cause = FAULTS[fault]
    root = build_sandbox(tmp_path)
    with ScriptedGateway() as gateway:
        gateway.plant(turn, *replies)
        env = {"OPENAI_API_KEY": KEY, "COURSE_AGENT_TIMEOUT": timeout_for(fault)}
        done = cli("--base-url", gateway.url, "--root", str(root), QUESTION, env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert done.stderr == ""
    origin, *lines = done.stdout.splitlines()
    assert origin.startswith(f"gateway {gateway.url} (--base-url)")
    (failure,) = [line for line in lines if gateway.url in line]
    assert failure.startswith("! ") and cause in failure, failure
    assert lines[0] == f"? {QUESTION}" and lines[-1] == failure
    assert "Traceback" not in output and KEY not in output
    # The turn before the fault ran its tools; the broken turn left no card behind.
    assert cards(lines) == (FIRST_TURN_CARDS if turn == 2 else [])
    assert len(gateway.requests) == turn - 1 + len(replies)  # 429: retried twice, then reported


def test_cli_waits_out_a_short_rate_limit_and_answers(cli, tmp_path):
    root = build_sandbox(tmp_path)
    with ScriptedGateway() as gateway:
        gateway.plant(1, status_reply(429, "", {"Retry-After": "1"}))
        done = cli(
            "--base-url", gateway.url, "--root", str(root), QUESTION, env={"OPENAI_API_KEY": KEY}
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith(f"{ANSWER}\n")
    assert "429" not in done.stdout  # a retry that worked is nobody's business
    assert len(gateway.requests) == 1 + 3  # the 429, then three turns


# -- the magic ------------------------------------------------------------------------------------


def run_cell(shell, source):
    with capture_output() as captured:
        result = shell.run_cell(source)
    assert result.error_in_exec is None
    return captured


def card_names(captured) -> list[str]:
    # `v glob({"pattern":"**/*.js"}) fed back ...`: the name runs up to the arguments
    return [output.data["text/plain"].split()[1].split("(")[0] for output in captured.outputs]


@pytest.mark.parametrize("turn", [1, 2], ids=["first turn", "second turn"])
@pytest.mark.parametrize("fault", FAULTS)
def test_magic_reports_the_fault_keeps_the_transcript_and_retries(
    shell, monkeypatch, tmp_path, fault, turn
):
    replies, cause = FAULTS[fault]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("COURSE_AGENT_TIMEOUT", timeout_for(fault))
    root = build_sandbox(tmp_path)
    with ScriptedGateway() as gateway:
        gateway.plant(turn, *replies)
        cell = f"%%agent --base-url {gateway.url} --root {root}\n{QUESTION}"
        broken = run_cell(shell, cell)

        assert broken.stderr.count("\n") == 1, broken.stderr
        assert broken.stderr.startswith("! ")
        assert gateway.url in broken.stderr and cause in broken.stderr
        shown = broken.stdout + broken.stderr + repr([o.data for o in broken.outputs])
        assert "Traceback" not in shown and KEY not in shown
        origin, shown_out = broken.stdout.split("\n", 1)  # the first line names the gateway
        assert origin.startswith(f"gateway {gateway.url} (--base-url)")
        assert gateway.url not in shown_out
        messages = shell.magics.conversation.messages
        assert check_transcript(messages) is None
        if turn == 1:
            assert [m["role"] for m in messages] == ["system", "user"]
            assert card_names(broken) == []
        else:  # the first turn's calls ran and were answered; the broken turn left nothing
            assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
            assert card_names(broken) == ["glob", "grep"]

        # The gateway has recovered: the same cell again carries the question on to its answer
        # (with a timeout no busy machine reaches: the fault's 0.5 s was for the fault).
        monkeypatch.setenv("COURSE_AGENT_TIMEOUT", "60")
        again = run_cell(shell, cell)
    assert again.stderr == ""
    assert again.stdout.endswith(f"{ANSWER}\n")
    assert card_names(again) == (["glob", "grep", "read_file"] if turn == 1 else ["read_file"])
    assert check_transcript(messages) is None
    assert [m["content"] for m in messages if m["role"] == "user"] == [QUESTION]  # asked once
