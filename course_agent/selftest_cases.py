"""The self-test's generated cases: fragment streams, bad calls on probe tools, results to truncate.

Drawn from a seeded random.Random, so a run is reproducible; each case carries a label a student can
read and the answer expected. Deliberately not handled: judging an answer (selftest_checks.py).
"""

from __future__ import annotations

import itertools
import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .protocol import ToolCall, ToolCallDelta, ToolContext, ToolDef, ToolError, ToolResult
from .tools import READ_FILE_TOOL

__all__ = [
    "SEED",
    "BadCall",
    "MergeCase",
    "Probes",
    "bad_calls",
    "merge_cases",
    "results_to_truncate",
]

SEED = 2026  # the default: the same cases, so the same report, on every run and machine

# -- fragment streams (check 3) -----------------------------------------------------------------

# The course's parallel call through a Claude gateway: indexes from 1, heads out of order.
COURSE_STREAM = (
    ToolCallDelta(2, "call_b", "grep", ""),
    ToolCallDelta(1, "call_a", "glob", ""),
    ToolCallDelta(1, None, None, '{"pat'),
    ToolCallDelta(2, None, None, '{"pattern":"di'),
    ToolCallDelta(1, "", "", 'tern":"**/'),
    ToolCallDelta(2, None, None, 'vide\\\\("}'),
    ToolCallDelta(1, None, None, '*.js"}'),
)

# Arguments with something to cut inside: escaped quotes, backslashes, \u escapes, nothing at all.
ARGUMENTS = [
    ("glob", {"pattern": "src/**/*.{js,ts}"}),
    ("grep", {"pattern": "divide\\(", "glob": "**/*.js"}),
    ("grep", {"pattern": 'say "hi"\t', "limit": 5}),
    ("read_file", {"path": "docs/naïve café.md", "offset": 5}),
    ("read_file", {"path": "src/calc.js", "limit": 4}),
    ("glob", None),  # a call without arguments may stream none at all
]

# How id and name travel after the head: once, in every fragment, or as "" (Qwen, GLM).
HEADS = {
    "once": "ids and names sent once",
    "repeated": "ids and names repeated in every fragment",
    "blanked": "later fragments with empty ids and names",
    "whole": "each call whole in one fragment",
    "no id": "a call that never gets an id",
}
# (indexes, how heads travel, arrival): every start (0, 1, 7), gaps, interleaving.
STREAMS = [
    ((0, 1), "once", "interleaved"),
    ((1, 2), "repeated", "heads out of order"),
    ((7, 9, 12), "blanked", "heads out of order"),
    ((0, 2, 3), "repeated", "interleaved"),
    ((1,), "whole", "in order"),
    ((0, 1, 2), "no id", "interleaved"),
    ((7, 8), "once", "in order"),
    ((3, 5), "whole", "heads out of order"),
    ((1, 2, 3), "blanked", "interleaved"),
    ((0, 10), "repeated", "heads out of order"),
]


@dataclass(frozen=True)
class MergeCase:
    label: str  # "stream 3 (indexes 7, 9, 12; ...)": what a student reads in a failure
    heads: str  # a key of HEADS, for the explanation of a wrong id or name
    deltas: tuple[ToolCallDelta, ...]
    want: tuple[ToolCall, ...]  # in index order


def _call_id(rng: random.Random) -> str:
    tail = "".join(rng.choices(string.ascii_letters + string.digits, k=rng.randint(4, 9)))
    return rng.choice(["call_", "toolu_", ""]) + tail


def _cut(rng: random.Random, text: str) -> list[str]:
    """`text` in pieces, cut at random points and right after a backslash (inside an escape)."""
    if len(text) < 2:
        return [text] if text else []
    cuts = set(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 6))))
    cuts |= {i + 1 for i, char in enumerate(text[:-1]) if char == "\\"}
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _fragments(rng: random.Random, index: int, call: ToolCall, heads: str) -> list[ToolCallDelta]:
    pieces = [call.args] if heads == "whole" else _cut(rng, call.args)
    head_id = None if heads == "no id" else call.id
    # The head carries no arguments, "", or the first piece, as gateways variously do.
    first = pieces.pop(0) if pieces and (heads == "whole" or rng.random() < 0.4) else None
    deltas = [ToolCallDelta(index, head_id, call.name, first or rng.choice([None, ""]))]
    later = {"repeated": (call.id, call.name), "blanked": ("", "")}.get(heads, (None, None))
    deltas += [ToolCallDelta(index, *later, piece) for piece in pieces]
    return deltas


