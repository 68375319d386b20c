"""Grade submitted lab notebooks: run each in its own kernel, read its self-test back as data.

The self-test cell shows only `k/7 passed` (what nbval compares); the checks ride along in that
output's metadata, which nbval ignores and JupyterLab saves. A hung cell, a killed kernel or a file
that is not a notebook becomes a row saying so. Deliberately not handled: sandboxing students'
code (a kernel is a separate process, not a jail) and limits other than the per-cell timeout.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .selftest import SelftestReport

# nbformat, nbclient, jupyter_client and ipykernel are the test extra's: they are imported where
# they are used, because the lab's own kernel imports this module for show_report alone.

__all__ = [
    "REPORT_KEY",
    "GradeRow",
    "find_notebooks",
    "grade",
    "grade_one",
    "main_grade",
    "print_table",
    "read_report",
    "run_notebook",
    "show_report",
    "write_csv",
]

REPORT_KEY = "course_agent/selftest"  # output metadata: {"checks": [{"number", "ok", "line"}]}


def show_report(report: SelftestReport) -> None:
    """Display `k/7 passed` in a notebook, with every check attached as output metadata."""
    from IPython.display import display

    checks = [{"number": c.number, "ok": c.ok, "line": c.line} for c in report.checks]
    display({"text/plain": report.summary()}, raw=True, metadata={REPORT_KEY: {"checks": checks}})


def _is_check(item: object) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("number"), int)
        and isinstance(item.get("ok"), bool)
        and isinstance(item.get("line"), str)
    )


def read_report(nb: Any) -> list[dict[str, Any]] | None:
    """The checks carried by the last self-test output of an executed notebook, or None.

    A report of any other shape (hand-edited, say) counts as no report at all.
    """
    found = None
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            report = output.get("metadata", {}).get(REPORT_KEY)
            checks = report.get("checks") if isinstance(report, dict) else None
            if isinstance(checks, list) and all(map(_is_check, checks)):
                found = checks
    return found


@functools.cache
def _current_env_kernels() -> type:
    """A kernel manager whose kernels run this interpreter, like nbval's --nbval-current-env.

    Async on purpose: nbclient polls a blocking manager's channels forever once its kernel dies.
    """
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> Any:
            return self.kernel_spec_class(
                resource_dir=ipykernel.kernelspec.RESOURCES,
                **ipykernel.kernelspec.get_kernel_dict(),
            )

    class CurrentEnvKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _default_kernel_spec_manager(self) -> KernelSpecManager:
            return CurrentEnvSpecs()

    return CurrentEnvKernelManager


def run_notebook(nb: Any, cwd: Path, timeout: float) -> str:
    """Execute `nb` in place in a fresh kernel started in `cwd`; "" or what stopped the run.

    An exception inside a cell does not stop it (its output is stored, like in JupyterLab); a cell
    running over `timeout` seconds, or a kernel that dies, does.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    started: list[int] = []  # cell indexes in the order they started: the last one is running
    client = NotebookClient(
        nb,
        kernel_manager_class=_current_env_kernels(),
        kernel_name="current-env",
        timeout=timeout,
        allow_errors=True,
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
        on_cell_start=lambda cell, cell_index: started.append(cell_index),
    )
    # What the notebook leaves in temporary folders goes in one we remove, even if it kills its
    # kernel; the kernel's own stderr (connection warnings, "parent exited") is noise in a table.
    with tempfile.TemporaryDirectory(prefix="course-agent-run-", ignore_cleanup_errors=True) as tmp:
        env = {**os.environ, "TMPDIR": tmp, "TEMP": tmp, "TMP": tmp}
        try:
            client.execute(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except CellTimeoutError:
            return f"timeout: {_cell(started)} ran over {timeout:g} s"
        except DeadKernelError:
            return f"kernel died in {_cell(started)}"
    return ""


def _cell(started: list[int]) -> str:
    """The running cell, counted from 1 as people count cells in a notebook."""
    return f"cell {started[-1] + 1}" if started else "a cell"


@dataclass(frozen=True)
class GradeRow:
    """One submission's result. `passed` is None when its self-test never reported."""

    submission: str
    passed: int | None
    total: int | None
    failed: tuple[int, ...]  # numbers of the checks that failed
    details: tuple[str, ...]  # their lines, "fragment merging: NotImplementedError: ..."
    seconds: float
    note: str = ""  # what went wrong with the run itself; "" when the self-test reported

    @property
    def score(self) -> str:
        return "-" if self.passed is None else f"{self.passed}/{self.total}"


def _first_error(nb: Any) -> str:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return f"{output.get('ename')}: {output.get('evalue')}"[:120]
    return "the self-test cell shows no report"


def grade_one(path: Path, timeout: float) -> GradeRow:
    """Run one submission and read its self-test; never raises."""
    import nbformat

    started = time.perf_counter()

    def row(note: str, checks: list[dict[str, Any]] | None = None) -> GradeRow:
        seconds = time.perf_counter() - started
        if checks is None:
            return GradeRow(str(path), None, None, (), (), seconds, note)
        failed = [check for check in checks if not check["ok"]]
        return GradeRow(
            str(path),
            len(checks) - len(failed),
            len(checks),
            tuple(check["number"] for check in failed),
            tuple(check["line"] for check in failed),
            seconds,
            note,
        )

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # broken JSON, not UTF-8, not a notebook at all
        # nbformat's NotJSONError quotes the file; the JSON error behind it says where it broke.
        cause = exc.__cause__ or exc
        first_line = (str(cause).splitlines() or [""])[0][:100]
        return row(f"not a notebook: {type(cause).__name__}: {first_line}")
    try:
        problem = run_notebook(nb, path.parent, timeout)
    except Exception as exc:  # the kernel would not start, or nbclient gave up on it
        return row(f"could not run: {type(exc).__name__}: {exc}"[:160])
    checks = read_report(nb)
    if problem or checks is None:
        return row(problem or f"no self-test report: {_first_error(nb)}", checks)
    return row("", checks)


def grade(paths: Sequence[Path], timeout: float, jobs: int) -> list[GradeRow]:
    """Grade every notebook, `jobs` at a time (each in its own kernel process), in input order."""
    # Threads suffice: each one mostly waits on its kernel, which is a process of its own.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda path: grade_one(path, timeout), paths))


def _columns(row: GradeRow) -> list[str]:
    failed = " ".join(map(str, row.failed)) or ("-" if row.passed is not None else "?")
    return [row.submission, row.score, failed, f"{row.seconds:.1f}", row.note]


def print_table(rows: Iterable[GradeRow], out: TextIO) -> None:
    """submission, score, failed checks, seconds and a note, in aligned columns."""
    lines = [["submission", "score", "failed", "seconds", "note"]]
    lines += [_columns(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    for line in lines:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1]), line[2].ljust(widths[2])]
        cells.append(line[3].rjust(widths[3]))
        print("  ".join([*cells, line[4]]).rstrip(), file=out)


