"""The answers a person reads: listed with their text in every output, never scored."""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
from extension_lab import ANSWER, RELEASE

from course_agent.lab.feedback import feedback_text
from course_agent.lab.grade import GradeRow
from course_agent.lab.gradebook import write_csv
from course_agent.lab.labs import LABS
from course_agent.lab.release import TEXT_STUB
from course_agent.lab.report import ClassReport
from course_agent.lab.written import LONGEST_ANSWER, STUB, written_answers

TITLE = "exercise 4: what merging must not assume"


def answered(text: str | None) -> nbformat.NotebookNode:
    """The extension lab's starter with `text` in its answer cell (None: the cell deleted)."""
    nb = nbformat.read(RELEASE, as_version=4)
    if text is None:
        nb.cells = [cell for cell in nb.cells if cell.get("id") != ANSWER]
    else:
        next(cell for cell in nb.cells if cell.get("id") == ANSWER).source = text
    return nb


def test_the_starter_s_stub_and_a_missing_cell_are_no_answer() -> None:
    assert STUB == TEXT_STUB
    lab = LABS["day03-extensions"]
    assert written_answers(nbformat.read(RELEASE, as_version=4), lab) == ((TITLE, ""),)
    assert written_answers(answered(None), lab) == ((TITLE, ""),)
    assert written_answers(answered("  \n"), lab) == ((TITLE, ""),)


def test_an_answer_is_listed_as_written_and_a_long_one_is_cut_saying_so() -> None:
    lab = LABS["day03-extensions"]
    sentence = "It always starts at 1, in arrival order."  # false: a person sees that
    assert written_answers(answered(f"\n{sentence}\n"), lab) == ((TITLE, sentence),)
    [(_, long)] = written_answers(answered("x" * (LONGEST_ANSWER + 500)), lab)
    assert long == "x" * LONGEST_ANSWER + "… (500 more characters not shown)"


def test_the_main_lab_has_none_to_read() -> None:
    assert written_answers(nbformat.read(RELEASE, as_version=4), LABS["day03-lab"]) == ()


ROWS = [
    GradeRow(
        "a/x.ipynb", 7, 7, (), (), 1.0, written=((TITLE, "the index <b>may</b> start anywhere"),)
    ),
    GradeRow("b/x.ipynb", 0, 7, tuple(range(1, 8)), ("d",) * 7, 1.0, written=((TITLE, ""),)),
]


def test_the_report_lists_each_answer_with_its_text_and_scores_none() -> None:
    report = ClassReport.from_rows(ROWS)
    rows = report.to_dict()["rows"]
    assert rows[0]["written"] == [{"title": TITLE, "text": "the index <b>may</b> start anywhere"}]
    assert (rows[0]["passed"], rows[0]["total"]) == (7, 7)  # the checks alone
    page = report.html()
    assert "Written answers: yours to read and grade" in page
    assert "the index &lt;b&gt;may&lt;/b&gt; start anywhere" in page and "<b>may" not in page
    assert "no answer" in page


def test_the_feedback_shows_the_student_their_answer_and_who_grades_it() -> None:
    reference = nbformat.read(LABS["day03-extensions"].released, as_version=4)
    text = feedback_text(ROWS[0], reference)
    assert f"## Your written answer: {TITLE}" in text
    assert "the index <b>may</b> start anywhere" in text
    assert "Your instructor reads it and grades it" in text
    assert "You left it empty." in feedback_text(ROWS[1], reference)


def test_the_csv_has_the_answers_in_their_own_column(tmp_path: Path) -> None:
    write_csv(ROWS, tmp_path / "g.csv")
    with (tmp_path / "g.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert rows[0]["written"] == f"{TITLE}: the index <b>may</b> start anywhere"
    assert rows[1]["written"] == f"{TITLE}: (no answer)"
