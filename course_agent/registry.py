"""The loop knows two verbs: `list` the tools, `execute` a call. Execution never raises.

Every failure becomes a failed ToolResult whose text a model can act on; truncation is applied
here, once, for every tool. Deliberately not handled: approval of writes (read_only is only kept),
and hostile calls (megabytes of arguments, 5000-digit numbers: app/guard.py refuses those).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from course_agent.tools import GLOB_TOOL, GREP_TOOL, READ_FILE_TOOL
from course_agent.truncate import truncate_result

__all__ = [
    "RunCall",
    "ToolRegistry",
    "default_registry",
    "describe_parameters",
    "execute_call",
    "find_tool",
    "parse_arguments",
    "validate_arguments",
]

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


def _echo(text: str, limit: int) -> str:
    """The start of what the model sent, to quote back."""
    return text[:limit]


def _explain_validation(tool: ToolDef, error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        sent = "" if item["type"] == "missing" else json.dumps(item.get("input"))
        problems.append(f"{field}: {item['msg']}" + (f" (got {_echo(sent, 60)})" if sent else ""))
    return (
        f"invalid arguments for {tool.name}: {'; '.join(problems)}. "
        f"Parameters: {describe_parameters(tool)}"
    )


def find_tool(tools: Mapping[str, ToolDef], name: str) -> ToolDef:
    """Failure 1: an unknown tool. The message names the ones that exist."""
    if name not in tools:
        raise ToolError(f"there is no tool named {name}. Available: {', '.join(tools)}")
    return tools[name]


def parse_arguments(tool: ToolDef, raw: str) -> dict[str, Any]:
    """Failure 2: arguments that are not a JSON object (a stream cut short, a list)."""
    raw = raw.strip() or "{}"  # a tool with no arguments may stream nothing at all
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"arguments for {tool.name} are not valid JSON ({exc}): {_echo(raw, 80)!r}. "
            f"Send one JSON object; parameters: {describe_parameters(tool)}"
        ) from None
    if not isinstance(parsed, dict):
        raise ToolError(
            f"arguments for {tool.name} must be a JSON object, got {type(parsed).__name__}. "
            f"Parameters: {describe_parameters(tool)}"
        )
    return parsed


def validate_arguments(tool: ToolDef, parsed: dict[str, Any]) -> Any:
    """Failure 3: arguments that fail the schema. Which field, what came, what is expected."""
    try:
        return tool.args.model_validate(parsed)
    except ValidationError as exc:
        raise ToolError(_explain_validation(tool, exc)) from None


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Run one call. The four failures come back as results, never as exceptions: an unknown
    tool, arguments that are not JSON, arguments that fail the schema, a tool that raised.
    """
    try:
        tool = find_tool(tools, call.name)
        args = validate_arguments(tool, parse_arguments(tool, call.args))
        return tool.run(args, ctx)
    except ToolError as exc:  # 1 to 3, and a tool's own refusal: the message as it is
        return ToolResult(str(exc), ok=False)
    except Exception as exc:  # 4. whatever a tool does, the loop gets a result, never a throw
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
        """Run the call, then cut its result to the one ceiling: here, once, for every tool.
        Never raises, even when a plugged-in `run_call` or `truncate` (a student's) does."""
        try:
            return self._truncate(self._run_call(self.tools, call, ctx))
        except Exception as exc:
            return ToolResult(f"{call.name} failed: {exc.__class__.__name__}: {exc}", ok=False)

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self.tools)})"


def default_registry() -> ToolRegistry:
    """The three read-only tools of day three."""
    return ToolRegistry([GLOB_TOOL, GREP_TOOL, READ_FILE_TOOL])
