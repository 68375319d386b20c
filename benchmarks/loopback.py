"""A loopback gateway in its own process, answering every POST with one long streamed tool call.

Its own process, so serving never competes with the client being timed for this one's GIL. The
body is built once: text deltas, then three parallel calls (indexes from 1) whose argument
fragments interleave, each SSE event its own HTTP chunk. Deliberately not handled: keep-alive,
pacing (the whole body goes out as fast as the socket takes it), reading what was asked.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["CALLS", "TEXT_CHUNKS", "Stream", "build_stream", "serve", "serving"]

CALLS = 3
TEXT_CHUNKS = 200


@dataclass(frozen=True)
class Stream:
    body: bytes  # the HTTP response, headers included
    chunks: int  # data events carrying a chat.completion.chunk
    text: str  # what a client should assemble
    calls: list[tuple[str, str, str]]  # (id, name, arguments) in index order


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1788000000,
        "model": "bench-model",
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def build_stream(chunks: int) -> Stream:
    """About `chunks` chunks: text, then CALLS calls in fragments of 1-6 characters."""
    rng = random.Random(7)  # the same stream in every process and every run
    events: list[dict[str, object]] = []
    words = [f"word{n} " for n in range(TEXT_CHUNKS)]
    events += [_chunk({"role": "assistant", "content": word}) for word in words]
    per_call = (chunks - TEXT_CHUNKS) // CALLS
    calls, pieces = [], []
    for index in range(1, CALLS + 1):
        # About 7 characters per folder, 3.5 per fragment: two fragments per folder.
        path = "/".join(f"dir{rng.randrange(1000)}" for _ in range(per_call // 2))
        arguments = json.dumps({"pattern": "**/*.py", "path": path})
        cuts, at = [], 0
        while at < len(arguments):
            step = rng.randint(1, 6)
            cuts.append(arguments[at : at + step])
            at += step
        calls.append((f"call_{index}", "glob", arguments))
        pieces.append(cuts)
    # The heads come first; then fragments of all calls interleave, as parallel calls do.
    for index, (call_id, name, _) in enumerate(calls, start=1):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        events.append(_chunk({"tool_calls": [head]}))
    while any(pieces):
        for index, cuts in enumerate(pieces, start=1):
            if cuts:
                fragment = {"index": index, "function": {"arguments": cuts.pop(0)}}
                events.append(_chunk({"tool_calls": [fragment]}))
    events.append(_chunk({}, finish="tool_calls"))
    usage = {"prompt_tokens": 900, "completion_tokens": chunks, "total_tokens": 900 + chunks}
    datas = [json.dumps(event) for event in events]
    datas.append(json.dumps({**_chunk({}), "choices": [], "usage": usage}))
    datas.append("[DONE]")
    body = b"".join(_http_chunk(f"data: {data}\n\n".encode()) for data in datas) + b"0\r\n\r\n"
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    return Stream(head + body, len(events), "".join(words), calls)


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


def serve(chunks: int) -> None:
    """Print the port, then answer every request with the stream until killed."""
    response = build_stream(chunks).body
    with socket.create_server(("127.0.0.1", 0)) as server:
        print(server.getsockname()[1], flush=True)
        while True:
            connection, _ = server.accept()
            with connection:
                _read_request(connection)
                connection.sendall(response)


def _read_request(connection: socket.socket) -> None:
    """Read the headers and the Content-Length body, so the client's send completes cleanly."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = connection.recv(65536)
        if not more:
            return
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length and (more := connection.recv(65536)):
        body += more


@contextmanager
def serving(chunks: int) -> Iterator[str]:
    """Run `serve` in a child process; yield its base URL (ending in /v1)."""
    child = subprocess.Popen(
        [sys.executable, __file__, str(chunks)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        yield f"http://127.0.0.1:{int(child.stdout.readline())}/v1"
    finally:
        child.kill()
        child.wait()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
