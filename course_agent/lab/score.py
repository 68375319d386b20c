"""Score a lab's exercises: refuse the ones the notebook did not write, self-test the rest.

An exercise must be defined in the notebook itself (`__module__ == "__main__"`, methods too) and
must not reach the package's own implementation: imported, subclassed, called through a global,
a module attribute, a closure, a default or a value holding it (a list, a partial, an object), or
copied (copies.py). A refused exercise is replaced by one that raises the
refusal, so the lab's self-test (labs.py) fails the checks that use it, saying why. The notebook's
self-test cell and `course-agent grade` both score this way. Deliberately not handled: code that
monkeypatches the package or installs kernel hooks, or reaches it through importlib or getattr
with a string (the line nbgrader draws too).
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import dis
import functools
import gc
import json
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from course_agent.lab.copies import copied_answer
from course_agent.lab.labs import LABS, Lab, find_lab
from course_agent.registry import ToolRegistry
from course_agent.selftest.lab import SelftestReport

__all__ = [
    "EXERCISES",
    "GradeReport",
    "Score",
    "check_origin",
    "raise_score",
    "score_exercises",
    "score_lab",
    "score_namespace",
]

PACKAGE = "course_agent"
NOTEBOOK = "__main__"  # the module of everything a kernel's cells define
MAIN = LABS["day03-lab"]
# The day-three lab's (number, the name the lab gives it, run_selftest's parameter).
EXERCISES = tuple((each.number, each.name, each.parameter) for each in MAIN.exercises)
Answers = tuple[tuple[object, str], ...]


# Attribute chains are followed through these only: getattr on them runs none of a student's code.
FOLLOWED = (types.ModuleType, ToolRegistry)
# Values followed from one exercise, at most: far above any lab's (a few hundred), and a bound on
# the time a notebook can make the check take.
MOST_FOLLOWED = 100_000
# What a value can hide a function in; gc.get_referents lists what one holds without running it.
HOLDERS = (
    list,
    tuple,
    set,
    frozenset,
    dict,
    collections.deque,
    types.SimpleNamespace,
    functools.partial,
    staticmethod,
    classmethod,
    property,
    types.MethodType,
)


class RefusedExercise(Exception):
    """Raised in place of an exercise the notebook did not write itself."""


@dataclass(frozen=True)
class Score:
    """The self-test's report on what the notebook wrote, and why an exercise was refused."""

    report: SelftestReport
    refused: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        return sum(check.ok for check in self.report.checks)

    def text(self) -> str:
        """`k/N passed`, alone when all pass; otherwise followed by what failed and why."""
        failed = [f"x {check.number}. {check.line}" for check in self.report.checks if not check.ok]
        summary = f"{self.passed}/{len(self.report.checks)} passed"
        return "\n".join([summary, *self.refused, *failed])

    def to_json(self) -> str:
        checks = [_as_dict(check) for check in self.report.checks]
        return json.dumps({"checks": checks, "refused": list(self.refused)})


def _as_dict(check: Any) -> dict[str, Any]:
    # Every field the Check of the day has; number, ok and line are the ones the grader reads.
    if dataclasses.is_dataclass(check):
        return dataclasses.asdict(check)
    return {"number": check.number, "ok": check.ok, "line": check.line}


def _answer_name(obj: object, answers: Answers) -> str | None:
    """Which of `answers` `obj` is, if any; a registry's `execute` runs them all."""
    if isinstance(obj, types.MethodType):
        runs_answers = any(answer is ToolRegistry for answer, _ in answers)
        executes = isinstance(obj.__self__, ToolRegistry) and obj.__func__ is ToolRegistry.execute
        if runs_answers and executes:
            return "ToolRegistry.execute"
        return _answer_name(obj.__func__, answers)
    return next((name for answer, name in answers if obj is answer), None)


def _top(module: str) -> str:
    return PACKAGE if module.split(".")[0] == PACKAGE else module


def _functions(obj: object) -> Iterator[types.FunctionType]:
    """The Python functions a class defines (methods, static, class, properties), or `obj`."""
    if not isinstance(obj, type):
        if isinstance(obj, types.FunctionType):
            yield obj
        return
    for value in vars(obj).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        parts = [value.fget, value.fset, value.fdel] if isinstance(value, property) else [value]
        yield from (part for part in parts if isinstance(part, types.FunctionType))


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _reached(function: types.FunctionType) -> Iterator[object]:
    """What `function` reaches by name: globals, module attributes, imports, closures, defaults."""
    yield from (cell.cell_contents for cell in function.__closure__ or () if _filled(cell))
    yield from function.__defaults__ or ()
    yield from (function.__kwdefaults__ or {}).values()
    names = {**vars(builtins), **function.__globals__}
    for code in _code_objects(function.__code__):
        current: object = None  # the object an attribute chain (a.b.c) has reached so far
        imported: object = None  # the module of the last `import`, for its `from ... import x`
        for instruction in dis.get_instructions(code):
            op, name = instruction.opname, instruction.argval
            if op in ("LOAD_GLOBAL", "LOAD_NAME"):
                current = names.get(name)
            elif op in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(current, FOLLOWED):
                current = getattr(current, name, None)
            elif op == "IMPORT_NAME":
                current = imported = sys.modules.get(name)
            elif op == "IMPORT_FROM" and isinstance(imported, types.ModuleType):
                current = getattr(imported, name, None)
            else:
                current = None
            yield current


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises ValueError
    except ValueError:
        return False
    return True


