"""nbgrader's autograde with the package's kernels: each in the grading sandbox, or, where none
can start, a plain kernel whose environment holds no keys (and a warning saying so).

nbgrader's Execute step sets its kernel manager class itself (configuring that trait does
nothing), so `autograde_preprocessors` is nbgrader's own list with Execute swapped for ours.
Deliberately not handled: nbgrader's grade itself (its test cells run inside the kernel).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from course_agent.lab.jail import jailed_kernels, sandbox_problem
from course_agent.lab.kernel import kernel_environment
from course_agent.lab.kernel_spec import current_env_kernels

__all__ = ["autograde_preprocessors", "chosen_kernels", "scrubbed_kernels"]


@functools.cache
def scrubbed_kernels() -> type:
    """Plain kernels of this interpreter, started with `kernel_environment`: no keys."""

    class ScrubbedKernels(current_env_kernels()):  # type: ignore[misc]
        async def _async_pre_start_kernel(self, **kw: Any) -> Any:
            kw["env"] = kernel_environment(kw.get("env"))
            return await super()._async_pre_start_kernel(**kw)

    return ScrubbedKernels


@functools.cache
def chosen_kernels() -> type:
    """The sandbox's kernels where one starts here; else scrubbed ones, with a warning."""
    if problem := sandbox_problem():
        print(f"course-agent: autograde without a sandbox: {problem}", file=sys.stderr)
        return scrubbed_kernels()
    return jailed_kernels()


@functools.cache
def _execute() -> type:
    from nbgrader.preprocessors import Execute

    class JailedExecute(Execute):
        """nbgrader's Execute (its config applies: c.Execute.timeout...), with our kernels."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("kernel_manager_class", chosen_kernels())
            super().__init__(*args, **kwargs)

    return JailedExecute


def autograde_preprocessors() -> list[type]:
    """nbgrader's `Autograde.autograde_preprocessors`, its Execute step ours."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    return [_execute() if step is Execute else step for step in default]
