"""Extension checks 6-7: whether a turn is a tool turn, and a repaired transcript.

Check 6 asks about recorded finishes and every pairing of finish reason and call count. Check 7
breaks generated transcripts and wants them back valid, changed no more than needed.
Deliberately not handled: exercise 4's sentence (what merging must not assume), which a person
reads: no keyword can tell a true sentence from a false one with the same words.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from course_agent.loop import check_transcript
from course_agent.offline.recorded_turns import recorded_turns
from course_agent.protocol import ToolCall
from course_agent.selftest.judge import (
    Part,
    caught,
    first_of,
    plain,
    said,
    shown,
)

__all__ = [
    "FINISHES",
    "REPAIR",
    "TOOL_TURN",
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


def cases_tool_turn(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {
            "ask": {"finish": finish, "calls": [[c.id, c.name, c.args] for c in calls]},
            "label": label,
            "want": finish == "tool_calls" or bool(calls),
        }
        for label, finish, calls in _tool_turn_cases(rng)
    ]


def answer_tool_turn(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    answers = []
    for ask in asks:
        try:
            got = functions["is_tool_turn"](ask["finish"], [ToolCall(*c) for c in ask["calls"]])
            answers.append({"said": got} if isinstance(got, bool) else {"bad": shown(got)})
        except Exception as exc:
            answers.append(caught(exc))
    return answers


def judge_tool_turn(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    failures = []
    for case, got in zip(cases, answers, strict=True):
        label, finish, calls = case["label"], case["ask"]["finish"], case["ask"]["calls"]
        if "raised" in got:
            failures.append(f"{label}: {said(got, 'is_tool_turn')}")
        elif "bad" in got:
            failures.append(f"{label}: is_tool_turn returned {got['bad']}; return True or False")
        elif got["said"] is not case["want"]:
            yes = got["said"] is True
            what = "a tool turn" if yes else "not a tool turn"
            failures.append(f"{label}: you said {what}; {_turn_hint(finish, calls, yes)}")
    first_of(failures, len(cases), "turns")
    recorded = len(recorded_turns())
    return f"{len(cases)} turns judged, {recorded} of them recorded, including 'stop' with a call"


# -- check 8: repair a transcript ----------------------------------------------------------------


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


def cases_repair(rng: random.Random) -> list[dict[str, Any]]:
    return [{"ask": messages, "kind": kind} for kind, messages in repair_cases(rng)]


def answer_repair(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    answers = []
    for messages in asks:
        given = copy.deepcopy(messages)
        try:
            got = functions["repair_transcript"](given)
        except Exception as exc:
            answers.append(caught(exc))
            continue
        if not isinstance(got, list) or not all(isinstance(m, dict) for m in got):
            answers.append({"bad": shown(got), "changed": given != messages})
        else:
            answers.append({"messages": plain(got), "changed": given != messages})
    return answers


def _repair_problem(messages: list[dict[str, Any]], got: Mapping[str, Any]) -> str:
    if "raised" in got:
        return said(got, "repair_transcript")
    if got["changed"]:
        return "you changed the list passed in: build a new one"
    if "bad" in got:
        return f"returned {got['bad']}: return a list of message dicts"
    mine = got["messages"]
    if problem := check_transcript(mine):
        return f"check_transcript still says: {problem}"
    want = _normalised(repaired(messages), messages)
    mine = _normalised(mine, messages)
    if mine == want:
        return ""
    if len(mine) != len(want):
        return f"{len(mine)} messages, expected {len(want)}: change no more than the repair needs"
    index = next(i for i, (a, b) in enumerate(zip(mine, want, strict=True)) if a != b)
    return f"message {index} is {shown(mine[index], 70)}, expected {shown(want[index], 70)}"


def judge_repair(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    failures = []
    for case, got in zip(cases, answers, strict=True):
        if problem := _repair_problem(case["ask"], got):
            failures.append(f"{case['kind']}: {problem}")
    first_of(failures, len(cases), "transcripts")
    return (
        f"{len(cases)} transcripts repaired as check_transcript wants them: results added, "
        "orphans and repeats dropped, the rest unchanged"
    )


def _one_case(rng: random.Random) -> list[dict[str, Any]]:
    return [{"ask": {}}]


TOOL_TURN = Part("tool turn", ("is_tool_turn",), cases_tool_turn, answer_tool_turn, judge_tool_turn)
REPAIR = Part(
    "transcript repair", ("repair_transcript",), cases_repair, answer_repair, judge_repair
)
