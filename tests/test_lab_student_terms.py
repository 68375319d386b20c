"""Whatever a kernel sends, its row says what happened in the student's terms: a signed message of
a shape no kernel sends stops the run in the cell that sent it, never "could not run" (which
the feedback reads as the grader's failure to start Python)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from lab_class import submission

from course_agent.lab.feedback import feedback_text
from course_agent.lab.grade import grade_one
from course_agent.lab.jail import sandbox_problem
from course_agent.lab.restore import released_path

SEND = """k = get_ipython().kernel
k.session.send(k.iopub_socket, {kind!r}, {content}, parent=k.get_parent('shell'))
import time; time.sleep(1)"""
SHAPES = {
    "a stream without its name": ("stream", "{'text': 'x'}"),
    "display data without data": ("display_data", "{'metadata': {}}"),
    "an error without its name": ("error", "{'evalue': 'x', 'traceback': []}"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_a_malformed_message_stops_the_run_in_its_cell(tmp_path: Path, shape: str) -> None:
    kind, content = SHAPES[shape]
    path = submission(tmp_path / "day03-lab.ipynb", extra=[SEND.format(kind=kind, content=content)])
    row = grade_one(path, 30, sandbox=not sandbox_problem())
    assert not row.note.startswith("could not run"), row.note
    if row.passed is None:  # stopped, in the student's cell (nbclient may also take it whole)
        assert row.note.startswith("stopped: the kernel sent a message no kernel sends (")
        last = len(nbformat.read(path, as_version=4).cells)  # the student's cell, counted from 1
        assert row.note.endswith(f", in cell {last}"), row.note
        text = feedback_text(row, nbformat.read(released_path(), as_version=4))
        assert "could not start Python" not in text and f"cell {last} of your notebook" in text
