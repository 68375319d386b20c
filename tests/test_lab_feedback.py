"""Feedback per student: the score, each failed check's message, the one cell to look at; nothing
of another student's, no key, and no markup from a submission (rendered by a real Markdown parser).

Rows come from the package's scorer run in this process on real notebooks (tests/class_mixture.py),
through the same `row_from_report` as after a kernel.
"""

from __future__ import annotations

from pathlib import Path

import mistune
import nbformat
import pytest
from class_mixture import exercises, score_without_kernel
from lab_class import solved, submission
from test_lab_report_html import parsed
from wrong_implementations import RIGHT

from course_agent.lab.feedback import feedback_text, write_feedback
from course_agent.lab.grade import GradeRow
from course_agent.lab.restore import released_path

KEY = "sk-proj-FAKE0123456789abcdefXYZ"
MARKER = "dmitri-7781"  # something only the leaky student's notebook holds
# Exercise 1 with a push that raises a message holding a key and the student's own data.
LEAKY = RIGHT[1].replace(
    "    def push(self, delta: ToolCallDelta) -> None:\n",
    "    def push(self, delta: ToolCallDelta) -> None:\n"
    f"        raise ValueError('{KEY} for {MARKER}')\n",
)


@pytest.fixture(scope="module")
def reference():
    return nbformat.read(released_path(), as_version=4)


