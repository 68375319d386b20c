"""Translate the loop's OpenAI-shaped transcript and tools into an Anthropic Messages request.

System messages move to the top-level `system`; calls become tool_use blocks and results become
tool_result blocks in user turns. Deliberately not handled: images, documents, prompt caching.
"""

from __future__ import annotations

import json
from typing import Any

from course_agent.providers.gateway.contract import json_value

__all__ = ["tool_input", "translate_messages", "translate_tools"]


def translate_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """{"type": "function", "function": {name, description, parameters}} -> {name, description,
    input_schema}: the same three things the model sees, under Anthropic's names."""
    return [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "input_schema": tool["function"].get("parameters") or {"type": "object"},
        }
        for tool in tools
    ]


def tool_input(args: str) -> dict[str, Any]:
    """A call's arguments string as the JSON object a tool_use block must carry.

    "" (a tool without arguments) is {}. So is anything that is not a JSON object (a call cut off
    by max_tokens, a model's broken JSON): Anthropic refuses the whole request if `input` is not an
    object, and the call's tool_result already quotes the broken text back to the model. So is an
    object that cannot go back as JSON (1e999 reads as infinity, which JSON cannot say), or that
    json.loads refuses beyond JSONDecodeError (see contract.json_value): either would break every
    later request of the conversation, not just this call.
    """
    try:
        parsed = json_value(args) if args.strip() else {}
        json.dumps(parsed, allow_nan=False)  # as httpx will write the request
    except (ValueError, RecursionError):  # BrokenJson is a ValueError
        return {}
    return parsed if isinstance(parsed, dict) else {}


def translate_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(system, messages) for the request body. Raises ValueError on a role it does not know.

    Consecutive messages that land on the same Anthropic role are merged into one, so the tool
    messages answering one assistant turn become ONE user message of tool_result blocks, in the
    order the calls were made (Anthropic requires all results right after the calls).
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []  # {"role": "user" | "assistant", "content": [blocks]}
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "system":
            system.append(content or "")
            continue
        if role == "user":
            blocks = _text_blocks(content)
        elif role == "assistant":
            blocks = _text_blocks(content) + [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": tool_input(call["function"].get("arguments") or ""),
                }
                for call in message.get("tool_calls") or []
            ]
        elif role == "tool":
            # The loop passes only the text of a result, not whether it failed, so no is_error:
            # a failed result's text says what went wrong, and the model reads it either way.
            blocks = [
                {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": content}
            ]
            role = "user"
        else:
            raise ValueError(f"a {role!r} message has no place in an Anthropic request")
        if not blocks:
            continue  # Anthropic refuses empty turns (an assistant that said nothing)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(text for text in system if text), turns


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as text blocks: none for "" or None (Anthropic refuses empty text)."""
    if isinstance(content, list):
        return content  # OpenAI's content parts [{"type": "text", "text"}] are already blocks
    return [{"type": "text", "text": content}] if content else []
