"""The hand-in's pytest plugin: nbval runs the lab, then the judge asks its kernel and judges here.

labs/conftest.py hands `restore_collected` the notebooks nbval collects: a lab the package ships
a release of (labs.py: day03-lab, day03-extensions) is read through `restore` (the locked cells
and the self-test's expected `N/N passed` come from the release), its kernel starts without keys,
and after its cells come one item per check, `check_1` ... `check_N`: the first one to run asks
the kernel the grader's questions (a seed drawn here) and every check is judged in this pytest
process, so `pytest --nbval` passes only for a lab the judge scores full. Deliberately not
handled: the kernel's import path (the student's own CI: the whole package, so that the lab's own
self-test cell shows its N/N), and a student who edits labs/conftest.py itself.
"""

from __future__ import annotations

import os
import secrets
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

from course_agent.lab.ask import answer_in, judge_answers, questions
from course_agent.lab.kernel import kernel_environment
from course_agent.lab.labs import LABS
from course_agent.lab.restore import released_path, restore
from course_agent.selftest.lab import SelftestReport

__all__ = ["JudgedCheck", "ReleasedLab", "ask_kernel", "restore_collected"]

QUESTION_TIMEOUT = 120  # seconds a question may take when nbval sets no cell timeout


def ask_kernel(kernel: Any, source: str, timeout: float) -> tuple[list[dict], dict | None]:
    """Run `source` in nbval's kernel; (its display outputs, its reply), or ([], None) when no
    reply came within `timeout` seconds (the kernel is then interrupted)."""
    msg_id = kernel.kc.execute(source, store_history=False, allow_stdin=False, stop_on_error=False)
    deadline = time.monotonic() + timeout
    outputs: list[dict] = []
    try:
        while True:
            msg = kernel.get_message("iopub", timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("display_data", "execute_result"):
                outputs.append({"data": content.get("data", {})})
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        while True:
            reply = kernel.get_message("shell", timeout=max(0.1, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                return outputs, reply
    except Empty:
        kernel.interrupt()
        return outputs, None


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


class RanCell(IPyNbCell):
    """nbval's cell item, noting that it ran (a check run alone runs the cells itself first)."""

    def runtest(self) -> None:
        self.parent.ran = True
        super().runtest()


class ReleasedLab(IPyNbFile):
    """nbval's notebook, read through `restore`, run in a kernel without keys, then judged."""

    ran = False
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
            yield RanCell.from_parent(
                self, name=f"Cell {number}", cell_num=number, cell=cell, options=options
            )
        for number in range(1, len(LABS[self.path.stem].parts) + 1):
            yield JudgedCheck.from_parent(self, name=f"check_{number}", number=number)

    def setup(self) -> None:
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
        """Every check's verdict: the kernel asked once, on cases of a seed drawn here."""
        if self.report is None:
            timeout = self.config.option.nbval_cell_timeout or QUESTION_TIMEOUT
            if not self.ran:  # `-k check_3`: nbval's cells were deselected, so run them here
                for cell in self.nb.cells:
                    if cell.cell_type == "code":
                        ask_kernel(self.kernel, cell.source, timeout)
            lab, seed = LABS[self.path.stem], secrets.randbits(31)
            asked, answered = questions(lab, seed), {}
            for question in asked:
                outputs, reply = ask_kernel(self.kernel, question.source, timeout)
                if reply is None:
                    answered[question.number] = (None, f"no answer within {timeout:g} s")
                else:
                    answered[question.number] = answer_in(outputs, reply)
            self.report = judge_answers(lab, asked, answered, seed)
        return self.report


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
