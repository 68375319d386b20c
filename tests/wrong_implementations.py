"""Wrong answers to the lab's three exercises, each as the source of a student's exercise cell.

`WRONG` maps a name to (exercise number, source). Each source defines `ToolCallAccumulator`
(exercise 1), `execute_call` (2) or `truncate_result` (3) in the lab's namespace: what the lab's
setup cell imports (json, Mapping, replace, ValidationError, HEAD_RATIO, MAX_RESULT_CHARS, ToolCall,
ToolCallDelta, ToolContext, ToolDef, ToolError, ToolResult, default_registry, describe_parameters)
is there; anything else a source imports itself. Every entry must fail its self-test check
(tests/test_selftest.py); the grading tests paste them into notebooks as they are.

`CHEATS` holds sources that hand the package's own answer in, plainly or hidden; each must fail
when answered where the grader asks (tests/stripped_answers.py: the package without its answers).
`ALTERNATIVES` holds right answers written other ways (another slot shape, a
join in drain, a copy of a result that fits): each must pass all seven, so that no check asks for
one way of writing it. `BEYOND_THE_LAB` holds answers that are wrong for the package but right
for the lab as written: the self-test cannot fail them without failing the lab's own solution
(see the note above it).
"""

from __future__ import annotations

__all__ = ["ALTERNATIVES", "BEYOND_THE_LAB", "CHEATS", "RIGHT", "WRONG"]

# Right answers, written the way a student would: each wrong answer below is one of them with one
# mistake edited in, so a wrong answer differs from a right one only where its name says.
RIGHT: dict[int, str] = {
    1: """
class ToolCallAccumulator:
    def __init__(self) -> None:
        self.by_index: dict[int, dict[str, str]] = {}

    def push(self, delta: ToolCallDelta) -> None:
        slot = self.by_index.setdefault(delta.index, {"args": ""})
        if delta.id:
            slot["id"] = delta.id
        if delta.name:
            slot["name"] = delta.name
        if delta.args_delta:
            slot["args"] += delta.args_delta

    def drain(self) -> list[ToolCall]:
        return [
            ToolCall(slot.get("id") or f"call_{index}", slot.get("name", ""), slot["args"])
            for index, slot in sorted(self.by_index.items())
        ]
""",
    2: """
from collections.abc import Mapping


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(
            f"there is no tool named {call.name}. Available: {', '.join(tools)}", ok=False
        )
    raw = call.args.strip() or "{}"
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolResult(f"arguments for {call.name} are not valid JSON ({exc})", ok=False)
    if not isinstance(parsed, dict):
        return ToolResult(f"arguments for {call.name} must be a JSON object", ok=False)
    try:
        args = tool.args.model_validate(parsed)
    except ValidationError as exc:
        return ToolResult(f"invalid arguments for {call.name}: {exc}", ok=False)
    try:
        return tool.run(args, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), ok=False)
    except Exception as exc:
        return ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", ok=False)
""",
    3: """
NOTE = "\\n[...{removed} of {total} chars cut; use offset for middle]\\n"


def truncate_result(result: ToolResult) -> ToolResult:
    text = result.content
    if len(text) <= MAX_RESULT_CHARS:
        return result
    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    note = NOTE.format(removed=len(text) - MAX_RESULT_CHARS, total=len(text))
    return replace(
        result,
        content=text[:head] + note + text[-(MAX_RESULT_CHARS - head) :],
        meta={**result.meta, "truncated": True, "originalChars": len(text)},
    )
""",
}


def _edit(exercise: int, *edits: tuple[str, str]) -> tuple[int, str]:
    """The right answer with each (old, new) replaced; an `old` that is not there is a bug here,
    not a wrong answer, so it raises instead of quietly leaving the right answer in place."""
    source = RIGHT[exercise]
    for old, new in edits:
        if old not in source:
            raise ValueError(f"exercise {exercise}: {old!r} is not in the right answer")
        source = source.replace(old, new)
    return exercise, source