def graded(path: Path, kind: str, reference, source: dict[int, str] | None = None) -> GradeRow:
    """Write a `kind` of student at `path` (or one with these exercise cells), and grade it."""
    if kind != "broken JSON":
        submission(path, exercises=exercises(kind) if source is None else source)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"cells": [', encoding="utf-8")
    return score_without_kernel(path, kind, reference, timeout=60)


def test_the_starter_gets_every_failed_check_with_its_message_and_cell(tmp_path, reference):
    text = feedback_text(graded(tmp_path / "ben.ipynb", "starter", reference), reference)
    assert text.startswith("# Day 3 lab: the tool protocol: your feedback\n")
    assert "Submission: `ben.ipynb`" in text and "Score: **2/7** checks passed." in text
    sections = text.split("### ")[1:]
    assert [section.split("\n")[0] for section in sections] == [
        "Check 3, fragment merging",
        "Check 4, bad-argument feedback",
        "Check 5, truncation",
        "Check 6, big file",
        "Check 7, offline loop",
    ]
    todo = "write this part: the TODO comment above says what it must do"
    assert f"```text\n{todo}\n```" in sections[0]
    assert "Look at: cell 10 of your notebook, under *Exercise 1: merge" in (sections[0])
    assert "cell 16 of your notebook" in sections[2]
    # Check 6 runs exercises 2 and 3; it points at the first whose own check failed too.
    assert "Look at: cell 13 of your notebook" in sections[3]


def test_a_wrong_answer_points_at_its_own_cell_even_for_the_combined_checks(tmp_path, reference):
    row = graded(tmp_path / "x.ipynb", "wrong: truncation keeps only the head", reference)
    assert row.failed == (5, 6)
    text = feedback_text(row, reference)
    assert text.count("Look at: cell 16 of your notebook") == 2
    assert "The last 3200 chars (the tail) come after the note as they are" in text


def test_an_imported_answer_is_a_failed_check_not_a_refusal(tmp_path, reference):
    text = feedback_text(graded(tmp_path / "r.ipynb", "imported: exercise 2", reference), reference)
    assert "Refused" not in text and "Check 4, bad-argument feedback" in text
    assert "not available while grading" in text
    assert "Look at: cell 13 of your notebook" in text


def test_a_timeout_names_the_cell_that_ran_over_and_its_section(tmp_path, reference):
    text = feedback_text(graded(tmp_path / "t.ipynb", "endless loop", reference), reference)
    assert "Score: **none**" in text and "timeout: cell 11 ran over 60 s" in text
    assert "Look at: cell 11 of your notebook, under *Exercise 1: merge" in text


def test_a_broken_file_and_full_marks(tmp_path, reference):
    broken = feedback_text(graded(tmp_path / "b.ipynb", "broken JSON", reference), reference)
    assert "not a notebook: JSONDecodeError" in broken and "Look at: the file itself" in broken
    solved = feedback_text(graded(tmp_path / "s.ipynb", "solved", reference), reference)
    assert "Score: **7/7**: every check passed. Nothing to fix." in solved


def test_one_file_per_submission_mirrors_the_class_folder(tmp_path, reference):
    # nbgrader's layout: every student's notebook has the same name, in a folder of their own.
    rows = [
        graded(tmp_path / "in" / name / "day03-lab.ipynb", kind, reference)
        for name, kind in [("ana", "solved"), ("ben", "starter")]
    ]
    written = write_feedback(rows, tmp_path / "out", reference, keys=[])
    assert written == [tmp_path / "out/ana/day03-lab.md", tmp_path / "out/ben/day03-lab.md"]
    assert "2/7" in written[1].read_text() and "7/7" in written[0].read_text()


def test_no_file_holds_another_students_data_or_any_key(tmp_path, reference):
    students = {"ana": "solved", "ben": "starter", "leaky": "leaky", "dee": "endless loop"}
    rows = [
        graded(tmp_path / "in" / f"{name}.ipynb", kind, reference, {**solved(), 1: LEAKY})
        if kind == "leaky"
        else graded(tmp_path / "in" / f"{name}.ipynb", kind, reference)
        for name, kind in students.items()
    ]
    assert KEY in " ".join(rows[2].details)  # the scorer's row still holds it: only the grader cuts
    files = write_feedback(rows, tmp_path / "feedback", reference, [KEY])
    written = {path.stem: path.read_text() for path in files}
    assert set(written) == set(students)
    assert all(KEY not in text for text in written.values())
    assert f"[redacted] for {MARKER}" in written["leaky"]  # the student's own data stays theirs
    for name, text in written.items():
        others = set(students) - {name}
        assert not any(f"{other}.ipynb" in text for other in others), name
        assert name == "leaky" or MARKER not in text, name


def test_markup_in_a_name_or_message_is_text_in_any_markdown_viewer(tmp_path, reference):
    evil = "<img src=x onerror=alert(1)>`x`*y*"
    message = "fragment merging: </pre>```\n<script>alert(1)</script>\n```` [a](https://e.x)"
    checks = ("registry", "path boundary", "fragment merging")
    row = GradeRow(str(tmp_path / f"{evil}.ipynb"), 2, 3, (3,), (message,), 1.0, "", checks)
    text = feedback_text(row, reference)
    html = mistune.html(text)  # a renderer that lets raw HTML through, as some LMSes do
    tags = {tag for tag, _ in parsed(html).tags}
    assert tags <= {"h1", "h2", "h3", "p", "code", "pre", "strong", "em"}, tags
    assert "<script>" not in html and "<img" not in html and "<a " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_each_labs_feedback_is_titled_as_its_own_lab(tmp_path):
    # Issue 33: an extension lab's feedback was titled "Day 3 lab: the tool protocol".
    import shutil

    from course_agent.lab.labs import LABS

    rows = []
    for lab in LABS.values():
        path = tmp_path / "class" / lab.name / "ada.ipynb"
        path.parent.mkdir(parents=True)
        shutil.copy(lab.released, path)
        rows.append(GradeRow(str(path), 0, 7, (3,), ("a: b",), 1.0, checks=("a", "b", "c")))
    written = write_feedback(rows, tmp_path / "feedback", keys=[])
    titles = [path.read_text(encoding="utf-8").splitlines()[0] for path in written]
    assert titles == [
        "# Day 3 lab: the tool protocol: your feedback",
        "# Day 3 extension lab: design a tool, guard the boundary, bound the tools, break the "
        "merge: your feedback",
    ]


def test_the_place_a_line_names_is_cut_and_said_once_under_look_at(tmp_path, reference):
    row = graded(tmp_path / "ben.ipynb", "starter", reference)
    assert row.details[0].startswith('fragment merging: in "Exercise 1: merge streamed fragments')
    text = feedback_text(row, reference)
    assert 'in "Exercise 1' not in text and "(cell `" not in text and "(id `" not in text
