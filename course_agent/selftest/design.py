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
from collections.abc import Callable, Iterator, Mapping
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
from course_agent.selftest.judge import (
    CheckFailed,
    Part,
    caught,
    expect,
    first_of,
    plain,
    said,
    shown,
)
from course_agent.selftest.tool_rules import rule_problems
from course_agent.tools.list_dir import run_list_dir

__all__ = ["DESIGN", "LIMIT", "LIST_QUESTION", "WIRED", "AddedToolScript"]

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


def _made_tool(make_tool: Callable[[], Any]) -> ToolDef | dict[str, Any]:
    """In the kernel: what `make_tool()` returns, if it is a ToolDef the registry can list; else
    {"bad": why not} (or the exception it raised, as data)."""
    try:
        tool = make_tool()
    except Exception as exc:
        return caught(exc)
    if not isinstance(tool, ToolDef):
        return {
            "bad": f"list_dir_tool() returned {shown(tool)}: return ToolDef(name=..., "
            "description=..., args=YourArgs, run=run_list_dir, read_only=True)"
        }
    try:
        ToolRegistry([tool]).list()
    except Exception as exc:  # an args that is no pydantic class has no schema to send
        return {
            "bad": f"the registry cannot list your tool ({type(exc).__name__}: "
            f"{shown(str(exc), 60)}): args must be a pydantic BaseModel subclass"
        }
    return tool


def _no_tool(made: Mapping[str, Any]) -> None:
    """In the grader: fail with what the kernel said instead of a tool."""
    if "raised" in made:
        raise CheckFailed(said(made, "list_dir_tool()"))
    raise CheckFailed(str(made["bad"]))


def cases_design(rng: random.Random) -> list[dict[str, Any]]:
    return [{"ask": {}}]