def _arrive(rng: random.Random, calls: list[list[ToolCallDelta]], order: str) -> list:
    """The fragments as they arrive: each call's own in order, calls interleaved or not."""
    if order == "in order":
        return [delta for fragments in calls for delta in fragments]
    queues = [list(fragments) for fragments in calls]
    arrived = []
    if order == "heads out of order":
        arrived = [queue.pop(0) for queue in reversed(queues)]
    while any(queues):
        arrived.append(rng.choice([queue for queue in queues if queue]).pop(0))
    return arrived


def merge_cases(rng: random.Random) -> list[MergeCase]:
    """The course's stream first, then one stream per line of STREAMS."""
    want = (
        ToolCall("call_a", "glob", '{"pattern":"**/*.js"}'),
        ToolCall("call_b", "grep", '{"pattern":"divide\\\\("}'),
    )
    label = "the course's parallel call (indexes 1, 2; heads out of order; an empty id later)"
    cases = [MergeCase(label, "blanked", COURSE_STREAM, want)]
    for number, (indexes, heads, order) in enumerate(STREAMS, 1):
        calls, fragments = [], []
        chosen = rng.sample(ARGUMENTS, len(indexes))
        for n, (index, (name, args)) in enumerate(zip(indexes, chosen, strict=True)):
            # In the "no id" stream only the second call goes without: drain names it call_<index>.
            mode = "once" if heads == "no id" and n != 1 else heads
            call_id = f"call_{index}" if mode == "no id" else _call_id(rng)
            text = "" if args is None else json.dumps(args, separators=(",", ":"))
            calls.append(ToolCall(call_id, name, text))
            fragments.append(_fragments(rng, index, calls[-1], mode))
        shown = ", ".join(map(str, indexes))
        label = f"stream {number} (indexes {shown}; {HEADS[heads]}; {order})"
        cases.append(MergeCase(label, heads, tuple(_arrive(rng, fragments, order)), tuple(calls)))
    return cases


