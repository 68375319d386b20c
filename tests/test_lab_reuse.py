"""A grade kept for the later steps of one job: taken back only for the same notebook bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_agent.lab.grade_command import main_grade
from course_agent.lab.reuse import KEPT_LIMIT, keep_rows, kept_rows
from course_agent.lab.rows import GradeRow

ROW = GradeRow(
    submission="",
    passed=2,
    total=7,
    failed=(3, 4, 5, 6, 7),
    details=tuple(f'check {n}: in "Exercise 1: merge": not yet' for n in range(3, 8)),
    seconds=1.5,
    checks=("registry", "path boundary", "merging", "feedback", "truncation", "big", "loop"),
    written=(("why", "because"),),
)


def notebook(tmp_path: Path, text: str = '{"cells": []}') -> tuple[Path, GradeRow]:
    path = tmp_path / "lab.ipynb"
    path.write_text(text)
    return path, GradeRow(**{**ROW.__dict__, "submission": str(path)})


def test_a_kept_row_comes_back_whole_for_the_same_notebook(tmp_path: Path) -> None:
    path, row = notebook(tmp_path)
    keep_rows(tmp_path / "kept.json", [path], [row], None)
    assert kept_rows(tmp_path / "kept.json", [path], None) == {path: row}


def test_a_changed_notebook_or_another_lab_is_graded_afresh(tmp_path: Path) -> None:
    path, row = notebook(tmp_path)
    keep_rows(tmp_path / "kept.json", [path], [row], None)
    assert kept_rows(tmp_path / "kept.json", [path], "day03-lab") == {}
    path.write_text('{"cells": [1]}')
    assert kept_rows(tmp_path / "kept.json", [path], None) == {}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        '{"rows": 3}',
        '{"rows": [{"digest": "x"}]}',
        '{"rows": [{"digest": "x", "lab": null, "row": {"passed": "7"}}]}',
        " " * (KEPT_LIMIT + 1),
    ],
    ids=["empty", "not json", "no list", "no row", "a row of another shape", "too long"],
)
def test_a_file_that_is_not_what_keep_rows_writes_keeps_nothing(tmp_path: Path, text: str) -> None:
    path, _ = notebook(tmp_path)
    (tmp_path / "kept.json").write_text(text)
    assert kept_rows(tmp_path / "kept.json", [path], None) == {}
    assert kept_rows(tmp_path / "missing.json", [path], None) == {}


@pytest.mark.parametrize(
    "forged",
    [{"passed": True}, {"passed": 7}, {"failed": (3, 4, 5, 6, 9)}, {"details": ()}],
    ids=["true for a number", "7 with 5 failed", "a check 9 of 7", "failures without lines"],
)
def test_a_kept_row_that_does_not_add_up_is_refused(tmp_path: Path, forged: dict) -> None:
    path, row = notebook(tmp_path)
    keep_rows(tmp_path / "kept.json", [path], [GradeRow(**{**row.__dict__, **forged})], None)
    assert kept_rows(tmp_path / "kept.json", [path], None) == {}


def test_grade_with_reuse_answers_each_check_from_the_kept_row_without_a_kernel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, row = notebook(tmp_path)
    kept = tmp_path / "kept.json"
    keep_rows(kept, [path], [row], None)
    for number, code, line in [(1, 0, "v check 1"), (3, 1, "x check 3")]:
        argv = [str(path), "--check", str(number), "--reuse", str(kept), "--no-sandbox"]
        assert main_grade(argv) == code
        out = capsys.readouterr().out
        assert f"{line} {path}:" in out
        assert "0 submissions graded" in out and f"1 taken from {kept}" in out
