"""course_agent: the heart of a coding agent, small enough to read and real enough to run.

Tools and their protocol, streamed fragment merging, bad arguments fed back, truncated results, and
the loop that ties them together. In a notebook: `%load_ext course_agent`, then `%%agent`.
"""

from __future__ import annotations

from typing import Any

from .accumulator import ToolCallAccumulator
from .loop import check_transcript, run_agent
from .protocol import (
    AgentStopped,
    Finish,
    GatewayError,
    Model,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolDef,
    ToolError,
    ToolFinished,
    ToolResult,
    ToolStarted,
    TurnStarted,
)
from .registry import ToolRegistry, default_registry, execute_call
from .selftest import run_selftest
from .truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

__all__ = [
    "HEAD_RATIO",
    "MAX_RESULT_CHARS",
    "AgentStopped",
    "Finish",
    "GatewayError",
    "Model",
    "TextDelta",
    "ToolCall",
    "ToolCallAccumulator",
    "ToolCallDelta",
    "ToolContext",
    "ToolDef",
    "ToolError",
    "ToolFinished",
    "ToolRegistry",
    "ToolResult",
    "ToolStarted",
    "TurnStarted",
    "check_transcript",
    "default_registry",
    "execute_call",
    "load_ipython_extension",
    "run_agent",
    "run_selftest",
    "truncate_result",
]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext course_agent`: register %%agent and friends (IPython is imported only now)."""
    from .notebook.magics import register

    register(ipython)
