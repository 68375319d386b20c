"""The tools each stream of the fragments demo was recorded with, and the registry's verdict.

A merged call is judged as the loop would judge it: by the registry's own steps (find the tool,
parse the arguments, validate them), so a call the registry would refuse is marked wrong. The
course's streams use the course's registry; openai-python's parallel recording used two tools of
its test suite, declared here with the schema that test gives them. Deliberately not handled:
running a call (the demo only judges it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from course_agent.protocol import ToolContext, ToolDef, ToolError, ToolResult
from course_agent.registry import default_registry, find_tool, parse_arguments, validate_arguments

__all__ = ["OPENAI_TEST_TOOLS", "course_tools", "refusal"]

Tools = Mapping[str, ToolDef]


class GetWeatherArgs(BaseModel):
    """openai-python's tests/lib/chat/test_completions_streaming.py, as its model was asked."""

    model_config = ConfigDict(extra="forbid")
    city: str
    country: str
    units: Literal["c", "f"] = "c"


class GetStockPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ticker: str
    exchange: str


def _not_run(args: object, ctx: ToolContext) -> ToolResult:
    return ToolResult("not run: the fragments demo judges calls, it runs none", ok=False)


OPENAI_TEST_TOOLS: Tools = {
    tool.name: tool
    for tool in (
        ToolDef("GetWeatherArgs", "the weather in a city", GetWeatherArgs, _not_run),
        ToolDef("get_stock_price", "a stock's price on an exchange", GetStockPrice, _not_run),
    )
}


@functools.cache
def course_tools() -> Tools:
    """The course's registry: glob, grep, read_file."""
    return default_registry().tools


# The registry's messages end with what a good call looks like ("Parameters: ..."), and the JSON
# one quotes the arguments back: the demo's table already shows both.
_TAIL = re.compile(r"(: '.*')?\. (Parameters|Send one JSON object; parameters): .*$", re.DOTALL)


def refusal(tools: Tools, name: str, args: str) -> str | None:
    """What the registry says refusing the call `name(args)`, or None if it would run it."""
    try:
        tool = find_tool(tools, name)
        validate_arguments(tool, parse_arguments(tool, args))
    except ToolError as exc:
        return _TAIL.sub("", str(exc))
    return None
