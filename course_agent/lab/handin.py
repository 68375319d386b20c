"""The hand-in's pytest plugin: nbval runs the lab, then the judge asks its kernel and judges here.

labs/conftest.py hands `restore_collected` the notebooks nbval collects: every one's kernel runs
jailed in a fresh folder (lab/nbval_kernels.py); a lab the package ships a release of (labs.py:
day03-lab, day03-extensions) is read through `restore` (the locked cells and the self-test's
expected `N/N passed` come from the release), and after its cells come one item per check,
`check_1` ... `check_N`, judged in this pytest process exactly as `course-agent grade` judges
(grade.run_judged: a grading kernel of its own, without the package's answers, asked cases of a
seed drawn here), so `pytest --nbval` passes only for a lab the judge scores full. nbval's own
kernel keeps the whole package: the lab's cells and its self-test show what they show in
JupyterLab. Deliberately not handled: a student who edits labs/conftest.py itself (in their own
CI; the instructor's grade runs the grader).
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

from course_agent.lab.grade import run_judged
from course_agent.lab.jail import sandbox_problem
from course_agent.lab.labs import LABS
from course_agent.lab.nbval_kernels import start_kernel
from course_agent.lab.notebook_file import read_notebook
from course_agent.lab.private import discard, private_folder
from course_agent.lab.restore import released_path, restore
from course_agent.selftest.lab import Check, SelftestReport

__all__ = ["JailedNotebook", "JudgedCheck", "ReleasedLab", "restore_collected"]

JUDGE_TIMEOUT = 60  # seconds per cell of the judge's run unless --nbval-cell-timeout says


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


class NoSandbox(UserWarning):
    """The hand-in runs its kernels plain: said once in pytest's warnings summary."""


PLAIN_KERNELS = (
    "no sandbox, so this hand-in's kernels run as plain processes of this user: their own "
    "environment holds no key, but they can read this process's (/proc) and write what this user "
    "can; hand in other people's notebooks only through `course-agent grade`"
)


class JailedNotebook(IPyNbFile):
    """nbval's notebook, its kernel in the grading sandbox in a fresh folder of its own, the
    helper modules beside the notebook copied in (the notebook's folder, which holds
    labs/conftest.py, stays out of its reach), or, where no sandbox starts, a plain kernel
    without keys there."""

    folder: Path | None = None

    def setup(self) -> None:
        if problem := sandbox_problem():
            warnings.warn(NoSandbox(f"{problem}: {PLAIN_KERNELS}"), stacklevel=1)
        # A fresh folder, the helper modules beside the notebook copied in (lab/private.py).
        self.folder = private_folder(self.path.parent)
        startup = self.config.option.nbval_kernel_startup_timeout
        self.kernel = start_kernel(self.folder, startup, sandbox=not problem)
        self.setup_sanitize_files()

    def teardown(self) -> None:
        try:
            super().teardown()  # nbval stops a kernel that still lives, and only then
        finally:
            manager = getattr(getattr(self, "kernel", None), "km", None)
            if hasattr(manager, "release"):  # a dead one's sandbox: its cgroups, its sockets
                manager.release()
            if self.folder is not None:
                discard(self.folder)


class ReleasedLab(JailedNotebook):
    """nbval's notebook, read through `restore`, run in a jailed kernel, then judged."""

    report: SelftestReport | None = None

    def collect(self) -> Iterator[pytest.Item]:
        student = read_notebook(self.path)  # the grader's bounds: size, depth, values, no link
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
        super().setup()

    def judged(self) -> SelftestReport:
        """Every check's verdict, as `course-agent grade` gives it: the restored notebook run
        once more in a grading kernel of its own (the package without its answers), asked
        cases of a seed drawn here, its answers judged in this process."""
        if self.report is None:
            lab = LABS[self.path.stem]
            timeout = (
                JUDGE_TIMEOUT
                if _default_timeout(self.config)
                else self.config.option.nbval_cell_timeout
            )
            # In a sandbox where bubblewrap can start (the student's CI may have none).
            sandbox = not sandbox_problem()  # "" when bubblewrap makes one here
            nb, beside = copy.deepcopy(self.nb), self.path.parent  # its helper modules
            problem, report = run_judged(nb, timeout, lab, beside, sandbox=sandbox)
            if report is None:
                checks = [
                    Check(number, part.name, False, f"{part.name}: {problem}")
                    for number, part in enumerate(lab.parts, 1)
                ]
                self.report = SelftestReport(checks, 0)
            else:
                self.report = SelftestReport.from_dict(report)
        return self.report


def _default_timeout(config: pytest.Config) -> bool:
    """Whether nbval's cell timeout is its default (2,000 s: far too long for a judge's cell)."""
    return not any(arg.startswith("--nbval-cell-timeout") for arg in config.invocation_params.args)


def restore_collected(collected: Sequence[Any], folder: Path) -> list[Any]:
    """nbval's collectors, each swapped: a released lab directly in `folder` for ReleasedLab, any
    other notebook (the solution in labs/source/, a notes.ipynb) for JailedNotebook, which nbval
    compares with its own outputs, its kernel jailed all the same."""
    swapped = []
    for item in collected:
        path = Path(getattr(item, "path", "")).resolve()
        if isinstance(item, IPyNbFile) and not isinstance(item, JailedNotebook):
            released = path.parent == folder and released_path(path.name).is_file()
            kind = ReleasedLab if released else JailedNotebook
            item = kind.from_parent(item.parent, path=path)
        swapped.append(item)
    return swapped
