"""Is a notebook's function a copy of the package's answer? The same compiled code says so.

A pasted copy of `truncate_result`, one exec'd from `inspect.getsource`, or one rebuilt from its
`__code__` compiles to the package's instructions, names and constants, whatever its variables
are called or its comments and docstring say. Deliberately not handled: a copy edited until its
code differs (reordered, rewritten); that is a similarity checker's job, not a grader's.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
from collections.abc import Iterator

__all__ = ["copied_answer"]

# (operation, argument) per instruction: what the code does, without where it sits in memory.
Fingerprint = tuple[tuple[str, object], ...]
# Opcodes the compiler adds or picks by context (`json.loads` compiles to LOAD_ATTR where `json`
# is imported in the same cell or module, LOAD_METHOD elsewhere), and jump offsets, left out.
SKIPPED = {"CACHE", "NOP", "PRECALL", "PUSH_NULL", "RESUME", "EXTENDED_ARG"}
SAME = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL"}
JUMPS = set(dis.hasjrel) | set(dis.hasjabs)
SMALLEST = 30  # instructions: a shorter function (an __init__ of two lines) may match by chance


def _fingerprint(code: types.CodeType) -> Fingerprint:
    """Each instruction's operation and argument, nested code as its own fingerprint.

    Local variables count by their slot, not their name: renaming them changes nothing.
    """
    steps = []
    for instruction in dis.get_instructions(code):
        op = SAME.get(instruction.opname, instruction.opname)
        if op in SKIPPED:
            continue
        arg: object = instruction.argval
        if instruction.opcode in JUMPS:
            arg = None
        elif instruction.opcode in dis.haslocal or instruction.opcode in dis.hasfree:
            arg = instruction.arg
        elif isinstance(arg, types.CodeType):
            arg = _fingerprint(arg)
        steps.append((op, arg))
    return tuple(steps)


def _size(code: types.CodeType) -> int:
    nested = [const for const in code.co_consts if isinstance(const, types.CodeType)]
    return len(list(dis.get_instructions(code))) + sum(map(_size, nested))


def _functions(answer: object) -> Iterator[types.FunctionType]:
    """A function answer itself; a class's methods (static and class ones too)."""
    if inspect.isfunction(answer):
        yield answer
    elif isinstance(answer, type):
        for value in vars(answer).values():
            value = value.__func__ if isinstance(value, staticmethod | classmethod) else value
            if inspect.isfunction(value):
                yield value


@functools.cache
def _fingerprints(answers: tuple[object, ...]) -> dict[Fingerprint, str]:
    return {
        _fingerprint(function.__code__): function.__qualname__
        for answer in answers
        for function in _functions(answer)
        if _size(function.__code__) >= SMALLEST
    }


def copied_answer(function: types.FunctionType, answers: tuple[object, ...]) -> str | None:
    """The name of the function among `answers` (functions, classes) `function` copies, or None."""
    return _fingerprints(answers).get(_fingerprint(function.__code__))
