"""The hand-in's pytest plugin: nbval runs the lab, then the judge asks its kernel and judges here.

labs/conftest.py hands `restore_collected` the notebooks nbval collects: a lab the package ships
a release of (labs.py: day03-lab, day03-extensions) is read through `restore` (the locked cells
and the self-test's expected `N/N passed` come from the release), its kernel starts without keys,
and after its cells come one item per check, `check_1` ... `check_N`, judged in this pytest
process exactly as `course-agent grade` judges (grade.run_judged: a grading kernel of its own,
without the package's answers, asked cases of a seed drawn here), so `pytest --nbval` passes only
for a lab the judge scores full. nbval's own kernel keeps the whole package (the lab's cells and
its self-test show what they show in JupyterLab) and, where bubblewrap starts, runs jailed too.
Deliberately not handled: a student who edits labs/conftest.py itself (in their own CI; the
instructor's grade runs the grader).
"""

from __future__ import annotations

import copy
import os
import subprocess
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager, RunningKernel
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

from course_agent.lab.grade import run_judged
from course_agent.lab.jail import blocking_kernel_manager, sandbox_problem
from course_agent.lab.kernel import kernel_environment
from course_agent.lab.labs import LABS
from course_agent.lab.restore import released_path, restore
from course_agent.selftest.lab import Check, SelftestReport

__all__ = ["JudgedCheck", "ReleasedLab", "jailed_kernel", "restore_collected"]

JUDGE_TIMEOUT = 60  # seconds per cell of the judge's run when nbval sets no cell timeout


class JudgedCheck(pytest.Item):
    """One check of the lab, judged in this process from the kernel's answer."""

    def __init__(self, *, number: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.number = number

    def runtest(self) -> None:
        check = self.parent.judged().checks[self.number - 1]
        if not check.ok:
            raise CheckNotPassed(f"x {check.number}. {check.line}")

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CheckNotPassed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CheckNotPassed(Exception):
    """A check the judge failed: its line is the whole report."""


class ReleasedLab(IPyNbFile):
    """nbval's notebook, read through `restore`, run in a kernel without keys, then judged."""

    report: SelftestReport | None = None

    def collect(self) -> Iterator[pytest.Item]:
        student = nbformat.read(self.path, as_version=4)
        reference = nbformat.read(released_path(self.path.name), as_version=4)
        self.nb = restore(student, reference)
        # nbval's own collection, on the restored cells: one item per code cell, options from
        # the cell's tags and NBVAL_ comments (only the release's cells carry any that matter).
        code = [cell for cell in self.nb.cells if cell.cell_type == "code"]
        for number, cell in enumerate(code):
            options: defaultdict[str, Any] = defaultdict(bool, find_metadata_tags(cell.metadata))
            options.update(dict(find_comment_markers(cell.source)))
            options.setdefault("check", self.compare_outputs)
            yield IPyNbCell.from_parent(
                self, name=f"Cell {number}", cell_num=number, cell=cell, options=options
            )
        for number in range(1, len(LABS[self.path.stem].parts) + 1):
            yield JudgedCheck.from_parent(self, name=f"check_{number}", number=number)

    def setup(self) -> None:
        # The judge first: where no sandbox starts, nbval's kernel runs plain, and what it writes
        # (a module in site-packages holding the package's answers, say) must not be there yet.
        self.judged()
        if not sandbox_problem():
            # nbval's kernel in a sandbox of its own too (the whole package, read-only): it
            # reaches this process's /proc, keys and site-packages no more than the judge's.
            self.kernel = jailed_kernel(
                self.path.parent, self.config.option.nbval_kernel_startup_timeout
            )
            self.setup_sanitize_files()
            return
        # nbval starts its kernel with this process's environment: hide the keys while it does.
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(kernel_environment(saved))
        try:
            super().setup()
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def judged(self) -> SelftestReport:
        """Every check's verdict, as `course-agent grade` gives it: the restored notebook run
        once more in a grading kernel of its own (the package without its answers), asked
        cases of a seed drawn here, its answers judged in this process."""
        if self.report is None:
            lab = LABS[self.path.stem]
            timeout = self.config.option.nbval_cell_timeout or JUDGE_TIMEOUT
            # In a sandbox where bubblewrap can start (the student's CI may have none).
            sandbox = not sandbox_problem()  # "" when bubblewrap makes one here
            problem, report = run_judged(copy.deepcopy(self.nb), timeout, lab, sandbox=sandbox)
            if report is None:
                checks = [
                    Check(number, part.name, False, f"{part.name}: {problem}")
                    for number, part in enumerate(lab.parts, 1)
                ]
                self.report = SelftestReport(checks, 0)
            else:
                self.report = SelftestReport.from_dict(report)
        return self.report


def jailed_kernel(folder: Path, startup_timeout: float) -> RunningKernel:
    """nbval's RunningKernel around a kernel jailed in `folder` (its one writable place), which
    nbval drives as its own: the same client calls, over unix sockets instead of TCP."""
    manager = blocking_kernel_manager(
        kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager()
    )
    manager.start_kernel(cwd=str(folder), stderr=subprocess.DEVNULL)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=startup_timeout)
    except RuntimeError:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        raise
    kernel = RunningKernel.__new__(RunningKernel)  # nbval's class holds just these two
    kernel.km, kernel.kc = manager, client
    kernel._ensure_iopub_up()
    return kernel


def restore_collected(collected: Sequence[Any], folder: Path) -> list[Any]:
    """nbval's collectors, those of a released lab directly in `folder` swapped for ReleasedLab.

    Other notebooks (the solution in labs/source/, say) are compared with their own outputs.
    """
    swapped = []
    for item in collected:
        path = Path(getattr(item, "path", "")).resolve()
        released = path.parent == folder and released_path(path.name).is_file()
        if isinstance(item, IPyNbFile) and not isinstance(item, ReleasedLab) and released:
            item = ReleasedLab.from_parent(item.parent, path=path)
        swapped.append(item)
    return swapped
