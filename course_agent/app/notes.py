"""The truncation note worded for the tool it cuts: read_file pages by offset, glob and grep don't.

The lesson's truncate_result (truncate.py) writes one note for every tool, "use offset for middle",
and keeps the course's figures (8000 + 54 = 8054); glob and grep have no offset (a call that tries
one fails "Extra inputs are not permitted"), so the face rewords that note for them. Deliberately
not handled: a note a plugged-in truncate writes otherwise (it is left as it is).
"""

from __future__ import annotations

from typing import Any

from course_agent.protocol import ToolCall, ToolContext, ToolResult
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS

__all__ = ["NOTES", "NotedRegistry", "fit_note"]

# What the model can do instead, per tool without an offset.
NOTES = {
    "glob": "narrow the pattern or lower the limit",
    "grep": "narrow the pattern, or the glob, or lower the limit",
}


def fit_note(tool: str, result: ToolResult) -> ToolResult:
    """`result` with the lesson's note, where it put it, worded for `tool` (else unchanged)."""
    advice = NOTES.get(tool)
    original = (result.meta or {}).get("originalChars")
    if advice is None or not (result.meta or {}).get("truncated") or not isinstance(original, int):
        return result
    cut = f"[...{original - MAX_RESULT_CHARS} of {original} chars cut; "
    note = f"\n{cut}use offset for middle]\n"
    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    if not result.content.startswith(note, head):
        return result
    content = result.content[:head] + f"\n{cut}{advice}]\n" + result.content[head + len(note) :]
    return ToolResult(content, result.ok, dict(result.meta))


class NotedRegistry:
    """A registry whose truncated glob and grep results say what those tools can do instead."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.tools = registry.tools

    def list(self) -> list[dict[str, Any]]:
        return self.registry.list()

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return fit_note(call.name, self.registry.execute(call, ctx))
