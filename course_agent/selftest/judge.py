"""How a self-test check fails: one line a student can act on; no borrowing the package's answer.

Shared by the three exercise checks (merging, feedback, truncation).
Deliberately not handled: code that patches the package at run time (only its calls are seen).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from course_agent.protocol import ToolResult

__all__ = ["CheckFailed", "Watch", "expect", "first_of", "plain", "plain_result", "raised", "shown"]


class CheckFailed(Exception):
    """A check's expectation did not hold (raised explicitly: `assert` vanishes under -O)."""


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def shown(value: object, limit: int = 48) -> str:
    """A value as a student can read it in one line: its repr, cut in the middle if long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}...{text[-9:]}"


def plain(value: object) -> Any:
    """`value` copied into plain JSON values: str, int, float, bool, None, list, dict.

    A student's subclass of str or int could answer `==` and `in` however it liked; its copy
    cannot. Anything JSON cannot hold becomes its repr.
    """
    return json.loads(json.dumps(value, default=repr))


def plain_result(result: object, who: str) -> ToolResult | str:
    """A student's ToolResult copied into plain values, or one line saying what is wrong with it."""
    if not isinstance(result, ToolResult):
        return f"{who} returned {shown(result)}: return a ToolResult"
    content, ok, meta = result.content, result.ok, result.meta
    if not isinstance(content, str) or type(ok) is not bool or not isinstance(meta, Mapping):
        return (
            f"{who} returned a ToolResult with content {shown(content, 30)}, ok {shown(ok, 20)}, "
            f"meta {shown(meta, 30)}: content is text, ok True or False, meta a dict"
        )
    return ToolResult(plain(content), ok, plain(dict(meta)))


CHANGED_PROFILER = (
    "{own} changed the profiler (sys.setprofile), so the self-test could not see what it ran: "
    "leave sys.setprofile alone"
)


class Watch:
    """Runs a student's function and notes whether it runs the package's own answer instead,
    say through a wrapper or a subclass; `verdict` then fails the check.

    It watches with `sys.setprofile`, in this thread. A profiler already set as a Python function
    is set aside while the student's code runs and put back after; one that cannot be put back
    (cProfile's) fails the check, as does student code that changes the profiler itself: either
    way the self-test could not see what ran. The package itself (the default, or an import the
    grader refuses) is not watched. Deliberately not handled: the package's answer run in another
    thread, or as a copy of its code; like patching the package, that is code written against
    the self-test.
    """

    def __init__(self, student: object, package: object, *functions: Callable[..., Any]) -> None:
        self.student, self.active = student, student is not package
        # code object -> its name: a frame running one of them is the package's answer at work
        self.codes = {f.__code__: f"{f.__module__}.{f.__qualname__}" for f in functions}
        self.entered: list[str] = []
        self.unseen = ""  # why the student's code could not be watched, when it could not
        self.hook = self._profile  # one bound method, so that `is` recognises it afterwards

    def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        before = sys.getprofile()
        if not self.active:
            return function(*args)
        if before is not None and not callable(before):
            kind = f"{type(before).__module__}.{type(before).__qualname__}"
            self.unseen = self.unseen or (
                f"a profiler ({kind}) was running, so the self-test could not see what {{own}} "
                "ran: stop it (profiler.disable()) and run the self-test again"
            )
            return function(*args)
        sys.setprofile(self.hook)
        try:
            return function(*args)
        finally:
            if sys.getprofile() is not self.hook:
                self.unseen = self.unseen or CHANGED_PROFILER
            sys.setprofile(before)

    def _profile(self, frame: Any, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in self.codes:
            self.entered.append(self.codes[frame.f_code])
        elif event == "c_call" and arg is sys.setprofile and frame.f_code is not WATCHING:
            self.unseen = self.unseen or CHANGED_PROFILER  # even if it puts this hook back after

    def verdict(self) -> None:
        own = getattr(self.student, "__name__", "yours")
        if self.unseen:
            raise CheckFailed(self.unseen.format(own=own))
        if self.entered:
            raise CheckFailed(f"{own} runs the package's own {self.entered[0]}: write your own")


def first_of(failures: list[str], total: int, what: str) -> None:
    """Fail with the first failure, and how many more there were: one line, the first to fix."""
    if failures:
        more = f" (and {len(failures) - 1} more of {total} {what})" if len(failures) > 1 else ""
        raise CheckFailed(failures[0] + more)


def raised(exc: Exception, where: str) -> str:
    """What to say about an exception from a student's code, in one line.

    NotImplementedError, the lab's stub, is raised on instead: its own message says what to do.
    """
    if isinstance(exc, NotImplementedError):
        raise exc
    return f"{where} raised {type(exc).__name__}: {shown(str(exc), 60)[1:-1]}"


WATCHING = Watch.__call__.__code__  # the frame that sets this hook and takes it off again
