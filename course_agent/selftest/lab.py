"""The lab's seven checks, each one line with its figure, each in three parts (judge.Part).

`run_parts` runs the parts in one process (the student's self-test); the grader splits them
(lab/ask.py). Deliberately not handled: partial credit inside a check.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from course_agent.accumulator import ToolCallAccumulator
from course_agent.loop import check_transcript, run_agent
from course_agent.offline.repository import BIG_FILE, QUESTION, build_sandbox, sandbox_files
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import (
    Accumulator,
    AgentStopped,
    ToolCall,
    ToolContext,
    ToolError,
    ToolFinished,
    ToolResult,
)
from course_agent.registry import RunCall, ToolRegistry, default_registry, execute_call
from course_agent.selftest.feedback import FEEDBACK
from course_agent.selftest.judge import (
    CheckFailed,
    Part,
    caught,
    difference,
    expect,
    plain,
    plain_result,
    result_of,
    run_part,
    said,
    shown,
)
from course_agent.selftest.merging import MERGING
from course_agent.selftest.truncation import TRUNCATION, meta_problem
from course_agent.selftest.truncation_rules import cut_problem
from course_agent.tools import READ_FILE_TOOL
from course_agent.truncate import MAX_RESULT_CHARS, truncate_result

__all__ = ["PARTS", "Check", "SelftestReport", "judge_part", "run_parts", "run_selftest"]

# The package's own parts: what the grader runs to know the answer a check wants.
PACKAGE = {
    "accumulator": ToolCallAccumulator,
    "run_call": execute_call,
    "truncate": truncate_result,
}
SEED = 2026  # draws the generated cases: the same seed, the same report on every run and machine
NAMES = [
    "registry",
    "path boundary",
    "fragment merging",
    "bad-argument feedback",
    "truncation",
    "big file",
    "offline loop",
]


@dataclass(frozen=True)
class Check:
    """One of the seven checks: passed with its figure, or failed with one line saying why."""

    number: int
    name: str  # one of NAMES
    ok: bool
    line: str  # passed: what was checked and the figure measured; failed: "name: what went wrong"


@dataclass(frozen=True)
class SelftestReport:
    """The seven checks in order; `to_dict`/`from_dict` carry it between processes as JSON."""

    checks: list[Check]
    seed: int = SEED  # the generated cases' seed: the same seed gives the same report

    @property
    def passed(self) -> int:
        return sum(check.ok for check in self.checks)

    def summary(self) -> str:
        return f"{self.passed}/{len(self.checks)} passed"

    def failures(self) -> list[str]:
        """One line per failed check, as __str__ shows it: what to show under `k/7 passed`."""
        return [f"x {c.number}. {c.line}" for c in self.checks if not c.ok]

    def __str__(self) -> str:
        lines = [f"{'v' if c.ok else 'x'} {c.number}. {c.line}" for c in self.checks]
        return "\n".join([*lines, self.summary()])

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: {"seed": n, "checks": [{"number", "name", "ok", "line"}, ...]}."""
        return {"seed": self.seed, "checks": [asdict(check) for check in self.checks]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelftestReport:
        """The report `to_dict` gave; ValueError, naming what is wrong, for any other shape."""
        checks = data.get("checks") if isinstance(data, Mapping) else None
        if not isinstance(checks, list):
            raise ValueError(f"not a self-test report: no list of checks in {shown(data)}")
        types = {"number": int, "name": str, "ok": bool, "line": str}
        for item in checks:
            if not (isinstance(item, Mapping) and set(item) == set(types)) or not all(
                type(item[key]) is kind
                for key, kind in types.items()  # True is no number
            ):
                wanted = ", ".join(f"{key} ({kind.__name__})" for key, kind in types.items())
                raise ValueError(f"not a self-test report: a check has {wanted}, not {shown(item)}")
        seed = data.get("seed", SEED)
        if type(seed) is not int:
            raise ValueError(f"not a self-test report: seed {shown(seed)} is not a number")
        return cls([Check(**item) for item in checks], seed)


def _registry_cases(rng: random.Random) -> list[dict[str, Any]]:
    return [{"ask": {}}]


def _registry_answer(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    return [plain(default_registry().list())]


def _registry_judge(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    tools = answers[0]
    names = sorted(t["function"]["name"] for t in tools)
    expect(
        names == ["glob", "grep", "read_file"],
        f"the loop knows only list and execute, no concrete tool: registry lists {names}, "
        "expected glob, grep, read_file",
    )
    params = 0
    for tool in tools:
        schema = tool["function"]["parameters"]
        expect(
            schema.get("additionalProperties") is False,
            f"{tool['function']['name']}'s schema is not strict (additionalProperties: false)",
        )
        expect(schema.get("required"), "every tool needs a required parameter")
        for name, prop in schema["properties"].items():
            expect(
                prop.get("description"),
                f"describe every parameter, default included: {name} has no description",
            )
            params += 1
    return f"registry lists glob, grep, read_file; {params} parameters, all described, strict"


def _escape_cases(rng: random.Random) -> list[dict[str, Any]]:
    paths = ["../outside.txt", "{outside}", "link-out.txt", "src/calc.js"]  # the last one inside
    return [{"ask": {"path": path}} for path in paths]


def _escape_answer(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: read_file's own run on each path (the package's tool, not the executor)."""
    answers = []
    with tempfile.TemporaryDirectory(prefix="course-agent-selftest-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp) / "repo"))
        outside = ctx.root.parent / "outside.txt"
        outside.write_text("secret\n")
        (ctx.root / "link-out.txt").symlink_to(outside)
        for path in [ask["path"].format(outside=outside) for ask in asks]:
            try:
                args = READ_FILE_TOOL.args.model_validate({"path": path})
                answers.append({"ok": READ_FILE_TOOL.run(args, ctx).ok})
            except ToolError as exc:
                answers.append({"ok": False, "text": str(exc)})
    return answers


def _escape_judge(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    attempts = ["../outside.txt", "an absolute path", "link-out.txt"]
    inside = answers[-1]
    expect(inside["ok"] is True, f"reading src/calc.js inside failed: {inside.get('text')}")
    refused = [a for a, answer in zip(attempts, answers, strict=False) if answer["ok"] is False]
    expect(
        refused == attempts,
        "every path must stay inside the working directory, judged on the resolved absolute "
        f"path: not refused {sorted(set(attempts) - set(refused))}",
    )
    return (
        f"climbing out blocked: {len(refused)}/3 (relative, absolute, symlink); inside reads fine"
    )


def _plugged(functions: Mapping[str, Any]) -> ToolRegistry:
    tools = default_registry().tools.values()
    return ToolRegistry(tools, run_call=functions["run_call"], truncate=functions["truncate"])


def _repository_seed(rng: random.Random) -> int:
    """The seed of the repository (and the script) a check runs on: drawn from the grader's own,
    so an answer recorded from any other run holds other digits and other call ids."""
    return rng.randrange(1, 2**31)


def _big_file_cases(rng: random.Random) -> list[dict[str, Any]]:
    """One read of the seeded big file, and what the package's read_file says before any cut."""
    ask = {"path": BIG_FILE, "seed": _repository_seed(rng)}
    size = len(sandbox_files(ask["seed"])[BIG_FILE])
    uncut = {**PACKAGE, "truncate": lambda result: result}
    return [{"ask": ask, "size": size, "read": _big_file_answer([ask], uncut)[0]["result"]}]


def _big_file_answer(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    with tempfile.TemporaryDirectory(prefix="course-agent-selftest-") as tmp:
        ctx = ToolContext(build_sandbox(Path(tmp), asks[0]["seed"]))
        call = ToolCall("c", "read_file", json.dumps({"path": asks[0]["path"]}))
        return [plain_result(_plugged(functions).execute(call, ctx), "registry.execute")]


def _big_file_judge(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """The read as the course's rules cut it: applied once, at the entry point, to a real file."""
    case, got = cases[0], answers[0]
    if "bad" in got:
        raise CheckFailed(got["bad"])
    result, read = result_of(got["result"]), result_of(case["read"])
    size = len(result.content)
    expect(result.ok, f"read_file on {BIG_FILE} came back failed: {result.content[:400]}")
    expect(
        result.content != read.content,
        f"read_file fed back all {size} chars: the entry point (registry.execute) cuts every "
        f"result over {MAX_RESULT_CHARS}",
    )
    problem = cut_problem(read.content, result.content) or meta_problem(read, result)
    expect(not problem, f"read_file fed back {size} chars: {problem}")
    return f"reading the generated {case['size']}-char {BIG_FILE} feeds back {size} chars"


def _loop_cases(rng: random.Random) -> list[dict[str, Any]]:
    """The offline question on a seeded repository and script, and the package's own run of it."""
    ask = {"question": QUESTION, "seed": _repository_seed(rng)}
    return [{"ask": ask, "want": _loop_answer([ask], PACKAGE)[0]}]


def _loop_answer(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: the offline question through the real loop with the student's three parts;
    the calls run, how it stopped and the transcript, as data."""
    with tempfile.TemporaryDirectory(prefix="course-agent-selftest-") as tmp:
        seed = asks[0]["seed"]
        ctx = ToolContext(build_sandbox(Path(tmp), seed))
        messages: list[dict] = []
        model, registry = ScriptedModel(seed=seed), _plugged(functions)
        run = run_agent(
            asks[0]["question"],
            model,
            registry,
            ctx,
            messages=messages,
            accumulator=functions["accumulator"],
        )
        try:
            events = list(run)
        except Exception as exc:
            return [{**caught(exc), "messages": plain(messages)}]
    finished = [
        {"name": e.call.name, "ok": e.result.ok, "content": e.result.content}
        for e in events
        if isinstance(e, ToolFinished)
    ]
    last = events[-1]
    stopped = (
        {"reason": last.reason, "message": last.message}
        if isinstance(last, AgentStopped)
        else {"reason": None, "message": repr(last)}
    )
    return [plain({"finished": finished, "stopped": stopped, "messages": messages})]


def _loop_judge(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    got = answers[0]
    if "raised" in got:  # the lab's stub says what to do; anything else, what was raised
        raise CheckFailed(said(got, "the loop"))
    finished, stopped, messages = got["finished"], got["stopped"], got["messages"]
    order = [e["name"] for e in finished]
    expect(
        stopped["reason"] not in (None, "error"),
        f"the loop stopped: {stopped['message']}",
    )
    expect(
        order == ["glob", "grep", "read_file"],
        f"calls ran in order {shown(order, 80)}, expected glob, grep, read_file",
    )
    failed = [f"{e['name']}: {e['content'][:300]}" for e in finished if not e["ok"]]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    expect(not failed, f"calls failed instead of answering: {failed[0] if failed else ''}{more}")
    expect(stopped["reason"] == "done", f"ended: {stopped['reason']}: {stopped['message']}")
    expect(messages[-1]["role"] == "assistant" and messages[-1]["content"], "no conclusion")
    expect(
        (problem := check_transcript(messages)) is None,
        f"every call must have exactly one corresponding result message: {problem}",
    )
    # What ran must be this run's: the seeded repository's text under the seeded stream's ids.
    want = cases[0]["want"]
    for mine, theirs in zip(finished, want["finished"], strict=False):
        expect(
            mine["content"] == theirs["content"],
            f"{mine['name']} fed back other text than this repository holds, "
            + difference(mine["content"], theirs["content"]),
        )
    expect(
        _call_ids(messages) == _call_ids(want["messages"]),
        f"the transcript's call ids {shown(_call_ids(messages), 60)} are not the ones this "
        f"run's stream sent, {shown(_call_ids(want['messages']), 60)}",
    )
    sizes = ", ".join(str(len(e["content"])) for e in finished)
    return f"offline question ran glob -> grep -> read_file ({sizes} chars), then concluded"


def _call_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [call["id"] for m in messages for call in m.get("tool_calls") or []]


# The seven checks in NAMES order; `uses` names the run_selftest parameters each answer calls.
PARTS = [
    Part("registry", (), _registry_cases, _registry_answer, _registry_judge),
    Part("path boundary", (), _escape_cases, _escape_answer, _escape_judge),
    MERGING,
    FEEDBACK,
    TRUNCATION,
    Part("big file", ("run_call", "truncate"), _big_file_cases, _big_file_answer, _big_file_judge),
    Part(
        "offline loop",
        ("accumulator", "run_call", "truncate"),
        _loop_cases,
        _loop_answer,
        _loop_judge,
    ),
]


def judge_part(number: int, part: Part, cases: list[dict[str, Any]], answers: Any) -> Check:
    """Check `number`: `part` judging `answers` (plain data from wherever) against `cases`.

    Answers of the wrong shape (not a list of one per case, missing fields, wrong types) fail the
    check with a line saying so; nothing in them can make the judge raise.
    """
    try:
        if not isinstance(answers, list) or len(answers) != len(cases):
            raise CheckFailed(
                f"the answers are not one per case ({len(cases)}): {shown(answers, 60)}"
            )
        return Check(number, part.name, True, part.judge(cases, answers))
    except CheckFailed as exc:
        return Check(number, part.name, False, f"{part.name}: {' '.join(str(exc).split())}")
    except Exception as exc:  # a field missing or of the wrong type: nonsense, not an answer
        said = f"{type(exc).__name__}: {shown(str(exc), 60)[1:-1]}"
        return Check(
            number,
            part.name,
            False,
            f"{part.name}: the answer is not data of the shape asked ({said})",
        )


def run_parts(parts: Sequence[Part], functions: Mapping[str, Any], seed: int) -> SelftestReport:
    """Every part in this process: cases, answers (through JSON, as they travel), judgement."""
    checks = []
    for number, part in enumerate(parts, 1):
        try:
            line = run_part(part, functions, random.Random(f"{seed}:{part.name}"))
            checks.append(Check(number, part.name, True, line))
        except CheckFailed as exc:
            checks.append(
                Check(number, part.name, False, f"{part.name}: {' '.join(str(exc).split())}")
            )
        except Exception as exc:  # a stripped package's case, or an answer that broke
            message = " ".join((str(exc) or type(exc).__name__).split())
            checks.append(Check(number, part.name, False, f"{part.name}: {message}"))
    return SelftestReport(checks, seed)


def run_selftest(
    accumulator: Callable[[], Accumulator] = ToolCallAccumulator,
    run_call: RunCall = execute_call,
    truncate: Callable[[ToolResult], ToolResult] = truncate_result,
    *,
    seed: int = SEED,
) -> SelftestReport:
    """The seven checks in this process: the student's own feedback, not the grade.

    `seed` draws the generated cases: the same seed, the same cases and the same report.
    """
    functions = {"accumulator": accumulator, "run_call": run_call, "truncate": truncate}
    return run_parts(PARTS, functions, seed)