# -- bad calls on probe tools (check 4) ---------------------------------------------------------


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phrase: str = Field(min_length=1, description="the words to say back")
    repeats: int = Field(1, ge=1, le=3, description="how many times to say them; default 1")


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Probes:
    """Tools of the self-test's own, so an executor that ignores its `tools` argument shows it.

    `echo` notes what its run was handed (validated arguments, or a raw dict); `guard` refuses with
    a ToolError; `crash` raises another exception; `ping` takes no arguments.
    """

    def __init__(self, rng: random.Random) -> None:
        self.token = "".join(rng.choices(string.ascii_lowercase, k=6))
        self.crash = rng.choice([ValueError, KeyError, ZeroDivisionError])
        self.handed: list[str] = []  # the type name of what each echo run was handed
        self.tools = {
            tool.name: tool
            for tool in [
                ToolDef("echo", "Say the phrase back.", EchoArgs, self._echo),
                ToolDef("guard", "Refuses, always.", NoArgs, self._guard),
                ToolDef("crash", "Breaks, always.", NoArgs, self._crash),
                ToolDef("ping", "Answers pong.", NoArgs, lambda args, ctx: ToolResult("pong")),
                READ_FILE_TOOL,
            ]
        }

    def _echo(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.handed.append(type(args).__name__)
        if not isinstance(args, EchoArgs):
            raise TypeError(f"echo cannot use a {type(args).__name__}")
        return ToolResult(" ".join([args.phrase] * args.repeats))

    def _guard(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise ToolError(f"guard refuses: {self.token} is not allowed here")

    def _crash(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise self.crash(f"probe {self.token} broke")


@dataclass(frozen=True)
class BadCall:
    label: str  # "missing phrase": what a student reads in a failure
    call: ToolCall
    # What the failed result's text must say: each entry a word, or a tuple of which one will do.
    # Empty for a call that must run.
    must_say: tuple[str | tuple[str, ...], ...] = ()


def bad_calls(rng: random.Random, probes: Probes) -> Iterator[BadCall]:
    """Each kind of illegal call once, then the calls that must run."""
    invented = rng.choice(["edit_file", "write_file", "run_tests", "delete_file"])
    yield BadCall(f"unknown tool {invented!r}", ToolCall("c1", invented, "{}"), tuple(probes.tools))
    good = json.dumps({"phrase": rng.choice(["hello", "red test", "naïve"]), "repeats": 2})
    cut = good[: rng.randint(12, len(good) - 2)]  # never valid: the closing brace is gone
    where: tuple[str, ...] = ()
    try:
        json.loads(cut)
    except json.JSONDecodeError as exc:  # where it broke, as json says it: char or column
        where = (str(exc.pos), str(exc.colno))
    yield BadCall(f"arguments cut short {cut!r}", ToolCall("c2", "echo", cut), (where,))
    other = rng.choice(['["hello"]', '"hello"', "42"])
    call = ToolCall("c3", "echo", other)
    yield BadCall(f"arguments not an object {other}", call, (("object", "dict"),))
    yield BadCall("missing phrase", ToolCall("c4", "echo", '{"repeats": 2}'), ("phrase",))
    many = rng.choice(['"many"', '"twice"', "[2]"])
    call = ToolCall("c5", "echo", f'{{"phrase": "hi", "repeats": {many}}}')
    yield BadCall(f"repeats of the wrong type {many}", call, ("repeats",))
    call = ToolCall("c6", "echo", f'{{"phrase": "hi", "repeats": {rng.randint(4, 99)}}}')
    yield BadCall("repeats out of range (1-3)", call, ("repeats",))
    field = rng.choice(["colour", "volume", "loud"])
    call = ToolCall("c7", "echo", f'{{"phrase": "hi", "{field}": 1}}')
    yield BadCall(f"unknown argument {field!r}", call, (field,))
    yield BadCall("a tool that raises ToolError", ToolCall("c8", "guard", "{}"), (probes.token,))
    name = probes.crash.__name__
    yield BadCall(f"a tool that raises {name}", ToolCall("c9", "crash", "{}"), (name,))
    yield BadCall("empty arguments (they mean {})", ToolCall("c10", "ping", ""))
    yield BadCall(f"a valid call echo({good})", ToolCall("c11", "echo", good))
    path = json.dumps({"path": "src/calc.js"})
    yield BadCall(f"a valid call read_file({path})", ToolCall("c12", "read_file", path))


# -- results to truncate (check 5) --------------------------------------------------------------


def _text(rng: random.Random, size: int) -> str:
    """`size` characters of numbered lines, some not ASCII: every cut point is recognisable."""
    words = ["rate", "total", "café", "naïve", "Σ", "→", "ok"]
    lines, total, n = [], 0, 0
    while total < size:
        line = f"{n:05d} {rng.choice(words)} {rng.randint(0, 9999)}\n"
        lines.append(line)
        total, n = total + len(line), n + 1
    return "".join(lines)[:size]


def _a(size: int) -> str:
    """ "a 20000-char result", "an 8001-char result": the article as the number is spoken."""
    digits = str(size)
    spoken_with_vowel = digits[0] == "8" or (len(digits) % 3 == 2 and digits[:2] in ("11", "18"))
    return f"{'an' if spoken_with_vowel else 'a'} {digits}-char result"


def results_to_truncate(rng: random.Random) -> list[tuple[str, ToolResult]]:
    """(label, result): the course's 20000 chars first, then ones that fit, then other sizes."""
    course = "".join(f"line {n:05d}\n" for n in range(1819))[: 20000 - 13] + "END OF RESULT"
    sizes = [8000, 11, 0, 8001, rng.randint(8002, 12000), rng.randint(30000, 90000)]
    cases = [(_a(len(course)), ToolResult(course, meta={"tool": "selftest"}))]
    for n, size in enumerate(sizes, 1):
        meta = {"tool": rng.choice(["grep", "glob", "read_file"]), "case": n}
        cases.append((_a(size), ToolResult(_text(rng, size), meta=meta)))
    failed = ToolResult(_text(rng, rng.randint(9000, 20000)), ok=False, meta={"tool": "grep"})
    cases.append((_a(len(failed.content)).replace("char", "char failed", 1), failed))
    return cases
