"""One ceiling for every tool result: cut from the middle, keep both ends, say what was cut.

Applied once, at the execution entry point, for every tool. Deliberately not handled: the total
context budget across turns (how many results fit in one request is a later day's subject).
"""

from __future__ import annotations

from dataclasses import replace

from course_agent.protocol import ToolResult

__all__ = ["HEAD_RATIO", "MAX_RESULT_CHARS", "truncate_result"]

MAX_RESULT_CHARS = 8000
HEAD_RATIO = 0.6  # more head than tail: the most relevant content is usually at the front


def truncate_result(result: ToolResult) -> ToolResult:
    """Return `result` unchanged when it fits, otherwise an 8000-character cut plus a short note.

    For 20000 characters the note is "\\n[...12000 of 20000 chars cut; use offset for middle]\\n",
    54 characters: 8000 kept + 54 = 8054, the figure the course's self-test checks.
    """
    text = result.content
    if len(text) <= MAX_RESULT_CHARS:
        return result

    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    removed = len(text) - MAX_RESULT_CHARS
    # The note is for the model: it cannot read an ellipsis, but it can read an instruction.
    note = f"\n[...{removed} of {len(text)} chars cut; use offset for middle]\n"
    return replace(
        result,
        content=text[:head] + note + text[-(MAX_RESULT_CHARS - head) :],
        # Truncation is for people and need not spend the model's tokens: meta is never sent.
        meta={**(result.meta or {}), "truncated": True, "originalChars": len(text)},
    )
