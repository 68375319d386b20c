"""What a conversation costs in context: per model request, the characters of each kind re-sent.

Request k carries every message before the k-th assistant message, so a tool result is paid once
per later request. Deliberately not handled: tokens (they depend on the model's tokenizer) and
requests that failed (they left no assistant message behind, so they cannot be seen here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "RequestCost", "cost_lines", "message_chars", "request_costs"]

# The kinds a request is made of, in the order they first appear in a transcript.
KINDS = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class RequestCost:
    """One model request: `chars` maps each kind to the characters of that kind it carried."""

    number: int  # 1 for the first request of the conversation
    chars: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.chars.values())


def message_chars(message: Mapping[str, Any]) -> int:
    """The characters a message puts on the wire: its text, plus any calls' names and arguments.

    JSON keys and punctuation are left out: they are a fixed overhead, not what a student controls.
    """
    chars = len(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        chars += len(function.get("name") or "") + len(function.get("arguments") or "")
    return chars


def request_costs(messages: Sequence[Mapping[str, Any]]) -> list[RequestCost]:
    """One RequestCost per assistant message: what the request that produced it re-sent."""
    costs = []
    sent = dict.fromkeys(KINDS, 0)  # kind -> characters of that kind before the current message
    for message in messages:
        if message["role"] == "assistant":
            costs.append(RequestCost(len(costs) + 1, dict(sent)))
        sent[message["role"]] = sent.get(message["role"], 0) + message_chars(message)
    return costs


def cost_lines(costs: Sequence[RequestCost]) -> list[str]:
    """A plain-text table, one line per request, then the total paid over the whole run."""
    if not costs:
        return ["no model request yet"]
    kinds = [kind for kind in KINDS if any(cost.chars.get(kind) for cost in costs)]
    # column -> width: wide enough for its name and for the largest total
    widths = {name: max(len(str(costs[-1].total)), len(name)) + 2 for name in [*kinds, "total"]}
    lines = ["request" + "".join(f"{name:>{widths[name]}}" for name in widths)]
    for cost in costs:
        cells = [cost.chars.get(kind, 0) for kind in kinds] + [cost.total]
        lines.append(
            f"{cost.number:>7}"
            + "".join(f"{n:>{w}}" for n, w in zip(cells, widths.values(), strict=True))
        )
    paid = sum(cost.total for cost in costs)
    lines.append(
        f"{len(costs)} requests re-sent {paid} characters in all; "
        f"the last one alone carried {costs[-1].total}"
    )
    return lines