def _held(value: object) -> list[object]:
    """What a value the code reached holds, where a package answer could hide from a name lookup.

    Boxes (list, tuple, set, dict, deque, SimpleNamespace), partials, static and bound methods,
    properties, and the notebook's own classes and objects, read with gc.get_referents so that
    none of their code runs. Modules and functions are followed by name (`_reached`); the
    package's objects (a registry is judged by its name) and other libraries' hold nothing here.
    """
    if isinstance(value, types.FunctionType | types.ModuleType):
        return []
    kind = value if isinstance(value, type) else type(value)
    if kind.__module__ == NOTEBOOK or isinstance(value, HOLDERS):
        return gc.get_referents(value)
    return []


def _borrowed(obj: object, answers: Answers) -> str | None:
    """How `obj` borrows one of `answers` ("calls X from course_agent"), or None.

    Follows what its code reaches by name, the notebook's own helpers, and what the values it
    reaches hold; a function of the notebook's with an answer's compiled code is a copy.
    """
    code_of = tuple(answer for answer, _ in answers)
    seen: set[int] = set()
    todo: list[object] = [obj]
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > MOST_FOLLOWED:
            return f"reaches over {MOST_FOLLOWED:,} objects, more than the grader follows"
        if (name := _answer_name(value, answers)) is not None:
            return f"calls {name} from {PACKAGE}"
        if isinstance(value, types.FunctionType):
            if getattr(value, "__module__", None) != NOTEBOOK:
                continue  # another library's function: not the notebook's work, not an answer
            if (name := copied_answer(value, code_of)) is not None:
                return f"copies {name} from {PACKAGE}"
            todo.extend(_reached(value))
        else:
            todo.extend(_held(value))
    return None


def check_origin(
    number: int, name: str, obj: object, answers: Answers = MAIN.exercises[0].answers
) -> str | None:
    """Why exercise `number` (`name`, bound to `obj`) is not the notebook's own work, or None.

    `answers` are the package's objects that would do the exercise's work (day three's by default).
    """
    where = f"exercise {number}"
    if obj is None:
        return f"{where}: the notebook defines no {name}"
    if not callable(obj):
        return f"{where}: {name} is of type {type(obj).__name__}, not a class or function"
    module = getattr(obj, "__module__", None)
    if module != NOTEBOOK:
        if module is None:
            return f"{where}: {name} is of type {type(obj).__name__}, not written in the notebook"
        return f"{where} imports {name} from {_top(module)}"
    if isinstance(obj, type):
        for base in obj.__mro__[1:]:
            if _top(base.__module__) == PACKAGE:
                return f"{where} subclasses {base.__name__} from {PACKAGE}"
        for function in _functions(obj):
            if function.__module__ != NOTEBOOK:
                origin = _top(function.__module__)
                return f"{where}: {name}.{function.__name__} comes from {origin}"
    if (borrowed := _borrowed(obj, answers)) is not None:
        return f"{where} {borrowed}"
    return None


def _refusing(problem: str) -> Callable[..., Any]:
    def refused(*args: object, **kwargs: object) -> Any:
        raise RefusedExercise(problem)

    return refused


def score_lab(lab: Lab | str, objects: Mapping[str, object], seed: int | None = None) -> Score:
    """`lab`'s self-test on the exercises `objects` binds by name (a missing one is refused), its
    cases drawn from `seed` (None: the self-test's default, the one the lab's own cell uses)."""
    lab = find_lab(lab) if isinstance(lab, str) else lab
    plugged: dict[str, Any] = {}
    refused: list[str] = []
    for exercise in lab.exercises:
        obj = objects.get(exercise.name)
        problem = check_origin(exercise.number, exercise.name, obj, exercise.answers)
        if problem is not None:
            refused.append(problem)
        plugged[exercise.parameter] = obj if problem is None else _refusing(problem)
    if seed is not None:
        plugged["seed"] = seed
    return Score(lab.selftest(**plugged), tuple(refused))


def score_exercises(accumulator: object, run_call: object, truncate: object) -> Score:
    """The day-three self-test on the three implementations the notebook wrote itself."""
    names = [name for _, name, _ in EXERCISES]
    return score_lab(MAIN, dict(zip(names, (accumulator, run_call, truncate), strict=True)))


def score_namespace(
    namespace: Mapping[str, object], lab: str = MAIN.name, seed: int | None = None
) -> Score:
    """`score_lab` on the names a notebook's namespace binds."""
    return score_lab(lab, namespace, seed)


class GradeReport(Exception):
    """Raised by the grader's cell: its text, the report as JSON, travels in the kernel's reply."""


def _stopped(exc: BaseException) -> str:
    try:
        said = " ".join(str(exc).split())[:100]
    except Exception:  # a student's exception whose __str__ raises
        said = ""
    return f"{type(exc).__name__}: {said}".rstrip(": ")


def raise_score(lab: str = MAIN.name, seed: int | None = None) -> None:
    """Raise GradeReport(json): the score of the namespace this is called from (the grader's cell),
    on cases drawn from the grader's `seed`.

    The kernel's reply to the grader's request names the exception that ended the cell and gives
    its text; unlike the cell's outputs, the notebook's code cannot write it, so a report it
    prints, imitating the grader's, is never read. Whatever the scoring raises past the self-test
    (SystemExit, KeyboardInterrupt, an exception named like this one) is reported as having
    stopped it: {"stopped": "SystemExit: ..."}.
    """
    namespace = sys._getframe(1).f_globals  # the kernel's user namespace, not ours
    try:
        text = score_namespace(namespace, lab, seed).to_json()
    except BaseException as exc:  # the student's code ran inside: nothing it raises gets out
        text = json.dumps({"stopped": _stopped(exc)})
    raise GradeReport(text)
