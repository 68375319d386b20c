"""`course-agent grade` on a made-up class generated from the lab: one kernel per submission."""

from __future__ import annotations

import contextlib
import csv
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

import course_agent
from course_agent.grading import (
    GradeRow,
    find_notebooks,
    main_grade,
    print_table,
    read_report,
    write_csv,
)

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "labs" / "source" / "day03-lab.ipynb"
RELEASE = REPO / "labs" / "day03-lab.ipynb"
EXERCISES = ["exercise-1", "exercise-2", "exercise-3"]
TIMEOUT = 15  # per cell: far above the slowest lab cell, the self-test (about a second)

ENDLESS_DRAIN = """

def endless_drain(self):
    while True:  # a student's loop that never ends
        pass


ToolCallAccumulator.drain = endless_drain"""


def solution(cell_id: str) -> str:
    """The solution of one exercise as a student would write it: no markers."""
    cell = next(cell for cell in nbformat.read(SOURCE, as_version=4).cells if cell.id == cell_id)
    lines = cell.source.splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("###"))


def submit(folder: Path, name: str, edits: dict[str, Callable[[str], str]]) -> Path:
    """The starter with some cells edited by a (made-up) student, saved as `name`."""
    nb = nbformat.read(RELEASE, as_version=4)
    for cell in nb.cells:
        if cell.id in edits:
            cell.source = edits[cell.id](cell.source)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def cell_number(cell_id: str) -> int:
    """Where a cell is in the lab, counted from 1 as the grader reports it."""
    ids = [cell.id for cell in nbformat.read(RELEASE, as_version=4).cells]
    return ids.index(cell_id) + 1


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Grade a made-up class once, through the command, two notebooks at a time."""
    folder = tmp_path_factory.mktemp("class")
    solve = {cell_id: (lambda _, cell_id=cell_id: solution(cell_id)) for cell_id in EXERCISES}
    submit(folder, "1-solved", solve)
    submit(folder, "2-starter", {})
    submit(folder, "3-truncation-only", {"exercise-3": solve["exercise-3"]})
    submit(
        folder,
        "4-endless-loop",
        {**solve, "exercise-1": lambda _: solution("exercise-1") + ENDLESS_DRAIN},
    )
    submit(folder, "5-kernel-killed", {**solve, "exercise-2": lambda _: "import os\n\nos._exit(1)"})
    submit(folder, "6-deleted-definition", {**solve, "exercise-2": lambda _: "# oops"})
    text = RELEASE.read_text()
    (folder / "7-broken-json.ipynb").write_text(text[: len(text) // 2], encoding="utf-8")

    out, table = folder / "grades.csv", io.StringIO()
    with pytest.MonkeyPatch.context() as env, contextlib.redirect_stdout(table):
        # The kernels start in the class folder: make the package importable there (installed
        # or not), and keep what they leave in temporary folders in this test's.
        package_root = str(Path(course_agent.__file__).resolve().parent.parent)
        env.setenv("PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
        env.setenv("TMPDIR", str(tmp := tmp_path_factory.mktemp("tmp")))
        argv = [str(folder), "--timeout", str(TIMEOUT), "--jobs", "2", "--csv", str(out)]
        code = main_grade(argv)
    with out.open(newline="", encoding="utf-8") as file:
        rows = {Path(row["submission"]).stem: row for row in csv.DictReader(file)}
    return {"code": code, "table": table.getvalue(), "rows": rows, "left": list(tmp.iterdir())}


@pytest.mark.parametrize(
    ("name", "passed", "failed"),
    [
        ("1-solved", "7", ""),
        ("2-starter", "2", "3 4 5 6 7"),
        ("3-truncation-only", "3", "3 4 6 7"),
    ],
)
def test_a_submission_that_runs_gets_its_score_and_failed_checks(
    graded: dict[str, Any], name: str, passed: str, failed: str
) -> None:
    row = graded["rows"][name]
    assert (row["passed"], row["total"], row["failed"], row["note"]) == (passed, "7", failed, "")


def test_the_details_say_why_each_check_failed(graded: dict[str, Any]) -> None:
    details = graded["rows"]["3-truncation-only"]["details"]
    assert details.startswith("fragment merging: exercise 1: create the state that push fills")
    assert details.count(" | ") == 3


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("4-endless-loop", f"timeout: cell {cell_number('check-1')} ran over {TIMEOUT} s"),
        ("5-kernel-killed", f"kernel died in cell {cell_number('exercise-2')}"),
        ("6-deleted-definition", "no self-test report: NameError: name 'execute_call' is not"),
        ("7-broken-json", "not a notebook: JSONDecodeError: "),
    ],
)
def test_a_submission_that_cannot_finish_gets_a_row_saying_why(
    graded: dict[str, Any], name: str, note: str
) -> None:
    row = graded["rows"][name]
    assert (row["passed"], row["total"], row["failed"]) == ("", "", "")
    assert row["note"].startswith(note)


def test_the_run_goes_on_to_the_end_and_prints_the_table(graded: dict[str, Any]) -> None:
    assert graded["code"] == 0
    lines = graded["table"].splitlines()
    assert lines[0].split() == ["submission", "score", "failed", "seconds", "note"]
    assert len(lines) == 1 + 7 + 2  # header, the class, then the total and where the CSV went
    assert "7 submissions graded in" in lines[-2]
    starter = next(line for line in lines if "2-starter" in line)
    assert starter.split()[1:4] == ["2/7", "3", "4"]


def test_no_submission_leaves_temporary_files_behind(graded: dict[str, Any]) -> None:
    # Not even the ones whose kernel was killed before it could clean up its sandbox.
    assert graded["left"] == []


ROWS = [
    GradeRow("alice.ipynb", 7, 7, (), (), 4.25),
    GradeRow("bob.ipynb", 2, 7, (3, 4), ("fragment merging: x", "feedback: y"), 3.5),
    GradeRow("carol.ipynb", None, None, (), (), 15.0, "timeout: cell 11 ran over 15 s"),
]


def test_the_table_aligns_its_columns() -> None:
    out = io.StringIO()
    print_table(ROWS, out)
    assert out.getvalue().splitlines() == [
        "submission   score  failed  seconds  note",
        "alice.ipynb  7/7    -           4.2",
        "bob.ipynb    2/7    3 4         3.5",
        "carol.ipynb  -      ?          15.0  timeout: cell 11 ran over 15 s",
    ]


def test_the_csv_has_one_row_per_submission(tmp_path: Path) -> None:
    write_csv(ROWS, tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["submission", "passed", "total", "failed", "seconds", "note", "details"]
    assert rows[2] == ["bob.ipynb", "2", "7", "3 4", "3.5", "", "fragment merging: x | feedback: y"]
    assert rows[3][1:4] == ["", "", ""]


def report_output(checks: Any) -> Any:
    return nbformat.v4.new_output(
        "display_data",
        data={"text/plain": "k/7 passed"},
        metadata={"course_agent/selftest": {"checks": checks}},
    )


def test_read_report_takes_the_last_report_and_ignores_other_outputs() -> None:
    v4 = nbformat.v4
    first = [{"number": 1, "ok": False, "line": "registry: x"}]
    last = [{"number": 1, "ok": True, "line": "registry lists glob, grep, read_file"}]
    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell("a", outputs=[report_output(first)]),
            v4.new_markdown_cell("text"),
            v4.new_code_cell("b", outputs=[v4.new_output("stream", text="x"), report_output(last)]),
        ]
    )
    assert read_report(nb) == last
    assert read_report(v4.new_notebook(cells=[v4.new_code_cell("c")])) is None


@pytest.mark.parametrize(
    "checks", [[{"number": "1", "ok": True, "line": "x"}], [{"ok": True}], ["7/7"], {"1": True}]
)
def test_a_report_of_another_shape_counts_as_none(checks: Any) -> None:
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[v4.new_code_cell("a", outputs=[report_output(checks)])])
    assert read_report(nb) is None


def test_a_folder_stands_for_its_notebooks_without_checkpoints(tmp_path: Path) -> None:
    for name in ["b/2.ipynb", "a.ipynb", "b/.ipynb_checkpoints/2-checkpoint.ipynb", "notes.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert find_notebooks([tmp_path]) == [tmp_path / "a.ipynb", tmp_path / "b" / "2.ipynb"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.ipynb"], "missing.ipynb does not exist"),
        (["{folder}"], "no *.ipynb found"),
        (["{folder}", "--jobs", "0"], "--jobs at least 1"),
        (["{folder}", "--timeout", "0"], "--timeout must be above 0"),
    ],
)
def test_bad_usage_is_refused_before_any_kernel_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main_grade([arg.format(folder=tmp_path) for arg in argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
