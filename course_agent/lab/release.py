"""Make the student's lab from the solution notebook, cell for cell as nbgrader would.

`release` does what `nbgrader generate_assignment` does with labs/nbgrader_config.py: each
`### BEGIN SOLUTION` ... `### END SOLUTION` region becomes CODE_STUB, cells are locked and
checksummed from their nbgrader metadata, outputs are cleared. It also writes the reference the
hand-in and the grader restore from: the same notebook with the self-test's expected `N/N passed`.
Same source, same bytes; any lab of labs.py. Deliberately not handled: hidden tests and
nbgrader's database.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course_agent.lab.checkout import installed, reference_for
from course_agent.lab.classroom import add_parser, main_classroom
from course_agent.lab.grade import run_judged
from course_agent.lab.handin_command import add_handin_parser, main_handin
from course_agent.lab.labs import LABS, SELFTEST_CELL, detect_lab, write_notebook
from course_agent.lab.restore import is_locked

__all__ = [
    "CODE_STUB",
    "EXPECTED",
    "FULL_MARKS",
    "NOTEBOOK_METADATA",
    "execute_source",
    "main_lab",
    "release",
    "release_notebooks",
    "stub_solutions",
]

# nbgrader's delimiters, found anywhere in a line as nbgrader finds them.
BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"
# What a region becomes, indented like its BEGIN line: labs/nbgrader_config.py gives nbgrader the
# same. One stub for every region, so what to write goes in a `# TODO` comment above the region.
CODE_STUB = (
    'raise NotImplementedError("write this part: the TODO comment above says what it must do")'
)
TEXT_STUB = "YOUR ANSWER HERE"  # nbgrader's, for a markdown answer cell (the extension lab's)
EXPECTED = "7/7 passed"  # the day-three lab's; another lab's is its own N/N
FULL_MARKS = re.compile(r"([1-9]\d*)/\1 passed")
KEPT_CELL_METADATA = ("deletable", "editable", "nbgrader", "tags")
# The same notebook metadata whatever kernel ran the source: no Python version, no widget state.
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"file_extension": ".py", "mimetype": "text/x-python", "name": "python"},
}


def stub_solutions(code: str, stub: str = CODE_STUB) -> str:
    """`code` with each marked region replaced by `stub`, indented like its BEGIN line."""
    lines: list[str] = []
    inside = False
    for number, line in enumerate(code.split("\n"), 1):
        if BEGIN in line:
            if inside:
                raise ValueError(f"line {number}: {BEGIN} inside a region; close that one first")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + part for part in stub.split("\n")]
        elif END in line:
            if not inside:
                raise ValueError(f"line {number}: {END} without a {BEGIN} before it")
            inside = False
        elif not inside:
            lines.append(line)
    if inside:
        raise ValueError(f"a {BEGIN} is never closed: add ### {END} after the solution")
    return "\n".join(lines)


def _checksum(cell: Any) -> str:
    """nbgrader's checksum of a graded, solution or locked cell (its utils.compute_checksum)."""
    meta = cell.metadata.nbgrader
    grade, solution = bool(meta.get("grade")), bool(meta.get("solution"))
    parts = [cell.source, cell.cell_type, str(grade), str(solution), str(is_locked(cell))]
    parts.append(meta["grade_id"])
    if grade:
        parts.append(str(float(meta["points"])))
    digest = hashlib.md5()
    for part in parts:
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()


def _student_cell(cell: Any, where: str) -> Any:
    """One cell as nbgrader releases it: stubbed, locked, checksummed, without outputs."""
    import nbformat

    new = copy.deepcopy(cell)
    new.metadata = {key: new.metadata[key] for key in KEPT_CELL_METADATA if key in new.metadata}
    meta = new.metadata.get("nbgrader", {})
    solution, grade = bool(meta.get("solution")), bool(meta.get("grade"))
    try:
        stubbed = stub_solutions(new.source, CODE_STUB if new.cell_type == "code" else TEXT_STUB)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if stubbed != new.source and not solution:
        raise ValueError(f"{where} has a solution region but no nbgrader solution metadata")
    if solution and stubbed == new.source:  # a solution cell without regions: all of it goes
        stubbed = CODE_STUB if new.cell_type == "code" else TEXT_STUB
    new.source = stubbed
    # nbgrader's LockCells: solution cells cannot be deleted; graded and read-only ones not edited.
    if solution or grade or is_locked(new):
        new.metadata["deletable"] = False
    if not solution and (grade or is_locked(new)):
        new.metadata["editable"] = False
    if solution or grade or is_locked(new):
        new.metadata["nbgrader"]["checksum"] = _checksum(new)
        new.metadata["nbgrader"]["cell_type"] = new.cell_type
    if new.cell_type == "code":
        new.outputs, new.execution_count = [], None
    return nbformat.from_dict(new)


def _expected_output(cell: Any, source: Path) -> Any:
    """The self-test's stored `N/N passed`, as nbval will expect it."""
    shown = []
    for output in cell.get("outputs", []):
        text = output.get("data", {}).get("text/plain", output.get("text", ""))
        if FULL_MARKS.fullmatch(text.strip()):
            kept = copy.deepcopy(output)
            if "metadata" in kept:
                kept["metadata"] = {}
            return kept
        shown.append(text.strip())
    raise ValueError(
        f"{source}: the self-test cell shows {' / '.join(shown) or 'nothing'}, not N/N passed; "
        f"finish the solution, then store its outputs with `course-agent lab execute {source}`"
    )


