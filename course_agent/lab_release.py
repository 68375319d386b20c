"""Make the student's lab from the solution notebook: stub every solution, keep one expected output.

`release` replaces each `### BEGIN SOLUTION` ... `### END SOLUTION` region with a stub raising
NotImplementedError, clears every output but the self-test's `7/7 passed`, and writes the same bytes
for the same source; `execute_source` refreshes the source's own outputs first. Deliberately not
handled: nbgrader's points and hidden tests (grading.py reads the self-test instead).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "EXPECTED",
    "NOTEBOOK_METADATA",
    "SELFTEST_CELL",
    "execute_source",
    "main_lab",
    "release",
    "stub_solutions",
    "write_notebook",
]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
# Inside a region: TODO lines become the stub's message, HINT lines stay as comments for students.
TODO, HINT = "### TODO:", "### HINT:"
SELFTEST_CELL = "selftest"  # the id of the one cell whose stored output the release keeps
EXPECTED = "7/7 passed"
LINE_LENGTH = 100
KEPT_CELL_METADATA = ("deletable", "editable", "tags")  # the locks, and where nbval markers may be
# The same notebook metadata whatever kernel ran the source: no Python version, no widget state.
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"file_extension": ".py", "mimetype": "text/x-python", "name": "python"},
}


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _literal(text: str) -> str:
    """A Python string literal for `text`, in double quotes unless the text holds some."""
    # A JSON string is also a Python string literal, with quotes and backslashes escaped.
    return repr(text) if '"' in text else json.dumps(text, ensure_ascii=False)


def _stub(indent: str, message: str) -> list[str]:
    """`raise NotImplementedError("...")`, wrapped over lines when it would run past 100 columns."""
    message = message or "write this part: the exercise text above says what it must do"
    line = f"{indent}raise NotImplementedError({_literal(message)})"
    if len(line) <= LINE_LENGTH:
        return [line]
    width = LINE_LENGTH - len(indent) - 7  # the inner indent, two quotes and the space at a break
    pieces = textwrap.wrap(message, width, break_long_words=False, break_on_hyphens=False)
    literals = [_literal(piece + " ") for piece in pieces[:-1]] + [_literal(pieces[-1])]
    return [
        f"{indent}raise NotImplementedError(",
        *(f"{indent}    {literal}" for literal in literals),
        f"{indent})",
    ]


def stub_solutions(code: str) -> str:
    """`code` with each marked region replaced by its hints and a stub, indented like its marker."""
    lines: list[str] = []
    todo: list[str] | None = None  # the TODO texts of the region we are in; None outside one
    indent = ""
    for number, line in enumerate(code.split("\n"), 1):
        text = line.strip()
        if text.startswith(BEGIN):
            if todo is not None:
                raise ValueError(f"line {number}: {BEGIN} inside a region; close that one first")
            todo, indent = [], _indent(line)
        elif text.startswith(END):
            if todo is None:
                raise ValueError(f"line {number}: {END} without a {BEGIN} before it")
            lines += _stub(indent, " ".join(todo))
            todo = None
        elif todo is None:
            lines.append(line)
        elif text.startswith(TODO):
            todo.append(text[len(TODO) :].strip())
        elif text.startswith(HINT):
            lines.append(f"{_indent(line)}# {text[len(HINT) :].strip()}")
    if todo is not None:
        raise ValueError(f"a {BEGIN} is never closed: add {END} after the solution")
    return "\n".join(lines)


def _expected_output(cell: Any, source: Path) -> Any:
    """The self-test's stored `7/7 passed`, stripped of the per-check metadata behind it."""
    shown = []
    for output in cell.get("outputs", []):
        text = output.get("data", {}).get("text/plain", output.get("text", ""))
        if text.strip() == EXPECTED:
            kept = copy.deepcopy(output)
            if "metadata" in kept:
                kept["metadata"] = {}
            return kept
        shown.append(text.strip())
    raise ValueError(
        f"{source}: the self-test cell shows {' / '.join(shown) or 'nothing'}, not {EXPECTED}; "
        f"finish the solution, then store its outputs with `course-agent lab execute {source}`"
    )


