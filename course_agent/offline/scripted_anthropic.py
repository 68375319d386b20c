"""The scripted model's answer as Anthropic Messages stream events, shaped as the API sends them.

Official clients build the final message from these events (the anthropic SDK appends each block
to `message_start`'s `content: []`), so every field the API always sends is here, `usage` included.
Deliberately not handled: thinking blocks, server tools, citations, cache token counts.
"""

from __future__ import annotations

from typing import Any

__all__ = ["message_events"]


def message_events(
    message_id: str,
    words: list[str],
    calls: list[tuple[str, str, list[str]]],
    stop_reason: str,
    input_tokens: int,
) -> list[dict[str, Any]]:
    """The events of one answer: `words` streamed as a text block, then one tool_use block per
    call as (id, name, argument pieces), in the order Anthropic sends them.

    Content blocks are numbered in order, whatever their type: the text takes index 0, so the first
    tool_use is 1 (0 when there is no text). Blocks stream one after another, unlike parallel calls
    through a gateway. Token counts: one per delta sent, an honest stand-in for a tokenizer.
    """
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": [],  # the blocks arrive as events; clients append them here
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    # (block, its deltas) in block order: the text first, then one tool_use block per call
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if words:
        deltas = [{"type": "text_delta", "text": word} for word in words]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for call_id, name, pieces in calls:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        pieces = ["", *pieces]  # Anthropic's first fragment is ""
        blocks.append(
            (block, [{"type": "input_json_delta", "partial_json": piece} for piece in pieces])
        )
    for index, (block, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        if index == 0:
            events.append({"type": "ping"})  # real streams ping early, and anywhere
        events += [
            {"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas
        ]
        events.append({"type": "content_block_stop", "index": index})
    output_tokens = max(1, sum(len(deltas) for _, deltas in blocks))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},  # the total so far, not an increment
        }
    )
    events.append({"type": "message_stop"})
    return events
