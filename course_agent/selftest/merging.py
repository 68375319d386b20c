"""Check 3: a student's accumulator merges generated fragment streams into the right calls.
The kernel drains each stream (answer_merging); the grader compares with the generated calls.

Streams start at index 0, 1 or 7, skip numbers, interleave, send ids and names once, in every
fragment or blanked, and cut arguments inside escapes and around spaces; a turn cut short is never
drained. Deliberately not handled: fragments without an index (the lab promises one).
"""

from __future__ import annotations

import itertools
import json
import random
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from course_agent.protocol import ToolCall, ToolCallDelta
from course_agent.selftest.judge import Part, caught, difference, first_of, plain, said, shown

__all__ = ["MERGING", "MergeCase", "merge_cases"]

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
    "missing": "a call that never gets an id, one that never gets a name",
}
# (indexes, how heads travel, arrival): every start (0, 1, 7), gaps, interleaving.
STREAMS = [
    ((0, 1), "once", "interleaved"),
    ((1, 2), "repeated", "heads out of order"),
    ((7, 9, 12), "blanked", "heads out of order"),
    ((0, 2, 3), "repeated", "interleaved"),
    ((1,), "whole", "in order"),
    ((1, 3, 4), "missing", "interleaved"),  # no id at index 3, the second: name it by its index
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
    """`text` in pieces, cut at random points, right after a backslash (inside an escape) and
    around its first space, so that one piece is a lone " " (a gateway may send one)."""
    if len(text) < 2:
        return [text] if text else []
    cuts = set(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 6))))
    cuts |= {i + 1 for i, char in enumerate(text[:-1]) if char == "\\"}
    if " " in text[1:-1]:
        cuts |= {text.index(" ", 1), text.index(" ", 1) + 1}
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _fragments(rng: random.Random, index: int, call: ToolCall, heads: str) -> list[ToolCallDelta]:
    pieces = [call.args] if heads == "whole" else _cut(rng, call.args)
    head_id = None if heads == "no id" else call.id
    head_name = call.name or None  # a call that never gets a name: drain gives it ""
    # The head carries no arguments, "", or the first piece, as gateways variously do.
    first = pieces.pop(0) if pieces and (heads == "whole" or rng.random() < 0.4) else None
    deltas = [ToolCallDelta(index, head_id, head_name, first or rng.choice([None, ""]))]
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
            # In the "missing" stream the second call never gets an id (drain names it
            # call_<index>) and the third never gets a name (drain gives it "").
            mode = {1: "no id", 2: "no name"}.get(n, "once") if heads == "missing" else heads
            call_id = f"call_{index}" if mode == "no id" else _call_id(rng)
            # Compact JSON, or spaced as many models write it: `{"path": "a", "limit": 4}`.
            spaced = (number + n) % 2 == 1
            separators = (", ", ": ") if spaced else (",", ":")
            text = "" if args is None else json.dumps(args, separators=separators)
            calls.append(ToolCall(call_id, "" if mode == "no name" else name, text))
            fragments.append(_fragments(rng, index, calls[-1], mode))
        listed = ", ".join(map(str, indexes))
        label = f"stream {number} (indexes {listed}; {HEADS[heads]}; {order})"
        cases.append(MergeCase(label, heads, tuple(_arrive(rng, fragments, order)), tuple(calls)))
    return cases


def _drain(accumulator: Callable[[], Any], deltas: list[ToolCallDelta]) -> dict[str, Any]:
    """In the kernel: the calls one fresh accumulator drains from `deltas`, as plain data."""
    where = "ToolCallAccumulator()"
    try:
        merger = accumulator()
        where = "push"
        for delta in deltas:
            merger.push(delta)
        where = "drain"
        calls = merger.drain()
        if not isinstance(calls, list | tuple):
            return {"bad": f"drain returned a {type(calls).__name__}: return a list of ToolCall"}
        if not all(hasattr(c, "id") and hasattr(c, "name") and hasattr(c, "args") for c in calls):
            return {
                "bad": f"drain returned {shown(calls)}: return a list of ToolCall(id, name, args)"
            }
        return {"calls": [[plain(c.id), plain(c.name), plain(c.args)] for c in calls]}
    except Exception as exc:
        return {**caught(exc), "where": where}


def _cut_short(accumulator: Callable[[], Any]) -> None:
    """A turn the gateway cut short: the course's first fragments pushed, and never drained."""
    try:
        merger = accumulator()
        for delta in COURSE_STREAM[:4]:
            merger.push(delta)
    except Exception:  # the course's stream, run just before, has already said what is wrong
        pass


def cases_merging(rng: random.Random) -> list[dict[str, Any]]:
    """The streams as data: "ask" holds the fragments (and, for the first, a turn cut short)."""
    return [
        {
            "ask": {
                "deltas": [[d.index, d.id, d.name, d.args_delta] for d in case.deltas],
                "cut_short": number == 0,
            },
            "label": case.label,
            "heads": case.heads,
            "want": [[call.id, call.name, call.args] for call in case.want],
        }
        for number, case in enumerate(merge_cases(rng))
    ]


