"""course_agent: the heart of a coding agent, small enough to read and real enough to run.

Tools and their protocol, streamed fragment merging, bad arguments fed back, truncated results, and
the loop that ties them together. In a notebook: `%load_ext course_agent`, then `%%agent`.
Importing it costs almost nothing: each name below is imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ imports these
    from course_agent.accumulator import ToolCallAccumulator
    from course_agent.loop import check_transcript, run_agent
    from course_agent.protocol import (
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
    from course_agent.registry import ToolRegistry, default_registry, execute_call
    from course_agent.selftest.lab import run_selftest
    from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

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

# module -> the public names it defines. pydantic (behind protocol) and httpx (behind the clients)
# are most of the package's start-up, and `%load_ext` needs neither.
_EXPORTS = {
    "accumulator": ["ToolCallAccumulator"],
    "loop": ["check_transcript", "run_agent"],
    "protocol": [
        "AgentStopped",
        "Finish",
        "GatewayError",
        "Model",
        "TextDelta",
        "ToolCall",
        "ToolCallDelta",
        "ToolContext",
        "ToolDef",
        "ToolError",
        "ToolFinished",
        "ToolResult",
        "ToolStarted",
        "TurnStarted",
    ],
    "registry": ["ToolRegistry", "default_registry", "execute_call"],
    "selftest.lab": ["run_selftest"],
    "truncate": ["HEAD_RATIO", "MAX_RESULT_CHARS", "truncate_result"],
}
_HOMES = {name: module for module, names in _EXPORTS.items() for name in names}

# The magics `%load_ext` declares, by kind; IPython imports notebook.magics on the first use of one.
_MAGICS = {
    "agent": "cell",
    "agent_cost": "line",
    "agent_demo": "line",
    "agent_selftest": "line",
    "agent_tools": "line",
}


def __getattr__(name: str) -> Any:
    """`course_agent.run_agent` and `from course_agent import run_agent`: import on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'course_agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value  # from now on a plain attribute: __getattr__ is not asked again
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _lazy_magics_listed() -> bool:
    """Whether this IPython lists a lazy magic (and shows its `?` help) before its first use."""
    from IPython.core import magic

    return hasattr(magic, "LazyMagic")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext course_agent`: declare %%agent and friends. What implements them (with httpx
    and pydantic behind it) is imported when one is first used, by IPython's lazy magics.

    An older IPython, whose lazy magics stay unlisted until used, gets them registered at once.
    """
    if not _lazy_magics_listed():
        from course_agent.notebook.magics import register

        register(ipython)
        return
    for name, kind in _MAGICS.items():
        ipython.magics_manager.register_lazy(name, "course_agent.notebook.magics:AgentMagics", kind)