def write_notebook(nb: Any, path: Path) -> None:
    """Validate and write `nb` as nbformat's stable JSON (sorted keys), one newline at the end."""
    import nbformat

    nbformat.validate(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((nbformat.writes(nb).rstrip("\n") + "\n").encode("utf-8"))


def release(source: Path, dest: Path) -> None:
    """Write the student notebook `dest` from the solution notebook `source`."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    student = nbformat.v4.new_notebook(metadata=copy.deepcopy(NOTEBOOK_METADATA))
    code_cells = 0
    for index, cell in enumerate(nb.cells):
        cell_id = cell.get("id") or f"cell-{index}"  # a pre-4.5 notebook has none: stay stable
        metadata = {key: cell.metadata[key] for key in KEPT_CELL_METADATA if key in cell.metadata}
        if cell.cell_type == "code":
            code_cells += 1
            try:
                code = stub_solutions(cell.source)
            except ValueError as exc:
                raise ValueError(f"{source}, cell {cell_id}: {exc}") from None
            new = nbformat.v4.new_code_cell(code, id=cell_id, metadata=metadata)
            if cell_id == SELFTEST_CELL:
                new.outputs = [_expected_output(cell, source)]
                # nbval checks only cells that ran: give it the count a fresh Run All gives it.
                new.execution_count = code_cells
                if new.outputs[0].get("output_type") == "execute_result":
                    new.outputs[0]["execution_count"] = code_cells
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source, id=cell_id, metadata=metadata)
            if cell.get("attachments"):
                new.attachments = cell.attachments
        else:
            new = nbformat.v4.new_raw_cell(cell.source, id=cell_id, metadata=metadata)
        student.cells.append(new)
    if not any(cell.id == SELFTEST_CELL for cell in student.cells):
        raise ValueError(
            f"{source} has no code cell with id {SELFTEST_CELL!r} to keep the output of"
        )
    write_notebook(student, dest)


def execute_source(source: Path, timeout: float = 120) -> str:
    """Run the solution in a fresh kernel and store its outputs in place; returns `k/7 passed`."""
    import nbformat

    from .grading import read_report, run_notebook

    nb = nbformat.read(source, as_version=4)
    problem = run_notebook(nb, source.parent, timeout)
    if problem:
        raise RuntimeError(f"{source} was left as it was: {problem}")
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata = nbformat.from_dict(copy.deepcopy(NOTEBOOK_METADATA))
    write_notebook(nb, source)
    checks = read_report(nb)
    if checks is None:
        return "no self-test report"
    return f"{sum(bool(check.get('ok')) for check in checks)}/{len(checks)} passed"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent lab",
        description="Maintain the day-three lab from its solution notebook (labs/source/).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    make = commands.add_parser("release", help="write the student notebook DEST from SOURCE")
    make.add_argument("source", type=Path, metavar="SOURCE", help="the solution notebook")
    make.add_argument("dest", type=Path, metavar="DEST", help="the student notebook to write")
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
    return parser


def main_lab(argv: Sequence[str] | None = None) -> int:
    """`course-agent lab release SOURCE DEST` / `lab execute SOURCE`: 0 done, 1 refused, 2 usage."""
    args = build_parser().parse_args(argv)
    if not args.source.is_file():
        print(
            f"course-agent lab: {args.source} is not a file; give the solution notebook, "
            "e.g. labs/source/day03-lab.ipynb",
            file=sys.stderr,
        )
        return 2
    try:
        if args.command == "release":
            release(args.source, args.dest)
            print(f"released {args.dest} from {args.source}")
            return 0
        summary = execute_source(args.source, args.timeout)
    except (ValueError, RuntimeError) as exc:  # nbformat's NotJSONError is a ValueError too
        print(f"course-agent lab: {exc}", file=sys.stderr)
        return 1
    print(f"stored the outputs of {args.source}: {summary}")
    return 0 if summary == EXPECTED else 1
