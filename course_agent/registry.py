"""The loop knows two verbs: `list` the tools, `execute` a call. Execution never raises.

Every failure becomes a failed ToolResult whose text a model can act on; key values are redacted
and truncation applied here, once, for every tool. Deliberately not handled: approval of writes
(read_only is only kept).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from course_agent.safety.redaction import redact, redact_cut
from course_agent.tools import GLOB_TOOL, GREP_TOOL, READ_FILE_TOOL
from course_agent.truncate import truncate_result

__all__ = [
    "MAX_ARGUMENTS_CHARS",
    "RunCall",
    "ToolRegistry",
    "default_registry",
    "describe_parameters",
    "execute_call",
]

# A call's raw JSON, checked before json.loads: every tool's arguments fit in a few KB, and the
# pydantic classes cap each string (4096 characters) so that the schema says so too.
MAX_ARGUMENTS_CHARS = 65_536

# What `ToolRegistry` calls to run one call: `execute_call`, or a student's own version of it.
RunCall = Callable[[Mapping[str, ToolDef], ToolCall, ToolContext], ToolResult]


def describe_parameters(tool: ToolDef) -> str:
    """`pattern (string, required), limit (integer, default 200)`: what a good call looks like."""
    schema = tool.parameters
    parts = []
    for name, prop in schema["properties"].items():
        if name in schema["required"]:
            need = "required"
        else:
            need = f"default {prop['default']}" if "default" in prop else "optional"
        parts.append(f"{name} ({prop.get('type', 'any')}, {need})")
    return ", ".join(parts)


def _echo(text: str, limit: int, secrets: Sequence[str]) -> str:
    """The start of what the model sent, to quote back: keys redacted before the cut."""
    return redact_cut(text, limit, secrets)[0]


def _explain_validation(tool: ToolDef, error: ValidationError, secrets: Sequence[str]) -> str:
    problems = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        echoed = _echo(json.dumps(item.get("input")), 60, secrets)
        got = "" if item["type"] == "missing" else f" (got {echoed})"
        problems.append(f"{field}: {item['msg']}{got}")
    return (
        f"invalid arguments for {tool.name}: {'; '.join(problems)}. "
        f"Parameters: {describe_parameters(tool)}"
    )


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Run one call. The four failures come back as results, never as exceptions: an unknown
    tool, arguments that are not JSON, arguments that fail the schema, a tool that raised.
    """
    secrets = getattr(ctx, "secrets", ())  # a context a lab's own code built may lack them
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(
            f"there is no tool named {call.name}. Available: {', '.join(tools)}", ok=False
        )

    if len(call.args) > MAX_ARGUMENTS_CHARS:
        return ToolResult(
            f"arguments for {call.name} are {len(call.args):,} characters long; at most "
            f"{MAX_ARGUMENTS_CHARS:,} are read. Send one small JSON object; "
            f"parameters: {describe_parameters(tool)}",
            ok=False,
        )
    raw = call.args.strip() or "{}"  # a tool with no arguments may stream nothing at all
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolResult(
            f"arguments for {call.name} are not valid JSON ({exc}): {_echo(raw, 80, secrets)!r}. "
            f"Send one JSON object; parameters: {describe_parameters(tool)}",
            ok=False,
        )
    except (ValueError, RecursionError) as exc:  # a 5000-digit number; [[[[... nested too deep
        return ToolResult(
            f"arguments for {call.name} could not be read: {exc}. "
            f"Send one flat JSON object; parameters: {describe_parameters(tool)}",
            ok=False,
        )
    if not isinstance(parsed, dict):
        return ToolResult(
            f"arguments for {call.name} must be a JSON object, got {type(parsed).__name__}. "
            f"Parameters: {describe_parameters(tool)}",
            ok=False,
        )

    try:
        # JSON may spell a lone surrogate ("\\ud800"); no file name or regex can use one, and
        # echoing it back would break whoever prints or sends the result.
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return ToolResult(
            f"arguments for {call.name} contain a lone surrogate (a \\ud800-style escape); "
            "send valid Unicode text",
            ok=False,
        )
    try:
        args = tool.args.model_validate(parsed)
    except ValidationError as exc:
        return ToolResult(_explain_validation(tool, exc, secrets), ok=False)

    try:
        return tool.run(args, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), ok=False)
    except Exception as exc:  # the entry point's one rule: whatever a tool does, never throw
        return ToolResult(f"{call.name} failed: {exc.__class__.__name__}: {exc}", ok=False)


class ToolRegistry:
    """The tools a loop may use, with one execution entry point.

    `run_call` and `truncate` are parameters so the lab (and the self-test) can plug in a student's
    own versions; by default they are the package's.
    """

    def __init__(
        self,
        tools: Iterable[ToolDef],
        *,
        run_call: RunCall = execute_call,
        truncate: Callable[[ToolResult], ToolResult] = truncate_result,
    ) -> None:
        self.tools: dict[str, ToolDef] = {tool.name: tool for tool in tools}
        self._run_call = run_call
        self._truncate = truncate

    def list(self) -> list[dict[str, Any]]:
        """The OpenAI `tools` array: exactly what the model sees, nothing it does not."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in self.tools.values()
        ]

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Never raises, even when a plugged-in `run_call` or `truncate` does. Every form of
        every key in `ctx.secrets` is redacted before truncation, so no cut keeps part of one."""
        secrets = getattr(ctx, "secrets", ())  # a context a lab's own code built may lack them
        try:
            result = self._run_call(self.tools, call, ctx)
            return self._truncate(replace(result, content=redact(result.content, secrets)))
        except Exception as exc:
            failure = f"{call.name} failed: {exc.__class__.__name__}: {exc}"
            return ToolResult(redact(failure, secrets), ok=False)

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self.tools)})"


def default_registry() -> ToolRegistry:
    """The three read-only tools of day three."""
    return ToolRegistry([GLOB_TOOL, GREP_TOOL, READ_FILE_TOOL])
