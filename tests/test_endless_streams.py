"""Count every byte before holding it (issue 30 item 2): a gateway streams one shape without end,
the CLI (a real process, real HTTP over loopback) ends in the one line that names the cap, and its
peak RSS stays under PEAK_MB whatever the shape. The figures measured are in docs/hardening.md."""

import json
import os
import subprocess
import sys

import pytest
from conftest import SETTINGS
from gateway import Gateway, Reply, endless

KEY = "sk-ENDLESS-0123456789abcdef"
# The CLI's peak resident memory on any endless stream: about 75 MB measured for the largest
# shape (docs/hardening.md); the figure leaves room for another Python or httpx, not for a
# stream held whole (the old main held 1.4 GB on the first shape).
PEAK_MB = 200

# A wrapper process whose only child is the CLI: its RUSAGE_CHILDREN is the CLI's peak alone.
RUNNER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "print(done.returncode)\n"
    "sys.stdout.write(done.stdout + done.stderr)\n"
)


def chunk(delta: dict) -> bytes:
    return f"data: {json.dumps({'choices': [{'index': 0, 'delta': delta}]})}\n\n".encode()


def calls_without_end():
    for index in range(1 << 40):
        call = {"index": index, "id": f"c{index}", "function": {"name": "glob", "arguments": ""}}
        yield chunk({"tool_calls": [call]})


def arguments_without_end():
    call = {"index": 0, "id": "c1", "function": {"name": "glob", "arguments": ""}}
    yield chunk({"tool_calls": [call]})
    piece = "a" * 58 + " sk-EN"  # its tail could start the key: held until the next piece
    yield from endless(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))


SSE = {"Content-Type": "text/event-stream"}
# shape -> (the reply without end, the words of the last line, which name the cap)
SHAPES = {
    # each piece's tail could start the key: the old main held them all (1,436 MB)
    "text": (Reply(200, SSE, endless(chunk({"content": "x\n" * 28 + "sk-END"}))), "1 MB of text"),
    "tool arguments": (Reply(200, SSE, arguments_without_end()), "1 MB of arguments for one call"),
    "tool-call count": (Reply(200, SSE, calls_without_end()), "more than 1024 calls in one turn"),
    "error body": (
        Reply(400, {"Content-Type": "application/json"}, endless(b'{"error": "sk-EN' * 4096)),
        "its body ran past 64 KB, the cap on an error body",
    ),
    "SSE comments": (Reply(200, SSE, endless(b": sk-END keep-alive\n")), "sent no data for 2 s"),
    "one comment line": (Reply(200, SSE, endless(b": sk-END" * 4096)), "longer than 2 MB"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_an_endless_stream_ends_in_the_line_naming_its_cap_within_bounded_memory(tmp_path, shape):
    reply, words = SHAPES[shape]
    reply.hold = 60.0
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    env |= {"OPENAI_API_KEY": KEY, "COURSE_AGENT_TIMEOUT": "2"}
    with Gateway() as gateway:
        gateway.queue(reply)
        command = [sys.executable, "-c", RUNNER, sys.executable, "-m", "course_agent"]
        command += ["--base-url", gateway.url, "--root", str(tmp_path), "q"]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    peak_kb, code, *output = done.stdout.splitlines()
    assert code == "1", done.stdout + done.stderr
    assert words in output[-1], output[-1]
    print(f"{shape}: peak RSS {int(peak_kb) / 1024:.0f} MB")  # the figure docs/hardening.md states
    assert int(peak_kb) < PEAK_MB * 1024, f"{shape}: {int(peak_kb) / 1024:.0f} MB"
