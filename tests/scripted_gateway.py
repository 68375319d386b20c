"""The offline scripted model served over the loopback gateway, so the real clients can talk to it.

It answers what each request's transcript calls for, in the OpenAI or the Anthropic wire format
(usage included when an OpenAI request asks for it), and a fault can be planted in place of any
numbered request. Deliberately not handled: any question but the course's.
"""

from __future__ import annotations

import json
from typing import Any

from gateway import Gateway, Received, Reply, sse_reply

from course_agent.offline.scripted import ScriptedModel, estimate_tokens

__all__ = ["ScriptedGateway", "openai_messages"]


def openai_messages(anthropic_turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An Anthropic request's messages in the OpenAI shape the scripted model reads: an assistant
    turn's blocks become one assistant message, a user turn's tool_result blocks tool messages."""
    messages: list[dict[str, Any]] = []
    for turn in anthropic_turns:
        blocks = turn["content"]
        if isinstance(blocks, str):  # "content": "text" is short for one text block
            blocks = [{"type": "text", "text": blocks}]
        if turn["role"] == "assistant":
            calls = [block for block in blocks if block["type"] == "tool_use"]
            messages.append({"role": "assistant", "tool_calls": calls})
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                messages.append({"role": "tool", "content": block["content"]})
            elif block["type"] == "text":
                messages.append({"role": "user", "content": block["text"]})
    return messages


class ScriptedGateway(Gateway):
    """`with ScriptedGateway() as gateway:` the scripted model at `gateway.url`.

    `plant(n, *replies)` answers request n (counting from 1) and the ones after it with `replies`
    instead; once they are spent the script answers again, as a gateway that has recovered.
    """

    def __init__(self, wire: str = "openai", inject: str | None = None) -> None:
        super().__init__(self.answer)
        self.script = ScriptedModel(inject=inject, wire=wire)
        self.planted: dict[int, Reply] = {}  # request number -> the reply sent instead

    @property
    def root_url(self) -> str:
        """The URL without /v1: Anthropic's base URL, to which its client adds /v1/messages."""
        return self.url.removesuffix("/v1")

    def plant(self, first: int, *replies: Reply) -> None:
        self.planted.update(enumerate(replies, start=first))

    def answer(self, received: Received) -> Reply:
        number = len(self.requests)  # this request is already counted
        if number in self.planted:
            return self.planted.pop(number)
        body = received.body
        # Input tokens: an estimate from what was sent, messages and tools (see estimate_tokens).
        tokens = estimate_tokens([body["messages"], body.get("tools", [])])
        if self.script.wire == "anthropic":
            step, turn = self.script.next_step(openai_messages(body["messages"]))
            events = self.script.anthropic_events(step, turn, tokens)
            return sse_reply(*[f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events])
        step, turn = self.script.next_step(body["messages"])
        usage = (body.get("stream_options") or {}).get("include_usage")
        chunks = self.script.chunks(step, turn, prompt_tokens=tokens if usage else None)
        return sse_reply(*[f"data: {json.dumps(c)}\n\n" for c in chunks], "data: [DONE]\n\n")