_HEAD = "text[:head]"
_TAIL = "text[-(MAX_RESULT_CHARS - head) :]"

WRONG: dict[str, tuple[int, str]] = {
    # -- exercise 1: the accumulator ------------------------------------------------------------
    "accumulator appends a repeated id": _edit(
        1, ('slot["id"] = delta.id', 'slot["id"] = slot.get("id", "") + delta.id')
    ),
    "accumulator appends a repeated name": _edit(
        1, ('slot["name"] = delta.name', 'slot["name"] = slot.get("name", "") + delta.name')
    ),
    "accumulator stores calls in a list by index": (
        1,
        """
class ToolCallAccumulator:
    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []

    def push(self, delta: ToolCallDelta) -> None:
        if delta.index == len(self.calls):
            self.calls.append({"id": "", "name": "", "args": ""})
        call = self.calls[delta.index]
        if delta.id:
            call["id"] = delta.id
        if delta.name:
            call["name"] = delta.name
        call["args"] += delta.args_delta or ""

    def drain(self) -> list[ToolCall]:
        return [
            ToolCall(c["id"] or f"call_{n}", c["name"], c["args"]) for n, c in enumerate(self.calls)
        ]
""",
    ),
    "accumulator drains in arrival order": _edit(
        1, ("sorted(self.by_index.items())", "self.by_index.items()")
    ),
    "accumulator assumes the index starts at 0": _edit(
        1,
        (
            "for index, slot in sorted(self.by_index.items())",
            "for index, slot in ((n, self.by_index[n]) for n in range(len(self.by_index)))",
        ),
    ),
    "accumulator assumes the index starts at 1": (
        1,
        """
class ToolCallAccumulator:
    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []

    def push(self, delta: ToolCallDelta) -> None:
        position = delta.index - 1  # the first call is index 1
        while len(self.calls) <= position:
            self.calls.append({"id": "", "name": "", "args": ""})
        call = self.calls[position]
        if delta.id:
            call["id"] = delta.id
        if delta.name:
            call["name"] = delta.name
        call["args"] += delta.args_delta or ""

    def drain(self) -> list[ToolCall]:
        return [
            ToolCall(c["id"] or f"call_{n + 1}", c["name"], c["args"])
            for n, c in enumerate(self.calls)
        ]
""",
    ),
    "accumulator overwrites the arguments": _edit(
        1, ('slot["args"] += delta.args_delta', 'slot["args"] = delta.args_delta')
    ),
    "accumulator lets an empty id or name wipe the head's": _edit(
        1,
        ("if delta.id:", "if delta.id is not None:"),
        ("if delta.name:", "if delta.name is not None:"),
    ),
    "accumulator sorts the indexes as text": _edit(
        1,
        (
            "sorted(self.by_index.items())",
            "sorted(self.by_index.items(), key=lambda item: str(item[0]))",
        ),
    ),
    "accumulator shares one dict between all its instances": _edit(
        1,
        (
            "    def __init__(self) -> None:\n"
            "        self.by_index: dict[int, dict[str, str]] = {}",
            "    by_index: dict[int, dict[str, str]] = {}  # on the class: shared by all",
        ),
    ),
    "accumulator drops the arguments that come with the head": _edit(
        1,
        (
            """\
        slot = self.by_index.setdefault(delta.index, {"args": ""})
        if delta.id:
            slot["id"] = delta.id
        if delta.name:
            slot["name"] = delta.name
        if delta.args_delta:
            slot["args"] += delta.args_delta""",
            """\
        if delta.id:  # the head: a new call starts here
            self.by_index[delta.index] = {"id": delta.id, "name": delta.name or "", "args": ""}
        elif delta.args_delta:
            self.by_index[delta.index]["args"] += delta.args_delta""",
        ),
    ),
    "accumulator names a call without id after its position": _edit(
        1,
        (
            "for index, slot in sorted(self.by_index.items())",
            "for index, (_, slot) in enumerate(sorted(self.by_index.items()))",
        ),
    ),
    "accumulator leaves a call without a name as None": _edit(
        1, ('slot.get("name", "")', 'slot.get("name")')
    ),
    "accumulator skips fragments of only spaces": _edit(
        1, ("if delta.args_delta:", "if delta.args_delta and delta.args_delta.strip():")
    ),
    "accumulator strips every fragment": _edit(
        1, ('slot["args"] += delta.args_delta', 'slot["args"] += delta.args_delta.strip()')
    ),
    "accumulator drops calls that have no arguments": _edit(
        1,
        (
            "for index, slot in sorted(self.by_index.items())\n",
            'for index, slot in sorted(self.by_index.items())\n            if slot["args"]\n',
        ),
    ),
    "accumulator shares one dict and empties it in drain": _edit(
        1,
        (
            "    def __init__(self) -> None:\n"
            "        self.by_index: dict[int, dict[str, str]] = {}",
            "    by_index: dict[int, dict[str, str]] = {}  # on the class: shared by all",
        ),
        ("        return [\n", "        calls = [\n"),
        (
            "        ]\n",
            "        ]\n"
            "        self.by_index.clear()  # ready for the next turn\n"
            "        return calls\n",
        ),
    ),
    "accumulator drains a generator": _edit(
        1,
        ("        return [\n            ToolCall(", "        yield from (\n            ToolCall("),
        ("sorted(self.by_index.items())\n        ]", "sorted(self.by_index.items())\n        )"),
    ),
    "accumulator parses every fragment as JSON": _edit(
        1,
        (
            'slot["args"] += delta.args_delta',
            'slot["args"] += json.dumps(json.loads(delta.args_delta))',
        ),
    ),
    # -- exercise 2: the executor ---------------------------------------------------------------
    "executor skips schema validation": _edit(
        2,
        ("    if not isinstance(parsed, dict):\n", "    if False:\n"),
        ("args = tool.args.model_validate(parsed)", "args = parsed  # never checked"),
    ),
    "executor validates, then runs the tool on the raw dict": _edit(
        2, ("return tool.run(args, ctx)", "return tool.run(parsed, ctx)")
    ),
    "executor lets a ToolError out": _edit(
        2,
        ("    except ToolError as exc:\n        return ToolResult(str(exc), ok=False)\n", ""),
        ("except Exception as exc:", "except (ValueError, TypeError, KeyError) as exc:"),
    ),
    "executor lets any other exception out": _edit(
        2,
        (
            '    except Exception as exc:\n        return ToolResult(f"{call.name} failed: '
            '{type(exc).__name__}: {exc}", ok=False)\n',
            "",
        ),
    ),
    "executor catches only JSON errors": _edit(
        2,
        (
            "    try:\n        args = tool.args.model_validate(parsed)\n"
            "    except ValidationError as exc:\n"
            '        return ToolResult(f"invalid arguments for {call.name}: {exc}", ok=False)\n',
            "    args = tool.args.model_validate(parsed)\n",
        ),
    ),
    "executor builds the arguments without validating them": _edit(
        2, ("tool.args.model_validate(parsed)", "tool.args.model_construct(**parsed)")
    ),
    "executor runs the tool twice": _edit(
        2,
        (
            "        return tool.run(args, ctx)\n",
            "        tool.run(args, ctx)  # try it first\n        return tool.run(args, ctx)\n",
        ),
    ),
    "executor returns a ToolError as a good result": _edit(
        2, ("return ToolResult(str(exc), ok=False)", "return ToolResult(str(exc))")
    ),
    "executor says only 'Operation failed'": (
        2,
        """
from collections.abc import Mapping


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    try:
        tool = tools[call.name]
        args = tool.args.model_validate(json.loads(call.args.strip() or "{}"))
        return tool.run(args, ctx)
    except Exception:
        return ToolResult("Operation failed", ok=False)
""",
    ),
    "executor's unknown-tool text names no tools": _edit(
        2, (". Available: {', '.join(tools)}", "")
    ),
    "executor names the day's three tools, not the ones it was given": _edit(
        2, ("Available: {', '.join(tools)}", "Available: glob, grep, read_file")
    ),
    "executor treats empty arguments as invalid JSON": _edit(
        2, ('raw = call.args.strip() or "{}"', "raw = call.args.strip()")
    ),
    "executor's JSON error does not say where it broke": _edit(
        2, ("are not valid JSON ({exc})", "are not valid JSON; send one JSON object")
    ),
    "executor unpacks the arguments with **": _edit(
        2,
        ("    if not isinstance(parsed, dict):\n", "    if False:\n"),
        ("tool.args.model_validate(parsed)", "tool.args(**parsed)"),
    ),
    "executor looks tools up in default_registry(), not in its tools": _edit(
        2, ("tool = tools.get(call.name)", "tool = default_registry().tools.get(call.name)")
    ),
    "executor delegates to default_registry().execute": (
        2,
        """
from collections.abc import Mapping

from course_agent import default_registry


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    return default_registry().execute(call, ctx)
""",
    ),
    # -- exercise 3: truncation -----------------------------------------------------------------
    "truncation hard-codes '12000 of 20000'": _edit(
        3,
        (
            "NOTE.format(removed=len(text) - MAX_RESULT_CHARS, total=len(text))",
            '"\\n[...12000 of 20000 chars cut; use offset for middle]\\n"',
        ),
    ),
    "truncation flags results that fit with truncated=False": _edit(
        3,
        (
            "        return result\n",
            '        return replace(result, meta={**result.meta, "truncated": False})\n',
        ),
    ),
    "truncation cuts a result of exactly 8000 chars": _edit(
        3, ("len(text) <= MAX_RESULT_CHARS", "len(text) < MAX_RESULT_CHARS")
    ),
    "truncation keeps only the head": _edit(
        3, (f"{_HEAD} + note + {_TAIL}", "text[:MAX_RESULT_CHARS] + note")
    ),
    "truncation drops the meta already there": _edit(
        3, ('{**result.meta, "truncated"', '{"truncated"')
    ),
    "truncation keeps one char too many of the head": _edit(3, (_HEAD, "text[: head + 1]")),
    "truncation keeps one char too few of the tail": _edit(
        3, (_TAIL, "text[len(text) - (MAX_RESULT_CHARS - head) + 1 :]")
    ),
    "truncation keeps 8000 chars including the note": _edit(3, (_HEAD, "text[: head - len(note)]")),
    "truncation swaps the head and tail shares": _edit(
        3, (_HEAD, "text[: MAX_RESULT_CHARS - head]"), (_TAIL, "text[-head:]")
    ),
    "truncation turns a failed result into a good one": _edit(
        3, ("replace(\n        result,\n        content=", "ToolResult(\n        ")
    ),
    "truncation writes into the meta of the result it was given": _edit(
        3,
        (
            "    return replace(",
            '    result.meta["truncated"] = True  # type: ignore[index]\n'
            '    result.meta["originalChars"] = len(text)  # type: ignore[index]\n'
            "    return replace(",
        ),
        ('meta={**result.meta, "truncated": True, "originalChars": len(text)}', "meta=result.meta"),
    ),
    "truncation measures the text without its trailing newline": _edit(
        3, ("    text = result.content\n", "    text = result.content.rstrip()\n")
    ),
    "truncation leaves failed results uncut": _edit(
        3,
        ("if len(text) <= MAX_RESULT_CHARS:", "if len(text) <= MAX_RESULT_CHARS or not result.ok:"),
    ),
    "truncation rounds the number of chars cut": _edit(
        3,
        (
            "removed=len(text) - MAX_RESULT_CHARS",
            "removed=round(len(text) - MAX_RESULT_CHARS, -3)",
        ),
    ),
}

