"""Extension checks 1-2: a student's list_dir keeps the four rules, then works in a registry.

Check 1 reads what the model would see (tool_rules.py); check 2 adds the tool to the course's
three, sends it generated calls through `registry.execute`, and runs a two-turn scripted model that
calls it in the real loop. Deliberately not handled: a real model's choice of tool (the script
calls the tool it is told to; no description can make it choose better).
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from course_agent.loop import check_transcript, run_agent
from course_agent.offline.repository import build_sandbox
from course_agent.offline.scripted import ScriptedModel, Step
from course_agent.protocol import (
    AgentStopped,
    ModelEvent,
    ToolCall,
    ToolContext,
    ToolDef,
    ToolFinished,
)
from course_agent.providers.openai_chunks import events_from_chunk
from course_agent.registry import ToolRegistry, default_registry
from course_agent.selftest.judge import CheckFailed, expect, first_of, shown
from course_agent.selftest.tool_rules import rule_problems
from course_agent.tools.list_dir import run_list_dir

__all__ = [
    "LIMIT",
    "LIST_QUESTION",
    "AddedToolScript",
    "check_design",
    "check_wired",
    "made_tool",
]

LIMIT = 100  # the lab's default for list_dir's `limit`; `path` defaults to "."
LIST_QUESTION = "what is in src/?"
COURSE_TOOLS = {"glob", "grep", "read_file"}
# Directories of the generated sandbox, written as a model might write them.
FOLDERS = [".", "src", "src/", "./src", "test", "data", "src/../test"]
# Calls the schema must refuse before run_list_dir sees them: (arguments, what is wrong).
REFUSED = [
    ({"limit": 0}, "a limit of 0 (add ge=1: the schema then says so)"),
    ({"limit": "many"}, "a string for the limit"),
    ({"path": "src", "recursive": True}, "an invented parameter, recursive"),
]


def made_tool(make_tool: Callable[[], Any]) -> ToolDef:
    """What `make_tool()` returns, if it is a ToolDef the registry can list; else CheckFailed."""
    tool = make_tool()
    if not isinstance(tool, ToolDef):
        raise CheckFailed(
            f"list_dir_tool() returned {shown(tool)}: return ToolDef(name=..., description=..., "
            "args=YourArgs, run=run_list_dir, read_only=True)"
        )
    try:
        ToolRegistry([tool]).list()
    except Exception as exc:  # an args that is no pydantic class has no schema to send
        raise CheckFailed(
            f"the registry cannot list your tool ({type(exc).__name__}: {shown(str(exc), 60)}): "
            "args must be a pydantic BaseModel subclass"
        ) from None
    return tool


def check_design(make_tool: Callable[[], Any], rng: random.Random) -> str:
    tool = made_tool(make_tool)
    entry = ToolRegistry([tool]).list()[0]
    problems = rule_problems(entry)
    # The schema sent always says additionalProperties: false (protocol.clean_schema); only the
    # args class's own schema tells whether validation refuses an extra argument or drops it.
    if tool.args.model_json_schema().get("additionalProperties") is not False:
        problems.append(
            f"{tool.args.__name__} accepts extra arguments and silently drops them: add "
            "model_config = ConfigDict(extra='forbid'), so an invented one comes back named"
        )
    first_of(problems, 5, "rules")
    count = len(tool.parameters["properties"])
    return (
        f"{tool.name}: a verb-noun name, an example, {count} parameters described with their "
        "defaults, one job, no extra properties"
    )


class AddedToolScript:
    """A two-turn offline model: it calls the tool the registry adds to the course's three, on
    src, then answers with what came back. Its steps travel as chat.completion.chunk objects, so
    the real parser and accumulator merge them, as with ScriptedModel."""

    label = "scripted model (offline), calling the added tool"

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        added = [t["function"]["name"] for t in tools if t["function"]["name"] not in COURSE_TOOLS]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        results = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
        turn = 1 + sum(m["role"] == "assistant" for m in messages[last_user:])
        if not added:
            step = Step("No tool was added to the course's three.", finish="stop")
        elif not results:
            step = Step("Let me list src.", [(added[0], json.dumps({"path": "src"}))])
        else:
            names = ", ".join(results[-1].splitlines())
            step = Step(f"src/ holds: {names}.", finish="stop")
        for chunk in ScriptedModel().chunks(step, turn):
            yield from events_from_chunk(chunk)


def _listing(ctx: ToolContext, path: str, limit: int) -> str:
    return run_list_dir(SimpleNamespace(path=path, limit=limit), ctx).content


def _parameters_problem(tool: ToolDef) -> str | None:
    schema = tool.parameters
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    if set(props) != {"path", "limit"}:
        return (
            f"{tool.name} has parameters {sorted(props)}: the lab's tool takes path and limit, "
            "the two run_list_dir reads"
        )
    for name, default in (("path", "."), ("limit", LIMIT)):
        if name in required or props[name].get("default") != default:
            return f"parameter {name} must be optional with default {default!r}, as the lab says"
    return None


def _loop_problem(registry: ToolRegistry, tool: ToolDef, ctx: ToolContext) -> str | None:
    messages: list[dict[str, Any]] = []
    events = list(run_agent(LIST_QUESTION, AddedToolScript(), registry, ctx, messages=messages))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    stopped = events[-1]
    if [e.call.name for e in finished] != [tool.name] or not finished[0].result.ok:
        what = [(e.call.name, e.result.content[:60]) for e in finished]
        return f"the scripted model's call to {tool.name} ran as {shown(what, 100)}"
    if not (isinstance(stopped, AgentStopped) and stopped.reason == "done"):
        return f"the loop ended with {shown(stopped, 100)}, not an answer"
    return check_transcript(messages)


def check_wired(make_tool: Callable[[], Any], rng: random.Random) -> str:
    tool = made_tool(make_tool)
    expect(tool.read_only is True, f"{tool.name} has read_only={tool.read_only}: it only reads")
    expect((problem := _parameters_problem(tool)) is None, problem)
    registry = ToolRegistry([*default_registry().tools.values(), tool])
    listed = [entry["function"]["name"] for entry in registry.list()]
    expect(tool.name in listed, f"the registry lists {listed}, without {tool.name}")
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="course-agent-list-dir-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        calls = [(folder, rng.choice([None, None, rng.randint(1, 4)])) for folder in FOLDERS]
        for folder, limit in rng.sample(calls, len(calls)):
            args = {"path": folder} if limit is None else {"path": folder, "limit": limit}
            if rng.random() < 0.3 and folder == "." and limit is None:
                args = {}  # no arguments at all: both defaults
            result = registry.execute(ToolCall("c", tool.name, json.dumps(args)), ctx)
            want = _listing(ctx, folder, LIMIT if limit is None else limit)
            if not result.ok or result.content != want:
                failures.append(
                    f"{tool.name}({json.dumps(args)}) fed back {shown(result.content, 60)}, "
                    f"expected {shown(want, 50)}"
                )
        for args, what in REFUSED:
            result = registry.execute(ToolCall("c", tool.name, json.dumps(args)), ctx)
            if result.ok:
                failures.append(f"{tool.name}({json.dumps(args)}) ran: the schema let {what} in")
        first_of(failures, len(calls) + len(REFUSED), "calls")
        expect((problem := _loop_problem(registry, tool, ctx)) is None, problem)
    return (
        f"{tool.name} in a registry with the three: {len(calls)} calls listed, {len(REFUSED)} bad "
        "ones refused; the scripted model used it"
    )
