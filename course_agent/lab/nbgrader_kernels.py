"""nbgrader's autograde with the package's kernels: each in the grading sandbox, or, where none
can start, a plain kernel whose environment holds no keys (and a warning saying so).

nbgrader's Execute step sets its kernel manager class itself (configuring that trait does
nothing), so `autograde_preprocessors` is nbgrader's own list with Execute swapped for ours. The
sandbox gives each kernel a fresh private folder (private.py; nbgrader's autograded folder, which
it writes, copies and chmods afterwards, is only where helper modules are copied from before the
kernel starts), and `bounded_exporter` reads each submission through notebook_file.py's bounds.
So, in the sandbox, no nbgrader step touches a path a kernel could have written. Deliberately not
handled: nbgrader's grade itself (its test cells run inside the kernel), and any of this without
the sandbox (a plain kernel can write anywhere its user can).
"""

from __future__ import annotations

import datetime
import functools
import os
import sys
from pathlib import Path
from typing import Any

from course_agent.lab.jail import jailed_kernels, sandbox_problem
from course_agent.lab.kernel import kernel_environment
from course_agent.lab.kernel_spec import current_env_kernels
from course_agent.lab.notebook_file import read_notebook

__all__ = ["autograde_preprocessors", "bounded_exporter", "chosen_kernels", "scrubbed_kernels"]


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


@functools.cache
def bounded_exporter() -> type:
    """nbconvert's NotebookExporter, reading the file with notebook_file.py's bounds: no link,
    no FIFO, at most LARGEST_NOTEBOOK bytes, DEEPEST brackets and MOST_VALUES values."""
    from nbconvert.exporters import NotebookExporter

    class BoundedExporter(NotebookExporter):
        def from_filename(self, filename: str, resources: Any = None, **kw: Any) -> Any:
            nb = read_notebook(Path(filename))  # NotANotebook: nbgrader logs it, goes on
            resources = resources if resources is not None else {}
            meta = resources["metadata"] = dict(resources.get("metadata") or {})
            path, name = os.path.split(filename)
            meta["name"], meta["path"] = os.path.splitext(name)[0], path
            stamp = datetime.datetime.fromtimestamp(
                os.lstat(filename).st_mtime, datetime.timezone.utc
            )
            meta["modified_date"] = stamp.strftime("%B %-d, %Y")
            return self.from_notebook_node(nb, resources=resources, **kw)

    return BoundedExporter


def autograde_preprocessors() -> list[type]:
    """nbgrader's `Autograde.autograde_preprocessors`, its Execute step ours."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    return [_execute() if step is Execute else step for step in default]