# Wrong for the package, right for the lab as written. The package's accumulator files a fragment
# without index by its id (a new id opens a call after the others; no id continues the call being
# written), so two calls from a gateway that sends no index (Mistral) stay two calls. This one
# files both under 0 and merges them. But the lab's exercise 1 says "every fragment in this lab
# carries an index", and its solution (keyed by `delta.index`, so by None) merges them too: the
# self-test cannot ask for it until exercise 1 does.
BEYOND_THE_LAB: dict[str, tuple[int, str]] = {
    "accumulator files a fragment without index under index 0": _edit(
        1,
        (
            "self.by_index.setdefault(delta.index,",
            "self.by_index.setdefault(0 if delta.index is None else delta.index,",
        ),
    ),
}

# The package's own answer handed in under cover. Each must fail its check all the same; the ones
# that leave a profiler on are cleaned up after by the test that runs them.
CHEATS: dict[str, tuple[int, str]] = {
    "executor delegates to the package's execute_call": (
        2,
        """
from collections.abc import Mapping

from course_agent.registry import execute_call as package_execute_call


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    return package_execute_call(tools, call, ctx)
""",
    ),
    "accumulator turns the profiler off, then runs the package's": (
        1,
        """
import sys

from course_agent import ToolCallAccumulator as _Package


class ToolCallAccumulator:
    def __init__(self) -> None:
        sys.setprofile(None)  # whatever was watching stops here
        self.merger = _Package()

    def push(self, delta: ToolCallDelta) -> None:
        sys.setprofile(None)
        self.merger.push(delta)

    def drain(self) -> list[ToolCall]:
        sys.setprofile(None)
        return self.merger.drain()
""",
    ),
    "executor turns the profiler off, then runs the package's": (
        2,
        """
import sys

from course_agent.registry import execute_call as _package


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    sys.setprofile(None)
    return _package(tools, call, ctx)
""",
    ),
    "truncation turns the profiler off around the package's, and back on": (
        3,
        """
import sys

from course_agent import truncate_result as _package


def truncate_result(result: ToolResult) -> ToolResult:
    hook = sys.getprofile()
    sys.setprofile(None)
    try:
        return _package(result)
    finally:
        sys.setprofile(hook)  # the watch finds itself in place afterwards
""",
    ),
    "truncation installs a profiler of its own, then runs the package's": (
        3,
        """
import sys

from course_agent import truncate_result as _package

sys.setprofile(lambda frame, event, arg: None)  # the watch stood aside for any profiler


def truncate_result(result: ToolResult) -> ToolResult:
    return _package(result)
""",
    ),
    "truncation starts cProfile, then runs the package's": (
        3,
        """
import cProfile

from course_agent import truncate_result as _package

cProfile.Profile().enable()  # a profiler the watch cannot set aside and put back


def truncate_result(result: ToolResult) -> ToolResult:
    return _package(result)
""",
    ),
    "accumulator yields the package's calls from a generator": (
        1,
        """
from course_agent import ToolCallAccumulator as _Package


class ToolCallAccumulator:
    def __init__(self) -> None:
        self.deltas: list[ToolCallDelta] = []

    def push(self, delta: ToolCallDelta) -> None:
        self.deltas.append(delta)

    def drain(self):  # runs only when the caller iterates it, after the watch has ended
        merger = _Package()
        for delta in self.deltas:
            merger.push(delta)
        yield from merger.drain()
""",
    ),
    "executor runs a copy of the package's module": (
        2,
        """
import inspect

import course_agent.registry as _module

_copy = {"__name__": "course_agent.copy", "__package__": "course_agent"}
exec(compile(inspect.getsource(_module), _module.__file__, "exec"), _copy)
execute_call = _copy["execute_call"]
""",
    ),
    "executor answers with a str that contains every word": (
        2,
        """
class Says(str):
    def __contains__(self, word: object) -> bool:
        return True  # so every `word in text` holds


def execute_call(tools: Mapping[str, ToolDef], call: ToolCall, ctx: ToolContext) -> ToolResult:
    try:
        tool = tools[call.name]
        return tool.run(tool.args.model_validate(json.loads(call.args.strip() or "{}")), ctx)
    except Exception:
        return ToolResult(Says("Operation failed"), ok=False)
""",
    ),
    "truncation answers with a result equal to anything": _edit(
        3,
        ("    return replace(\n        result,\n", "    return Equal(\n"),
        ('meta={**result.meta, "truncated": True, "originalChars": len(text)}', "ok=result.ok"),
        (
            "def truncate_result",
            "class Equal(ToolResult):\n"
            "    def __eq__(self, other: object) -> bool:\n"
            "        return True  # so the meta it dropped is never compared\n\n"
            "    __hash__ = None  # type: ignore[assignment]\n\n\n"
            "def truncate_result",
        ),
    ),
    "accumulator drains ids equal to anything": _edit(
        1,
        ('slot["id"] = delta.id', 'slot["id"] = slot.get("id", "") + delta.id'),
        ('slot.get("id") or f"call_{index}"', 'Same(slot.get("id") or f"call_{index}")'),
        (
            "class ToolCallAccumulator:",
            "class Same(str):\n"
            "    def __eq__(self, other: object) -> bool:\n"
            "        return True  # so a doubled id compares equal to the right one\n\n"
            "    __hash__ = str.__hash__\n\n\n"
            "class ToolCallAccumulator:",
        ),
    ),
}