def answer_design(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: exactly what the model sees of the tool, and whether its args class
    forbids extra arguments."""
    tool = _made_tool(functions["list_dir_tool"])
    if not isinstance(tool, ToolDef):
        return [tool]
    schema = tool.args.model_json_schema()
    entry = ToolRegistry([tool]).list()[0]
    forbids = schema.get("additionalProperties") is False
    return [{"entry": plain(entry), "forbids": forbids, "args": tool.args.__name__}]


def judge_design(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: the four rules on what the model sees."""
    made = answers[0]
    if "entry" not in made:
        _no_tool(made)
    problems = rule_problems(made["entry"])
    # The schema sent always says additionalProperties: false (protocol.clean_schema); only the
    # args class's own schema tells whether validation refuses an extra argument or drops it.
    if made["forbids"] is not True:
        problems.append(
            f"{made['args']} accepts extra arguments and silently drops them: add "
            "model_config = ConfigDict(extra='forbid'), so an invented one comes back named"
        )
    first_of(problems, 5, "rules")
    function = made["entry"]["function"]
    count = len(function["parameters"]["properties"])
    return (
        f"{function['name']}: a verb-noun name, an example, {count} parameters described with "
        "their defaults, one job, no extra properties"
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


def _parameters_problem(parameters: Mapping[str, Any], name: str) -> str | None:
    props, required = parameters.get("properties", {}), set(parameters.get("required", []))
    if set(props) != {"path", "limit"}:
        return (
            f"{name} has parameters {sorted(props)}: the lab's tool takes path and limit, "
            "the two run_list_dir reads"
        )
    for each, default in (("path", "."), ("limit", LIMIT)):
        if each in required or props[each].get("default") != default:
            return f"parameter {each} must be optional with default {default!r}, as the lab says"
    return None


def _loop(registry: ToolRegistry, ctx: ToolContext) -> dict[str, Any]:
    """In the kernel: the two-turn scripted model through the real loop, as data."""
    messages: list[dict[str, Any]] = []
    try:
        events = list(run_agent(LIST_QUESTION, AddedToolScript(), registry, ctx, messages=messages))
    except Exception as exc:
        return caught(exc)
    last = events[-1]
    return plain(
        {
            "finished": [
                [e.call.name, e.result.ok, e.result.content[:60]]
                for e in events
                if isinstance(e, ToolFinished)
            ],
            "done": isinstance(last, AgentStopped) and last.reason == "done",
            "stopped": repr(last)[:100],
            "messages": messages,
        }
    )


def cases_wired(rng: random.Random) -> list[dict[str, Any]]:
    """The calls the registry is sent, with what run_list_dir lists for each, then the bad ones."""
    calls = [(folder, rng.choice([None, None, rng.randint(1, 4)])) for folder in FOLDERS]
    cases = []
    with tempfile.TemporaryDirectory(prefix="course-agent-list-dir-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for folder, limit in rng.sample(calls, len(calls)):
            args = {"path": folder} if limit is None else {"path": folder, "limit": limit}
            if rng.random() < 0.3 and folder == "." and limit is None:
                args = {}  # no arguments at all: both defaults
            want = _listing(ctx, folder, LIMIT if limit is None else limit)
            cases.append({"ask": args, "want": want})
    cases += [{"ask": args, "refused": what} for args, what in REFUSED]
    return cases


def answer_wired(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: the tool beside the course's three, each call through registry.execute,
    then the scripted model; the first answer carries the tool's facts and the loop's run."""
    tool = _made_tool(functions["list_dir_tool"])
    if not isinstance(tool, ToolDef):
        return [tool] + [{} for _ in asks[1:]]
    registry = ToolRegistry([*default_registry().tools.values(), tool])
    answers: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="course-agent-list-dir-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp)))
        for args in asks:
            result = registry.execute(ToolCall("c", tool.name, json.dumps(args)), ctx)
            answers.append({"ok": result.ok, "content": result.content})
        answers[0]["tool"] = {
            "name": tool.name,
            "read_only": tool.read_only,
            "parameters": plain(tool.parameters),
            "listed": [entry["function"]["name"] for entry in registry.list()],
            "loop": _loop(registry, ctx),
        }
    return plain(answers)


def _loop_problem(name: str, run: Mapping[str, Any]) -> str | None:
    if "raised" in run:
        return f"the loop raised {said(run, 'the loop')}"
    finished = run["finished"]
    if [each[0] for each in finished] != [name] or not finished[0][1]:
        what = [(each[0], each[2]) for each in finished]
        return f"the scripted model's call to {name} ran as {shown(what, 100)}"
    if not run["done"]:
        return f"the loop ended with {run['stopped']}, not an answer"
    return check_transcript(run["messages"])


def judge_wired(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: the listings against run_list_dir's, the bad calls refused, the loop run."""
    facts = answers[0].get("tool")
    if facts is None:
        _no_tool(answers[0])
    name = facts["name"]
    expect(facts["read_only"] is True, f"{name} has read_only={facts['read_only']}: it only reads")
    expect((problem := _parameters_problem(facts["parameters"], name)) is None, problem)
    expect(name in facts["listed"], f"the registry lists {facts['listed']}, without {name}")
    failures: list[str] = []
    for case, got in zip(cases, answers, strict=True):
        args = json.dumps(case["ask"])
        if "refused" in case:
            if got["ok"]:
                failures.append(f"{name}({args}) ran: the schema let {case['refused']} in")
        elif not got["ok"] or got["content"] != case["want"]:
            failures.append(
                f"{name}({args}) fed back {shown(got['content'], 60)}, expected "
                f"{shown(case['want'], 50)}"
            )
    first_of(failures, len(cases), "calls")
    expect((problem := _loop_problem(name, facts["loop"])) is None, problem)
    listed = len(cases) - len(REFUSED)
    return (
        f"{name} in a registry with the three: {listed} calls listed, {len(REFUSED)} bad "
        "ones refused; the scripted model used it"
    )


DESIGN = Part("tool design", ("list_dir_tool",), cases_design, answer_design, judge_design)
WIRED = Part("tool in a registry", ("list_dir_tool",), cases_wired, answer_wired, judge_wired)
