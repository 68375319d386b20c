"""The offline model: a deterministic script behind the same interface as a real gateway.

It reads the transcript, decides its next step, and streams it as the SSE wire text a gateway would
send, chopped as real gateways chop it (indexes from 1, interleaved, split inside quotes), so the
real parser and accumulator do the work. `wire="anthropic"` streams the same steps as Anthropic
Messages events instead. Deliberately not handled: any question but the course's.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from course_agent.offline.repository import BUGGY_FILE
from course_agent.offline.scripted_anthropic import message_events
from course_agent.protocol import ModelEvent
from course_agent.providers.anthropic_events import events_from_lines as anthropic_events_from_lines
from course_agent.providers.openai_chunks import events_from_lines

__all__ = ["ScriptedModel", "Step", "estimate_tokens", "split_arguments"]


@dataclass(frozen=True)
class Step:
    """One assistant turn: some text, then calls as (name, arguments JSON), then a finish reason."""

    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    finish: str = "tool_calls"


def _args(**kwargs: Any) -> str:
    return json.dumps(kwargs, separators=(",", ":"))


def estimate_tokens(request: Any) -> int:
    """What a request costs in input tokens, at about four characters of its JSON a token: the
    usual rule of thumb, as the script has no tokenizer."""
    return max(1, len(json.dumps(request)) // 4)


def _since_question(messages: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """The messages of one role since the user's last question, oldest first."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m for m in messages[last_user:] if m["role"] == role]


def _conclude(read_result: str) -> Step:
    """Cite the line that rounds, found in what read_file actually returned."""
    match = re.search(r"^\s*(\d+)\s+(.*Math\.floor.*)$", read_result, re.MULTILINE)
    if match is None:
        return Step(f"I could not find the rounding in {BUGGY_FILE}; read it again?", finish="stop")
    line, code = match.group(1), match.group(2).strip()
    return Step(
        f"The test 'divide' is red because {BUGGY_FILE} line {line} rounds down: `{code}` "
        "turns divide(7, 2) into 3, while test/calc.test.js expects 3.5. "
        "Return `a / b` without Math.floor and the test goes green.",
        finish="stop",
    )


def _plan_question(results: list[str]) -> Step:
    """glob and grep in parallel, then read_file, then the conclusion."""
    if not results:
        return Step(
            "Let me list the JavaScript files and search for the function under test.",
            [("glob", _args(pattern="**/*.js")), ("grep", _args(pattern="divide\\("))],
        )
    if len(results) == 2:
        # The trap from the course: a gateway that says "stop" while tool fragments are present.
        return Step(
            f"divide is defined in {BUGGY_FILE}; reading it.",
            [("read_file", _args(path=BUGGY_FILE))],
            finish="stop",
        )
    return _conclude(results[-1])


def _plan_bad_args(results: list[str]) -> Step:
    """INJECT=bad_args: invent a tool, then send broken arguments, then read the feedback."""
    if not results:
        return Step(
            "I'll fix it directly.",
            [("edit_file", _args(path=BUGGY_FILE, old="a / b"))],
        )
    if len(results) == 1:
        # No editing tool today: the model reads "Available: ..." and takes another route.
        if "edit_file" not in results[0]:
            return Step("Unexpected answer from edit_file; stopping.", finish="stop")
        return Step(
            "So there is no editing tool today, only three read-only ones. "
            "Let me read the code first.",
            [
                ("read_file", '{"file": "src/calc.js", "offset": "top"}'),
                ("grep", '{"pattern": "div'),
            ],
        )
    if len(results) == 3:
        return Step(
            "The arguments were wrong; the feedback names the fields.",
            [("read_file", _args(path=BUGGY_FILE))],
        )
    return _conclude(results[-1])


def split_arguments(text: str, rng: random.Random) -> list[str]:
    """Cut `text` into 6 to 12 pieces at arbitrary points: inside quotes, escapes and all."""
    if len(text) < 2:
        return [text]
    pieces = min(len(text), rng.randint(6, 12))
    cuts = sorted(rng.sample(range(1, len(text)), pieces - 1))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


# Every chunk's "created" (Unix seconds): fixed, so a rerun sends the same bytes.
CREATED = 1767225600  # 2026-01-01

# A step's finish reason (the loop's words) -> the stop_reason Anthropic would send.
_STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}


