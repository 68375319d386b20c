"""Extension checks 6-7: whether a turn is a tool turn, and a repaired transcript.

Check 6 asks about recorded finishes and every pairing of finish reason and call count. Check 7
breaks generated transcripts and wants them back valid, changed no more than needed.
Deliberately not handled: exercise 4's sentence (what merging must not assume), which a person
reads: no keyword can tell a true sentence from a false one with the same words.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from course_agent.loop import check_transcript
from course_agent.offline.recorded_turns import recorded_turns
from course_agent.protocol import ToolCall
from course_agent.selftest.judge import first_of, raised, shown

__all__ = [
    "FINISHES",
    "check_repair",
    "check_tool_turn",
    "repair_cases",
    "repaired",
]

FINISHES = ["tool_calls", "stop", "length", "content_filter", None]
NOT_RUN = "not run: this call got no result"


def _tool_turn_cases(rng: random.Random) -> list[tuple[str, str | None, list[ToolCall]]]:
    cases = [(turn.label, turn.finish, turn.calls) for turn in recorded_turns()]
    for finish in FINISHES:
        for count in (0, 1, 2):
            calls = [ToolCall(f"call_{n}", "glob", '{"pattern": "*"}') for n in range(count)]
            cases.append((f"finish {finish!r} with {count} calls merged", finish, calls))
    return rng.sample(cases, len(cases))


def _turn_hint(finish: str | None, calls: list[ToolCall], said: bool) -> str:
    if calls and not said:
        return "a merged call makes it a tool turn, whatever the finish reason says"
    if finish == "tool_calls" and not said:
        return "the finish reason says tool_calls: the course counts that as a tool turn too"
    return "no call merged and no tool_calls finish: the model has answered"


def check_tool_turn(is_tool_turn: Callable[..., Any], rng: random.Random) -> str:
    cases, failures = _tool_turn_cases(rng), []
    for label, finish, calls in cases:
        want = finish == "tool_calls" or bool(calls)
        try:
            got = is_tool_turn(finish, list(calls))
        except Exception as exc:
            failures.append(f"{label}: {raised(exc, 'is_tool_turn')}")
            continue
        if not isinstance(got, bool):
            failures.append(f"{label}: is_tool_turn returned {shown(got)}; return True or False")
        elif got is not want:
            said = "a tool turn" if got else "not a tool turn"
            failures.append(f"{label}: you said {said}; {_turn_hint(finish, calls, bool(got))}")
    first_of(failures, len(cases), "turns")
    recorded = len(recorded_turns())
    return f"{len(cases)} turns judged, {recorded} of them recorded, including 'stop' with a call"


# -- check 7: repair a transcript ----------------------------------------------------------------


def repaired(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lab's rule: drop a tool message that answers no call pending at that point (an
    orphan, a second answer); give each call left without one a failed result, right after its
    turn's results, in call order. Everything else stays as it was."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            if message.get("tool_call_id") in pending:
                pending.remove(message["tool_call_id"])
                out.append(message)
            continue
        out += [{"role": "tool", "tool_call_id": id_, "content": NOT_RUN} for id_ in pending]
        out.append(message)
        pending = [call["id"] for call in message.get("tool_calls") or []]
        if message["role"] != "assistant":
            pending = []
    return out + [{"role": "tool", "tool_call_id": id_, "content": NOT_RUN} for id_ in pending]


def _turns(rng: random.Random, label: str) -> list[dict[str, Any]]:
    """A valid transcript: a question, two or three tool turns (one to three calls), an answer."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"question for {label}"},
    ]
    for turn in range(rng.randint(2, 3)):
        ids = [f"call_{turn}_{n}_{rng.randrange(100)}" for n in range(rng.randint(1, 3))]
        calls = [
            {"id": id_, "type": "function", "function": {"name": "glob", "arguments": "{}"}}
            for id_ in ids
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [
            {"role": "tool", "tool_call_id": id_, "content": f"result {id_}"} for id_ in ids
        ]
    messages.append({"role": "assistant", "content": "The answer."})
    return messages


def _tool_positions(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, message in enumerate(messages) if message["role"] == "tool"]


def _break(rng: random.Random, kind: str, messages: list[dict[str, Any]]) -> None:
    """Break `messages` in place the way `kind` says."""
    tools = _tool_positions(messages)
    if kind == "a result missing mid-transcript":
        del messages[tools[0]]
    elif kind == "a result missing at the end":
        del messages[-1]  # the answer goes; then the last result
        del messages[-1]
    elif kind == "a whole turn's results missing":
        first_turn = next(i for i in tools if messages[i - 1]["role"] != "tool")
        while messages[first_turn]["role"] == "tool":
            del messages[first_turn]
    elif kind == "an orphan result":
        orphan = {"role": "tool", "tool_call_id": "call_never_made", "content": "stray"}
        messages.insert(rng.choice(tools) + 1, orphan)
    elif kind == "a result given twice":
        where = rng.choice(tools)
        messages.insert(where + 1, dict(messages[where]))
    elif kind == "a turn's results in another order":  # valid: must come back unchanged
        ends = [i for i in tools if i + 1 == len(messages) or messages[i + 1]["role"] != "tool"]
        first = max(i for i in tools if i <= ends[0] and messages[i - 1]["role"] != "tool")
        messages[first : ends[0] + 1] = reversed(messages[first : ends[0] + 1])


KINDS = [
    "a valid transcript",
    "a result missing mid-transcript",
    "a result missing at the end",
    "a whole turn's results missing",
    "an orphan result",
    "a result given twice",
    "a turn's results in another order",
]


def repair_cases(rng: random.Random) -> list[tuple[str, list[dict[str, Any]]]]:
    """(what is wrong, the transcript) for each kind, and two kinds at once, in a drawn order."""
    cases = []
    for kind in [*KINDS, "two at once"]:
        messages = _turns(rng, kind)
        kinds = rng.sample(KINDS[1:], 2) if kind == "two at once" else [kind]
        for each in kinds:
            _break(rng, each, messages)
        cases.append((" and ".join(kinds), messages))
    return rng.sample(cases, len(cases))


def _normalised(messages: Any, original: list[dict[str, Any]]) -> Any:
    """`messages` with the content of each tool message not in `original` (one the repair
    added) replaced by a mark when it is text: any wording is fine."""
    if not isinstance(messages, list):
        return messages
    out = []
    for message in messages:
        added = (
            isinstance(message, dict)
            and message.get("role") == "tool"
            and message not in original
            and set(message) == {"role", "tool_call_id", "content"}
        )
        if added and isinstance(message["content"], str) and message["content"].strip():
            message = {**message, "content": "(your text)"}
        out.append(message)
    return out


def _repair_problem(repair: Callable[..., Any], kind: str, messages: list[dict[str, Any]]) -> str:
    given = copy.deepcopy(messages)
    try:
        got = repair(given)
    except Exception as exc:
        return raised(exc, "repair_transcript")
    if given != messages:
        return "you changed the list passed in: build a new one"
    if not isinstance(got, list) or not all(isinstance(m, dict) for m in got):
        return f"returned {shown(got)}: return a list of message dicts"
    if problem := check_transcript(got):
        return f"check_transcript still says: {problem}"
    want = _normalised(repaired(messages), messages)
    mine = _normalised(got, messages)
    if mine == want:
        return ""
    if len(mine) != len(want):
        return f"{len(mine)} messages, expected {len(want)}: change no more than the repair needs"
    index = next(i for i, (a, b) in enumerate(zip(mine, want, strict=True)) if a != b)
    return f"message {index} is {shown(mine[index], 70)}, expected {shown(want[index], 70)}"


def check_repair(repair: Callable[..., Any], rng: random.Random) -> str:
    cases, failures = repair_cases(rng), []
    for kind, messages in cases:
        if problem := _repair_problem(repair, kind, messages):
            failures.append(f"{kind}: {problem}")
    first_of(failures, len(cases), "transcripts")
    return (
        f"{len(cases)} transcripts repaired as check_transcript wants them: results added, "
        "orphans and repeats dropped, the rest unchanged"
    )
