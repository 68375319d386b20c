"""The grades as files: a student column in the grader's CSV, and Canvas's and Moodle's imports."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.lab.grade import GradeRow
from course_agent.lab.gradebook import (
    CANVAS_HEADER,
    MOODLE_HEADER,
    student_id,
    write_csv,
    write_lms,
)
from course_agent.lab.rows import spreadsheet_text


def rows_at(root: Path) -> list[GradeRow]:
    return [
        GradeRow(str(root / "alice" / "day03-lab.ipynb"), 7, 7, (), (), 4.25),
        GradeRow(str(root / "bob" / "day03-lab.ipynb"), 2, 7, (3, 4), ("merging: x", "y: z"), 3.5),
        GradeRow(str(root / "carol" / "day03-lab.ipynb"), None, None, (), (), 15.0, "timeout"),
    ]


def read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.reader(file))


@pytest.mark.parametrize(
    ("path", "roots", "strip", "student"),
    [
        # nbgrader's layout: the grader is given its submitted/ folder
        ("course/submitted/alice/day03/day03-lab.ipynb", ["course/submitted"], "", "alice"),
        # a pattern inside a student's own folder decides nothing (it named a classmate)
        ("subs/eve/submitted/alice/day03/day03-lab.ipynb", ["subs"], "", "eve"),
        ("course/submitted/alice/day03/day03-lab.ipynb", [], "", "day03-lab"),
        # a folder per student below the one given
        ("subs/bob/day03-lab.ipynb", ["subs"], "", "bob"),
        ("subs/bob/work/labs/day03-lab.ipynb", ["subs"], "", "bob"),
        # `gh classroom clone student-repos`: <assignment>-<login>/labs/<notebook>
        ("subs/day03-lab-carol99/labs/day03-lab.ipynb", ["subs"], "day03-lab-", "carol99"),
        ("subs/day03-lab/labs/day03-lab.ipynb", ["subs"], "day03-lab", "day03-lab"),  # not empty
        # a notebook right in the folder given, or given alone: its own name
        ("subs/dave.ipynb", ["subs"], "", "dave"),
        ("subs/dave.ipynb", ["subs/dave.ipynb"], "", "dave"),
    ],
)
def test_the_student_is_told_by_where_the_notebook_lies(
    tmp_path: Path, path: str, roots: list[str], strip: str, student: str
) -> None:
    given_roots = [tmp_path / root for root in roots]
    assert student_id(str(tmp_path / path), given_roots, strip) == student


def test_the_csv_starts_with_the_student_and_keeps_each_failed_line(tmp_path: Path) -> None:
    write_csv(rows_at(tmp_path / "subs"), tmp_path / "grades.csv", [tmp_path / "subs"])
    rows = read(tmp_path / "grades.csv")
    header = ["student", "submission", "passed", "total", "failed", "seconds", "note", "details"]
    assert rows[0] == [*header, "written"]
    bob = str(tmp_path / "subs" / "bob" / "day03-lab.ipynb")
    assert rows[2] == ["bob", bob, "2", "7", "3 4", "3.5", "", "merging: x | y: z", ""]
    assert rows[3][0] == "carol" and rows[3][2:5] == ["", "", ""]


def test_the_canvas_file_is_the_shape_of_canvas_s_gradebook_export(tmp_path: Path) -> None:
    # https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807
    write_lms(rows_at(tmp_path), tmp_path / "c.csv", "canvas", "day03-lab", [tmp_path])
    assert read(tmp_path / "c.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "day03-lab"],
        ["Points Possible", "", "", "", "", "7"],
        ["alice", "", "", "alice", "", "7"],
        ["bob", "", "", "bob", "", "2"],
        ["carol", "", "", "carol", "", ""],  # no score: blank, so Canvas changes nothing
    ]
    assert read(tmp_path / "c.csv")[0][:5] == CANVAS_HEADER


def test_the_moodle_file_has_a_user_a_grade_and_a_feedback_column(tmp_path: Path) -> None:
    # https://docs.moodle.org/en/Grade_import: map "Username" to username, the grade to the item
    write_lms(rows_at(tmp_path), tmp_path / "m.csv", "moodle", "Day 3 lab", [tmp_path])
    assert read(tmp_path / "m.csv") == [
        ["Username", "Day 3 lab", "Feedback"],
        ["alice", "7", "7/7 checks passed"],
        ["bob", "2", "2/7 checks passed; failed checks 3 4"],
        ["carol", "", "no score: timeout"],
    ]
    assert read(tmp_path / "m.csv")[0][:1] == MOODLE_HEADER


def test_an_unknown_lms_is_refused_naming_the_ones_there_are(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="give one of canvas, moodle"):
        write_lms([], tmp_path / "x.csv", "blackboard", "day03-lab")


names = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="/\x00"), min_size=1
)
notes = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(
    students=st.lists(names.filter(lambda n: n not in (".", "..")), min_size=1, max_size=5),
    note=notes,
)
def test_any_name_and_note_read_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, students: list[str], note: str
) -> None:
    # Commas, quotes and newlines in a folder name or a note stay inside their cell; one that
    # starts like a formula reads back with the ' that makes a spreadsheet show it as text.
    root = tmp_path_factory.mktemp("any")
    rows = [GradeRow(str(root / s / "n.ipynb"), None, None, (), (), 1.0, note) for s in students]
    write_csv(rows, root / "g.csv", [root])
    write_lms(rows, root / "m.csv", "moodle", "lab", [root])
    shown = [spreadsheet_text(student) for student in students]
    assert [row[0] for row in read(root / "g.csv")[1:]] == shown
    assert [row[6] for row in read(root / "g.csv")[1:]] == [spreadsheet_text(note)] * len(students)
    assert [row[0] for row in read(root / "m.csv")[1:]] == shown