def release_notebooks(source: Path) -> tuple[Any, Any]:
    """(the student notebook, the reference with the expected output) from the solution."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    student = nbformat.v4.new_notebook(metadata=copy.deepcopy(NOTEBOOK_METADATA))
    for index, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{index}")  # a pre-4.5 notebook has none: stay stable
        student.cells.append(_student_cell(cell, f"{source}, cell {cell.id}"))
    selftest = [index for index, cell in enumerate(nb.cells) if cell.id == SELFTEST_CELL]
    if not selftest or nb.cells[selftest[0]].cell_type != "code":
        raise ValueError(f"{source} has no code cell with id {SELFTEST_CELL!r} to compare")
    reference = copy.deepcopy(student)
    cell = reference.cells[selftest[0]]
    cell.outputs = [_expected_output(nb.cells[selftest[0]], source)]
    # nbval compares only cells that ran: give it the count a fresh Run All gives this cell.
    cell.execution_count = sum(c.cell_type == "code" for c in nb.cells[: selftest[0] + 1])
    if cell.outputs[0].get("output_type") == "execute_result":
        cell.outputs[0]["execution_count"] = cell.execution_count
    return student, reference


def release(source: Path, dest: Path, reference: Path | None = None) -> None:
    """Write the student notebook `dest`, and the reference too when given, from `source`."""
    student, expected = release_notebooks(source)
    write_notebook(student, dest)
    if reference is not None:
        write_notebook(expected, reference)


def execute_source(source: Path, timeout: float = 120) -> str:
    """Run the solution in a fresh kernel and store its outputs in place; returns `k/N passed`."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    # The source is named after its lab; a copy named otherwise is told by its cells.
    lab = LABS.get(source.stem) or detect_lab(nb)
    if lab is None:
        raise ValueError(f"{source} has none of the cells of {' or '.join(LABS)}: which lab is it?")
    # The whole package: the solution's own self-test output is what the release stores.
    problem, report = run_judged(nb, timeout, lab, cwd=source.parent, stripped=False)
    if problem:
        raise RuntimeError(f"{source} was left as it was: {problem}")
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata = nbformat.from_dict(copy.deepcopy(NOTEBOOK_METADATA))
    write_notebook(nb, source)
    checks = report["checks"] if report else []
    return f"{sum(bool(check.get('ok')) for check in checks)}/{len(checks)} passed"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent lab",
        description="Maintain a lab (day03-lab, day03-extensions) from its solution notebook "
        "(labs/source/), and make its GitHub Classroom template.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    make = commands.add_parser(
        "release",
        help="write the student notebook DEST from SOURCE, and the package's reference copy",
    )
    make.add_argument("source", type=Path, metavar="SOURCE", help="the solution notebook")
    make.add_argument("dest", type=Path, metavar="DEST", help="the student notebook to write")
    make.add_argument(
        "--reference",
        type=Path,
        metavar="FILE",
        help="where the reference with the expected output goes (default: DEST's name in "
        "course_agent/lab/released/ of the checkout this is run from, or of SOURCE's; "
        "never an installed package)",
    )
    run = commands.add_parser(
        "execute", help="re-run SOURCE in a fresh kernel and store its outputs (before a release)"
    )
    run.add_argument("source", type=Path, metavar="SOURCE", help="the solution notebook")
    run.add_argument(
        "--timeout",
        type=float,
        default=120,
        metavar="SECONDS",
        help="longest a single cell may run (default 120)",
    )
    add_parser(commands)
    add_handin_parser(commands)
    return parser


def main_lab(argv: Sequence[str] | None = None) -> int:
    """`course-agent lab release SOURCE DEST` / `lab execute SOURCE` / `lab classroom DEST` /
    `lab handin [NOTEBOOK]`: 0 done, 1 refused (a hand-in: a check failed), 2 usage."""
    args = build_parser().parse_args(argv)
    if args.command == "classroom":
        return main_classroom(args)
    if args.command == "handin":
        return main_handin(args)
    if not args.source.is_file():
        print(
            f"course-agent lab: {args.source} is not a file; give the solution notebook, "
            "e.g. labs/source/day03-lab.ipynb",
            file=sys.stderr,
        )
        return 2
    try:
        if args.command == "release":
            reference = args.reference or reference_for(args.dest.name, args.source, Path.cwd())
            if installed(reference):
                raise ValueError(
                    f"{reference} is inside an installed package, which the next install "
                    "overwrites: name a file in your checkout with --reference FILE"
                )
            release(args.source, args.dest, reference)
            print(f"released {args.dest} from {args.source}; reference {reference}")
            return 0
        summary = execute_source(args.source, args.timeout)
    except (ValueError, RuntimeError) as exc:  # nbformat's NotJSONError is a ValueError too
        print(f"course-agent lab: {exc}", file=sys.stderr)
        return 1
    print(f"stored the outputs of {args.source}: {summary}")
    return 0 if FULL_MARKS.fullmatch(summary) else 1
