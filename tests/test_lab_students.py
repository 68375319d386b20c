"""One row per student, told by where the notebook lies below the folder given (lab/students.py),
and no cell of the CSV, the LMS files or the report's tables that a spreadsheet would run."""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.lab.grade_command import main_grade
from course_agent.lab.report import ClassReport
from course_agent.lab.rows import FORMULA_START, GradeRow
from course_agent.lab.students import one_per_student

NAMES = ["day03-lab.ipynb", "day03-extensions.ipynb"]
# A folder name a student (or `gh classroom clone`) could give: any character a file name takes.
folder_names = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="/\x00"),
    min_size=1,
    max_size=12,
).filter(lambda name: name not in (".", "..") and len(name.encode()) < 200)
# What a student's folder holds: the lab, scratch copies, a nested copy, a classmate's pattern.
files = st.lists(
    st.sampled_from(
        [
            "day03-lab.ipynb",
            "scratch.ipynb",
            "day03-lab (1).ipynb",
            "old/day03-lab.ipynb",
            "submitted/mallory/day03/day03-lab.ipynb",
            "=HYPERLINK(1).ipynb",
        ]
    ),
    min_size=1,
    max_size=4,
    unique=True,
)
contents = st.sampled_from(["{", "", "not json", '{"cells": []}', "=1+1", "\x00\xff"])


def starts_like_formula(cell: str) -> bool:
    return cell.lstrip(" ").startswith(FORMULA_START)


def make_class(root: Path, students: dict[str, list[str]], content: str) -> None:
    for student, names in students.items():
        for name in names:
            path = root / student / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8", errors="surrogateescape")


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(folder_names, files, min_size=1, max_size=4))
def test_one_submission_per_student_folder_named_by_the_folder(
    students: dict[str, list[str]],
) -> None:
    root = Path("/nowhere/subs")
    paths = sorted(root / student / name for student, names in students.items() for name in names)
    chosen = one_per_student(paths, [root], NAMES)
    assert sorted(s.student for s in chosen) == sorted(students)  # never mallory, once each
    for submission in chosen:
        names = students[submission.student]
        if submission.path is None:
            assert not {"day03-lab.ipynb", "old/day03-lab.ipynb"} & set(names)
            assert submission.note.startswith("not graded")
        else:
            assert submission.path.parent.parts[: len(root.parts) + 1] == (
                *root.parts,
                submission.student,
            )
            if len(names) > 1:
                assert submission.path.name == "day03-lab.ipynb"  # the top one, by name
                assert submission.path == root / submission.student / "day03-lab.ipynb" or (
                    "day03-lab.ipynb" not in names
                )
                assert submission.note.startswith(f"also in {submission.student}'s folder")


def test_a_classmate_s_path_inside_a_folder_names_nobody() -> None:
    root = Path("/nowhere/subs")
    paths = [root / "eve" / "submitted" / "alice" / "day03" / "day03-lab.ipynb"]
    assert [s.student for s in one_per_student(paths, [root], NAMES)] == ["eve"]


def test_classroom_s_prefix_is_cut_from_the_folder_name() -> None:
    root = Path("/nowhere/repos")
    paths = [root / "day03-lab-carol99" / "labs" / "day03-lab.ipynb"]
    chosen = one_per_student(paths, [root], NAMES, strip="day03-lab-")
    assert [s.student for s in chosen] == ["carol99"]


class Cells(HTMLParser):
    """The text of each <td> of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "td":
            self.depth += 1
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.cells[-1] += data


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.dictionaries(folder_names, files, min_size=1, max_size=3), contents)
def test_any_class_gives_one_row_per_folder_and_no_cell_a_spreadsheet_runs(
    tmp_path_factory: pytest.TempPathFactory, students: dict[str, list[str]], content: str
) -> None:
    work = tmp_path_factory.mktemp("class")
    make_class(work / "subs", students, content)
    out = {name: work / name for name in ["g.csv", "c.csv", "m.csv", "r.html"]}
    code = main_grade(
        [
            str(work / "subs"),
            "--no-sandbox",  # no kernel starts: none of these files is a lab
            "--lab",
            "day03-lab",
            "--csv",
            str(out["g.csv"]),
            "--lms",
            "canvas",
            str(out["c.csv"]),
            "--report",
            str(out["r.html"]),
        ]
    )
    assert code == 0
    main_grade([str(work / "subs"), "--no-sandbox", "--lms", "moodle", str(out["m.csv"])])
    grades = list(csv.reader(io.StringIO(out["g.csv"].read_bytes().decode(), newline="")))
    assert len(grades) - 1 == len(students)  # one row per student folder
    # A name starting like a formula is shown with the ' that makes it text: the same student.
    assert sorted(row[0].removeprefix("'") for row in grades[1:]) == sorted(students)
    for name in ["g.csv", "c.csv", "m.csv"]:
        text = out[name].read_bytes().decode()
        for row in csv.reader(io.StringIO(text, newline="")):
            assert not any(starts_like_formula(cell) for cell in row), (name, row)
    page = Cells()
    page.feed(out["r.html"].read_text(encoding="utf-8"))
    assert page.cells
    assert not [cell for cell in page.cells if cell != "-" and starts_like_formula(cell)]


def test_a_report_row_from_a_formula_note_is_text(tmp_path: Path) -> None:
    name = "=cmd|' -C calc'!A0.ipynb"
    rows = [GradeRow(str(tmp_path / name), None, None, (), (), 1.0, "@SUM(1)")]
    page = Cells()
    page.feed(ClassReport.from_rows(rows, 1.0).html())
    assert "'@SUM(1)" in page.cells and f"'{name}" in page.cells
