"""Our client and accumulator against openai-python, reading the same long stream from loopback.

Both send the same request to the same server and must assemble the same text and tool calls
(checked, or the figure would mean nothing). Deliberately not handled: network latency (loopback
has none to speak of) and keep-alive (every request opens a connection, for both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loopback import Stream, build_stream, serving
from measure import time_together
from report import Row

from course_agent import TextDelta, ToolCallAccumulator, ToolCallDelta, default_registry
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI

__all__ = [
    "CHUNKS",
    "LONG_ARGUMENTS",
    "MESSAGES",
    "client_rows",
    "merge_course_text",
    "merge_list_append",
    "merge_ours",
    "merge_rows",
    "openai_docs_loop",
    "openai_stream_state",
    "our_client",
]

CHUNKS = 12_000
LONG_ARGUMENTS = 256 * 1024  # a 6,000-line file, as a writing tool would receive it
MESSAGES = [{"role": "user", "content": "List the Python files."}]
Result = tuple[str, list[tuple[str, str, str]]]  # the text, then (id, name, arguments) per call


def our_client(url: str) -> Callable[[], Result]:
    model = HttpModel(OPENAI, url, "sk-bench", "bench-model")
    tools = default_registry().list()

    def run() -> Result:
        text, calls = [], ToolCallAccumulator()
        for event in model.stream(MESSAGES, tools):
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, ToolCallDelta):
                calls.push(event)
        return "".join(text), [(call.id, call.name, call.args) for call in calls.drain()]

    return run


def openai_docs_loop(url: str) -> Callable[[], Result]:
    """openai-python, tool calls merged the way OpenAI's function-calling guide shows."""
    from openai import OpenAI

    client = OpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    tools: Any = default_registry().list()

    def run() -> Result:
        stream = client.chat.completions.create(
            model="bench-model", messages=MESSAGES, tools=tools, stream=True
        )
        text, calls = [], {}
        for chunk in stream:
            if not chunk.choices:
                continue  # the usage chunk at the end
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
            for tool_call in delta.tool_calls or []:
                if tool_call.index not in calls:
                    calls[tool_call.index] = tool_call
                else:
                    calls[tool_call.index].function.arguments += tool_call.function.arguments
        merged = [calls[index] for index in sorted(calls)]
        return "".join(text), [(c.id, c.function.name, c.function.arguments) for c in merged]

    return run


def openai_stream_state(url: str) -> Callable[[], Result]:
    """openai-python with its own helper, ChatCompletionStreamState, doing the merging."""
    from openai import OpenAI
    from openai.lib.streaming.chat import ChatCompletionStreamState

    client = OpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    tools: Any = default_registry().list()

    def run() -> Result:
        stream = client.chat.completions.create(
            model="bench-model", messages=MESSAGES, tools=tools, stream=True
        )
        state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
        for chunk in stream:
            state.handle_chunk(chunk)
        message = state.get_final_completion().choices[0].message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
        return message.content or "", calls

    return run


def _check(name: str, result: Result, stream: Stream) -> None:
    if result != (stream.text, stream.calls):
        raise RuntimeError(f"{name} assembled something else than the server sent")


def client_rows(repeat: int, notes: list[str]) -> list[Row]:
    stream = build_stream(CHUNKS)
    with serving(CHUNKS) as url:
        clients = {"ours": our_client(url), "openai-python, docs loop": openai_docs_loop(url)}
        for name, client in clients.items():
            _check(name, client(), stream)
        try:
            openai_stream_state(url)()
        except IndexError as error:
            # It files calls in a list by index, so a first call at index 1 has no slot.
            notes.append(
                "openai-python's ChatCompletionStreamState fails on this stream "
                f"(IndexError: {error}): its calls start at index 1, as the course measured"
            )
        mine, docs = time_together(list(clients.values()), repeat)
    notes.append(
        f"client: {stream.chunks:,} chunks ({len(stream.body) / 1e6:.1f} MB) of text and "
        f"{len(stream.calls)} interleaved calls from index 1; both assemble the same result"
    )
    figure = f"client: {stream.chunks:,}-chunk stream + merge"
    return [Row.timed(figure, mine, "openai-python, docs loop", docs, at_most=0.7)]


def merge_course_text(deltas: list[ToolCallDelta]) -> str:
    """The day-three text's accumulator, as printed: `slot["args"] += ...` inside a dict."""
    by_index: dict[int, dict[str, str]] = {}
    for delta in deltas:
        slot = by_index.setdefault(delta.index or 0, {"args": ""})
        if delta.args_delta:
            slot["args"] += delta.args_delta
    return by_index[1]["args"]


def merge_list_append(deltas: list[ToolCallDelta]) -> str:
    """The plain linear way: each call's fragments appended to a list, joined once at the end."""
    by_index: dict[int, list[str]] = {}
    for delta in deltas:
        parts = by_index.setdefault(delta.index or 0, [])
        if delta.args_delta:
            parts.append(delta.args_delta)
    return "".join(by_index[1])


def merge_ours(deltas: list[ToolCallDelta]) -> str:
    calls = ToolCallAccumulator()
    for delta in deltas:
        calls.push(delta)
    return calls.drain()[0].args


def merge_rows(repeat: int, notes: list[str]) -> list[Row]:
    """Merging alone, for one long argument string in 4-character fragments."""
    head = ToolCallDelta(1, "call_1", "write_file", "")
    deltas = [head] + [ToolCallDelta(1, None, None, "abcd")] * (LONG_ARGUMENTS // 4)
    if not merge_ours(deltas) == merge_course_text(deltas) == merge_list_append(deltas):
        raise RuntimeError("the three merges disagree")
    mine, course, appended = time_together(
        [
            lambda: merge_ours(deltas),
            lambda: merge_course_text(deltas),
            lambda: merge_list_append(deltas),
        ],
        repeat,
    )
    notes.append(
        f"merge: {len(deltas):,} fragments of one call, {LONG_ARGUMENTS // 1024} KB of arguments"
    )
    figure = f"accumulator: {LONG_ARGUMENTS // 1024} KB arguments, 4-char fragments"
    return [
        Row.timed(figure, mine, 'the course text: `slot["args"] +=` (quadratic)', course),
        Row.timed(figure, mine, "`list.append`, then one `join`", appended),
    ]
