"""Notebooks of plain code cells for the kernel tests, and what a run's cell printed.

`notebook("x = 1", "print(x)")` is a notebook of those cells; `streamed(cell)`, after a run, is
all its cell printed, however the kernel split it into stream outputs.
"""

from __future__ import annotations

from typing import Any

import nbformat

__all__ = ["notebook", "streamed"]


def notebook(*sources: str) -> Any:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def streamed(cell: Any) -> str:
    """What a cell printed: a busy kernel may flush one print in more than one stream output."""
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