def answer_merging(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: each stream through a fresh student accumulator, drained as plain lists."""
    accumulator, answers = functions["accumulator"], []
    for ask in asks:
        answers.append(_drain(accumulator, [ToolCallDelta(*delta) for delta in ask["deltas"]]))
        if ask["cut_short"]:  # whatever it left behind must not reach the streams after it
            _cut_short(accumulator)
    return answers


def _drained_problem(got: Mapping[str, Any]) -> str:
    where = got["where"]
    line = said(got, where)
    if "ValueError" in got["raised"] and "JSON" in got["raised"][0] + got["text"]:
        return f"{line}; parse nothing: a fragment is not JSON until its call is joined"
    if "IndexError" in got["raised"] or "KeyError" in got["raised"]:
        return f"{line}; the index is a label, not a position: key a dict by it"
    return line


def _count_problem(
    mine: list[tuple[Any, ...]], want: list[tuple[Any, ...]], indexes: list[int], seen: set[str]
) -> str:
    """Too many or too few calls drained: state left on the class, a call without arguments
    dropped, or the index taken for a position."""
    ids, want_ids = [c[0] for c in mine], [c[0] for c in want]
    stale = [i for i in ids if i in seen and i not in want_ids]
    if stale:
        return (
            f"a new ToolCallAccumulator() still held {shown(stale)} from an earlier stream: "
            "create its state in __init__, not on the class (drain is not always reached)"
        )
    lost = [call for call in want if call[0] not in ids]
    if len(mine) < len(want) and all(call[2] == "" for call in lost):
        return (
            f"you drained {len(mine)} calls {shown(ids)}, expected {len(want)}: "
            f"{lost[0][0]!r} came without arguments (''), and is a call all the same"
        )
    return (
        f"you drained {len(mine)} calls {shown(ids)}, expected {len(want)}, one per index "
        f"({', '.join(map(str, indexes))}): the starting point cannot be assumed; the index is a "
        "label, not a position"
    )


def _args_problem(want_id: str, args: Any, want_args: str, head: str) -> str:
    """One call's arguments wrong: the head's piece lost, spaces lost, overwritten, or else."""
    if head and args == want_args[len(head) :]:
        return (
            f"call {want_id!r} lost the arguments sent with the head ({shown(head)}): "
            "append the head's args_delta too"
        )
    if not isinstance(args, str):
        return f"call {want_id!r} has arguments {shown(args)}, expected {shown(want_args)}"
    if args.replace(" ", "") == want_args.replace(" ", ""):
        return (
            f"call {want_id!r} has arguments {shown(args)}, expected {shown(want_args)}: "
            "spaces were lost; append every args_delta as it is, even one of only spaces"
        )
    if args and want_args.endswith(args):
        return (
            f"call {want_id!r} has arguments {shown(args)}, only the end of "
            f"{shown(want_args)}: arguments accumulate, never overwrite (append args_delta)"
        )
    return f"call {want_id!r} has arguments {difference(args, want_args)}"


def _merge_problem(case: Mapping[str, Any], got: Mapping[str, Any], seen: set[str]) -> str:
    if "raised" in got:
        return _drained_problem(got)
    if "bad" in got:
        return str(got["bad"])
    mine = [tuple(call) for call in got["calls"]]
    want = [tuple(call) for call in case["want"]]
    if mine == want:
        return ""
    deltas = [ToolCallDelta(*delta) for delta in case["ask"]["deltas"]]
    ids, want_ids = [c[0] for c in mine], [c[0] for c in want]
    indexes = sorted({d.index for d in deltas})
    if len(mine) != len(want):
        return _count_problem(mine, want, indexes, seen)
    if ids != want_ids and sorted(map(repr, ids)) == sorted(map(repr, want_ids)):
        return (
            f"drain in index order, not arrival order: you drained {shown(ids)}, expected index "
            f"order {shown(want_ids)}"
        )
    for index, (got_id, name, args), (want_id, want_name, want_args) in zip(
        indexes, mine, want, strict=True
    ):
        for what, value, right in [("id", got_id, want_id), ("name", name, want_name)]:
            if value != right:
                return _explain_head(case["heads"], index, what, value, right)
        if args != want_args:
            head = next(d.args_delta or "" for d in deltas if d.index == index)
            return _args_problem(want_id, args, want_args, head)
    return ""  # unreachable: the lists differ, so some field does


def _explain_head(heads: str, index: int, what: str, value: object, right: str) -> str:
    if isinstance(value, str) and right and value == right * (len(value) // len(right)):
        return (
            f"repeated {what} {right!r} in every fragment: you built {shown(value)}; "
            f"write the {what}, don't append it"
        )
    if heads == "blanked" and value in ("", None, f"call_{index}"):
        return (
            f"an empty {what} in a later fragment wiped {right!r}: "
            f"write the {what} only when it is non-empty"
        )
    if what == "id" and right == f"call_{index}":
        return (
            f"the call at index {index} never got an id: expected {right!r}, got {shown(value)}; "
            "name it after its index, not its position"
        )
    if what == "name" and right == "":
        return f"the call at index {index} never got a name: expected '', got {shown(value)}"
    return f"the call at index {index} has {what} {shown(value)}, expected {right!r}"


def judge_merging(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: each drained list against the stream's calls; the first wrong one, why."""
    failures, seen = [], set()
    for case, got in zip(cases, answers, strict=True):
        if problem := _merge_problem(case, got, seen):
            failures.append(f"{case['label']}: {problem}")
        seen |= {call[0] for call in case["want"]}
    first_of(failures, len(cases), "streams")
    return (
        f"{len(cases)} streams merge in index order: indexes from 0, 1, 7 with gaps, interleaved; "
        "ids once, repeated, blanked"
    )


MERGING = Part("fragment merging", ("accumulator",), cases_merging, answer_merging, judge_merging)