# Right answers in other shapes than RIGHT's: each must pass all seven checks.
ALTERNATIVES: dict[str, tuple[int, str]] = {
    "accumulator of lists in an OrderedDict, joined once in drain": (
        1,
        """
from collections import OrderedDict


class ToolCallAccumulator:
    def __init__(self) -> None:
        # index -> (ids, names, argument pieces) as they arrived
        self.calls: OrderedDict[int, tuple[list[str], list[str], list[str]]] = OrderedDict()

    def push(self, delta: ToolCallDelta) -> None:
        ids, names, pieces = self.calls.setdefault(delta.index, ([], [], []))
        if delta.id:
            ids.append(delta.id)
        if delta.name:
            names.append(delta.name)
        pieces.append(delta.args_delta or "")

    def drain(self) -> list[ToolCall]:
        return [
            ToolCall(ids[-1] if ids else f"call_{n}", names[-1] if names else "", "".join(pieces))
            for n, (ids, names, pieces) in sorted(self.calls.items())
        ]
""",
    ),
    "accumulator that keeps the head's id and name and empties itself in drain": (
        1,
        """
class ToolCallAccumulator:
    def __init__(self) -> None:
        self.heads: dict[int, list[str | None]] = {}
        self.args: dict[int, str] = {}

    def push(self, delta: ToolCallDelta) -> None:
        head = self.heads.setdefault(delta.index, [None, None])
        head[0] = head[0] or delta.id or None
        head[1] = head[1] or delta.name or None
        self.args[delta.index] = self.args.get(delta.index, "") + (delta.args_delta or "")

    def drain(self) -> list[ToolCall]:
        calls = [
            ToolCall(call_id or f"call_{index}", name or "", self.args.get(index, ""))
            for index, (call_id, name) in sorted(self.heads.items())
        ]
        self.heads, self.args = {}, {}
        return calls
""",
    ),
    "executor that leaves a non-object to pydantic and validates strictly": _edit(
        2,
        ("    if not isinstance(parsed, dict):\n", "    if False:  # pydantic says it\n"),
        ("tool.args.model_validate(parsed)", "tool.args.model_validate(parsed, strict=True)"),
    ),
    "executor that names a ToolError's class too": _edit(
        2, ("    except ToolError as exc:\n        return ToolResult(str(exc), ok=False)\n", "")
    ),
    "truncation that copies a result that fits and counts from the end": _edit(
        3,
        ("        return result\n", "        return replace(result)\n"),
        (
            "head = int(MAX_RESULT_CHARS * HEAD_RATIO)",
            "head = round(MAX_RESULT_CHARS * HEAD_RATIO)",
        ),
        ("text[-(MAX_RESULT_CHARS - head) :]", "text[len(text) - (MAX_RESULT_CHARS - head) :]"),
    ),
}