def write_csv(rows: Iterable[GradeRow], path: Path) -> None:
    """The table as CSV, plus each failed check's line in `details` (joined by " | ")."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["submission", "passed", "total", "failed", "seconds", "note", "details"])
        for row in rows:
            writer.writerow(
                [
                    row.submission,
                    "" if row.passed is None else row.passed,
                    "" if row.total is None else row.total,
                    " ".join(map(str, row.failed)),
                    f"{row.seconds:.1f}",
                    row.note,
                    " | ".join(row.details),
                ]
            )


def find_notebooks(paths: Iterable[Path]) -> list[Path]:
    """Files as given; a folder stands for the notebooks below it (checkpoints skipped), sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path} does not exist: give notebook files or folders")
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent grade",
        description="Run each submitted day-three lab notebook in its own kernel and print its "
        "self-test score, the checks that failed and the time it took.",
    )
    parser.add_argument(
        "submissions",
        nargs="+",
        type=Path,
        metavar="SUBMISSION",
        help="a notebook, or a folder searched for *.ipynb",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60,
        metavar="SECONDS",
        help="longest a single cell may run (default 60)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="notebooks run at once (default: the number of cores)",
    )
    parser.add_argument("--csv", type=Path, metavar="FILE", help="also write the table to FILE")
    return parser


def main_grade(argv: Sequence[str] | None = None) -> int:
    """`course-agent grade ...`: 0 once every submission has a row, 2 for bad usage."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.jobs < 1:
        parser.error("--timeout must be above 0 and --jobs at least 1")
    try:
        paths = find_notebooks(args.submissions)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    if not paths:
        parser.error("no *.ipynb found in the folders given")
    started = time.perf_counter()
    rows = grade(paths, args.timeout, args.jobs)
    print_table(rows, sys.stdout)
    print(
        f"{len(rows)} submissions graded in {time.perf_counter() - started:.1f} s "
        f"with {min(args.jobs, len(rows))} at a time"
    )
    if args.csv:
        write_csv(rows, args.csv)
        print(f"written to {args.csv}")
    return 0