class ScriptedModel:
    """The offline model (MOCK=1). `inject="bad_args"` runs the bad-argument scenario instead.

    `wire` is the format the steps travel in: "openai" (chat.completion.chunk objects, as through a
    gateway) or "anthropic" (Messages API events); both end in the same ModelEvents.
    """

    def __init__(
        self, inject: str | None = None, wire: str = "openai", seed: int | None = None
    ) -> None:
        if inject not in (None, "bad_args"):
            raise ValueError(f"unknown injection {inject!r}: the only one is 'bad_args'")
        if wire not in ("openai", "anthropic"):
            raise ValueError(f"unknown wire format {wire!r}: use 'openai' or 'anthropic'")
        self.inject = inject
        self.wire = wire
        # None: the course's cuts and ids on every run; a number (the grader's): other cuts, and
        # ids no earlier run sent, so a transcript recorded elsewhere does not fit this one.
        self.seed = seed
        self.label = "scripted model (offline)" + (" with bad arguments" if inject else "")
        if wire == "anthropic":
            self.label += " over the Anthropic wire"

    def __repr__(self) -> str:
        wire = f", wire={self.wire!r}" if self.wire != "openai" else ""
        seed = f", seed={self.seed!r}" if self.seed is not None else ""
        return f"ScriptedModel(inject={self.inject!r}{wire}{seed})"

    def _cuts(self, turn: int) -> random.Random:
        """Where one turn's arguments are cut."""
        if self.seed is None:
            return random.Random(f"{self.inject}:{turn}")
        return random.Random(f"{self.seed}:{self.inject}:{turn}")

    @property
    def _tag(self) -> str:
        """What the seed adds to each call's id ("" without one): `call_5f3a1c_2_1`."""
        return "" if self.seed is None else f"{self.seed:x}_"

    def next_step(self, messages: list[dict[str, Any]]) -> tuple[Step, int]:
        """The step this transcript calls for, and its turn number (1 for the first answer)."""
        results = [m["content"] for m in _since_question(messages, "tool")]
        turn = 1 + len(_since_question(messages, "assistant"))
        return (_plan_bad_args if self.inject else _plan_question)(results), turn

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        # Stateless: the transcript alone decides the step, so a rerun replays the same stream.
        step, turn = self.next_step(messages)
        if self.wire == "anthropic":
            # Through the same SSE reader and event parser a real Anthropic stream goes through.
            wire = "".join(
                f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                for event in self.anthropic_events(step, turn, estimate_tokens([messages, tools]))
            )
            lines = wire.splitlines(keepends=True)
            yield from anthropic_events_from_lines(lines, self.label)
            return
        # Through the same SSE reader and chunk parser a real gateway's bytes go through.
        wire = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in self.chunks(step, turn))
        lines = (wire + "data: [DONE]\n\n").splitlines(keepends=True)
        yield from events_from_lines(lines, self.label)

    def chunks(
        self, step: Step, turn: int, prompt_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """The chat.completion.chunk objects for one step, in the order a gateway sends them.

        With `prompt_tokens` (a request's `stream_options: {"include_usage": true}`) a last chunk
        with no choices carries the usage; without, there is none, as with OpenAI.
        """
        rng = self._cuts(turn)  # same cuts on every run and machine
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": word} for word in re.findall(r"\S+\s*", step.text)]

        # index -> fragments of that call; indexes start at 1, as through a Claude gateway.
        per_call = []
        for index, (name, arguments) in enumerate(step.calls, start=1):
            head = {
                "index": index,
                "id": f"call_{self._tag}{turn}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            rest = [
                {"index": index, "function": {"arguments": piece}}
                for piece in split_arguments(arguments, rng)
            ]
            per_call.append([head, *rest])
        # Interleave parallel calls: the second call's head may arrive before the first's.
        per_call.reverse()
        while any(per_call):
            for fragments in per_call:
                if fragments:
                    deltas.append({"tool_calls": [fragments.pop(0)]})

        base = {
            "id": f"chatcmpl-scripted-{turn}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": "scripted",
        }
        if prompt_tokens is not None:
            base["usage"] = None  # as OpenAI streams when usage is asked for: null until the end
        choices = [
            {"index": 0, "delta": d, "logprobs": None, "finish_reason": None} for d in deltas
        ]
        choices.append({"index": 0, "delta": {}, "logprobs": None, "finish_reason": step.finish})
        chunks = [{**base, "choices": [choice]} for choice in choices]
        if prompt_tokens is not None:
            done = len(deltas) - 1  # one token per delta sent after the role
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": done}
            usage["total_tokens"] = prompt_tokens + done
            chunks.append({**base, "choices": [], "usage": usage})
        return chunks

    def anthropic_events(
        self, step: Step, turn: int, input_tokens: int = 0
    ) -> list[dict[str, Any]]:
        """The Messages API events for one step, in the order Anthropic sends them; the arguments
        are cut as in `chunks`. `input_tokens` is what message_start reports the request cost."""
        rng = self._cuts(turn)  # the same cuts as the OpenAI wire
        calls = [
            (f"toolu_{self._tag}{turn}_{number}", name, split_arguments(arguments, rng))
            for number, (name, arguments) in enumerate(step.calls, start=1)
        ]
        stop_reason = _STOP_REASONS.get(step.finish, step.finish)
        words = re.findall(r"\S+\s*", step.text)
        return message_events(f"msg_scripted_{turn}", words, calls, stop_reason, input_tokens)
