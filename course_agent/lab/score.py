"""Score a lab's three exercises: refuse the ones the notebook did not write, self-test the rest.

An exercise must be defined in the notebook itself (`__module__ == "__main__"`, methods too) and
must not reach the package's own implementation: imported, subclassed, or called through a global,
a module attribute, a closure or a default. A refused exercise is replaced by one that raises the
refusal, so the package's `run_selftest` fails the checks that use it, saying why. The notebook's
self-test cell and `course-agent grade` both score this way. Deliberately not handled: code that
monkeypatches the package or installs kernel hooks, or reaches it through importlib or getattr
with a string (the line nbgrader draws too).
"""

from __future__ import annotations

import builtins
import dataclasses
import dis
import json
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..accumulator import ToolCallAccumulator
from ..registry import ToolRegistry, default_registry, execute_call
from ..selftest import SelftestReport, run_selftest
from ..truncate import truncate_result

__all__ = [
    "EXERCISES",
    "Score",
    "check_origin",
    "print_score",
    "score_exercises",
    "score_namespace",
]

PACKAGE = "course_agent"
NOTEBOOK = "__main__"  # the module of everything a kernel's cells define
# (number, the name the lab gives it, run_selftest's parameter)
EXERCISES = (
    (1, "ToolCallAccumulator", "accumulator"),
    (2, "execute_call", "run_call"),
    (3, "truncate_result", "truncate"),
)
# What would do an exercise's work for it: the package's answers, and the registry that runs them.
ANSWERS: tuple[tuple[object, str], ...] = (
    (ToolCallAccumulator, "ToolCallAccumulator"),
    (execute_call, "execute_call"),
    (truncate_result, "truncate_result"),
    (ToolRegistry, "ToolRegistry"),
    (default_registry, "default_registry"),
)


# Attribute chains are followed through these only: getattr on them runs none of a student's code.
FOLLOWED = (types.ModuleType, ToolRegistry)


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
        """`k/7 passed`, alone when all pass; otherwise followed by what failed and why."""
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


def _answer_name(obj: object) -> str | None:
    """Which package answer `obj` is, if any; a registry's `execute` runs them all."""
    if isinstance(obj, types.MethodType):
        if isinstance(obj.__self__, ToolRegistry) and obj.__func__ is ToolRegistry.execute:
            return "ToolRegistry.execute"
        return _answer_name(obj.__func__)
    return next((name for answer, name in ANSWERS if obj is answer), None)


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


def _borrowed(obj: object) -> str | None:
    """The package answer that `obj`'s code reaches, following the notebook's own helpers."""
    seen: set[int] = set()
    todo = list(_functions(obj))
    while todo:
        function = todo.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        for reached in _reached(function):
            if (name := _answer_name(reached)) is not None:
                return name
            if getattr(reached, "__module__", None) == NOTEBOOK:  # a helper: look inside it too
                todo.extend(_functions(reached))
    return None


def check_origin(number: int, name: str, obj: object) -> str | None:
    """Why exercise `number` (`name`, bound to `obj`) is not the notebook's own work, or None."""
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
    if (answer := _borrowed(obj)) is not None:
        return f"{where} calls {answer} from {PACKAGE}"
    return None


def _refusing(problem: str) -> Callable[..., Any]:
    def refused(*args: object, **kwargs: object) -> Any:
        raise RefusedExercise(problem)

    return refused


def score_exercises(accumulator: object, run_call: object, truncate: object) -> Score:
    """The package's self-test on the three implementations the notebook wrote itself."""
    plugged: dict[str, Any] = {}
    refused: list[str] = []
    for (number, name, parameter), obj in zip(
        EXERCISES, (accumulator, run_call, truncate), strict=True
    ):
        problem = check_origin(number, name, obj)
        if problem is not None:
            refused.append(problem)
        plugged[parameter] = obj if problem is None else _refusing(problem)
    return Score(run_selftest(**plugged), tuple(refused))


def score_namespace(namespace: Mapping[str, object]) -> Score:
    """`score_exercises` on the names a notebook's namespace binds (a missing one is refused)."""
    return score_exercises(*(namespace.get(name) for _, name, _ in EXERCISES))


def print_score(nonce: str) -> None:
    """Print `NONCE {json}`: the score of the namespace this is called from (the grader's cell)."""
    namespace = sys._getframe(1).f_globals  # the kernel's user namespace, not ours
    sys.stdout.write(f"{nonce} {score_namespace(namespace).to_json()}\n")
    sys.stdout.flush()
