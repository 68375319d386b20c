"""A class's figures from its rows: scores, failures per check by name, the commonest failures.

Rows are made here as the grader makes them (`row_from_report` on a scorer's JSON). The report must
take the checks' names and count from the rows, group failures that differ only in generated
details, and show itself inline in a notebook (a real kernel) without IPython in course_agent.lab.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lab_class import kernel_env
from nbclient import NotebookClient

from course_agent.lab.grade import GradeRow, grade_class, row_from_report
from course_agent.lab.grade_command import main_grade
from course_agent.lab.report import ClassReport, normalise

NAMES = ["registry", "path boundary", "fragment merging", "truncation"]


def report(failed: dict[int, str], refused: tuple[str, ...] = ()) -> dict:
    """A scorer's JSON: checks 1..4 named NAMES, those in `failed` failing with that reason."""
    checks = [
        {"number": n, "name": name, "ok": n not in failed, "line": f"{name}: {failed.get(n, 'ok')}"}
        for n, name in enumerate(NAMES, 1)
    ]
    return {"checks": checks, "refused": list(refused)}


def row(name: str, failed: dict[int, str], refused: tuple[str, ...] = ()) -> GradeRow:
    return row_from_report(f"/class/{name}.ipynb", report(failed, refused), 1.5)


def unscored(name: str, note: str) -> GradeRow:
    return row_from_report(f"/class/{name}.ipynb", None, 60.0, note)


CLASS = [
    row("ana", {}),
    row("ben", {3: "stream 2 (indexes 1, 2): repeated id 'aB3xQz': you built 'aB3xQzaB3xQz'"}),
    row("cleo", {3: "stream 5 (indexes 7, 9): repeated id 'Zk81pq': you built 'Zk81pqZk81pq'"}),
    row("dev", {3: "drained in arrival order", 4: "the note says 12000 of 20000"}),
    row("eve", {4: "cut 8055 chars, not 8054 (and 3 more of 8 results)"}),
    unscored("fay", "timeout: cell 11 ran over 60 s"),
    unscored("gus", "timeout: cell 16 ran over 60 s"),
    unscored("hal", "not a notebook: JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
    row("ida", {4: "refused"}, ("exercise 3 imports truncate_result from course_agent",)),
]


def test_the_scores_count_every_row_once_with_every_bar_shown() -> None:
    figures = ClassReport.from_rows(CLASS).to_dict()
    assert figures["submissions"] == 9 and figures["scored"] == 6
    assert figures["scores"] == [
        {"score": "0/4", "count": 0},
        {"score": "1/4", "count": 0},
        {"score": "2/4", "count": 1},
        {"score": "3/4", "count": 4},
        {"score": "4/4", "count": 1},
        {"score": "no score", "count": 3},
    ]
    assert figures["full_marks"] == 1 and "refused" not in figures
    assert figures["unscored"] == [
        {"reason": "timeout", "count": 2},
        {"reason": "not a notebook", "count": 1},
    ]


def test_checks_are_named_and_counted_from_the_rows_not_from_the_lab() -> None:
    checks = ClassReport.from_rows(CLASS).to_dict()["checks"]
    assert [(c["number"], c["name"], c["failed"]) for c in checks] == [
        (1, "registry", 0),
        (2, "path boundary", 0),
        (3, "fragment merging", 3),
        (4, "truncation", 3),
    ]
    assert checks[0]["most_common"] is None and checks[0]["top"] == []


def test_failures_that_differ_only_in_generated_details_group_as_one() -> None:
    merging = ClassReport.from_rows(CLASS).checks[2]
    first = merging.top[0]
    assert first.count == 2  # ben's and cleo's: other streams, other random ids
    assert first.pattern == "stream N (indexes N, N): repeated id '…': you built '…'"
    # The example is the first student's line, as they got it, without the check's name.
    assert first.example == CLASS[1].details[0].removeprefix("fragment merging: ")
    assert first.example.startswith("stream 2 (indexes 1, 2): repeated id 'aB3xQz'")
    assert [failure.count for failure in merging.top] == [2, 1]


def test_normalise_blanks_ids_numbers_paths_and_the_more_count_but_not_words() -> None:
    assert normalise("cut 8055 chars, not 8054 (and 3 more of 8 results)") == "cut N chars, not N"
    assert normalise("at 0x7f3a2c1b9e80 in /tmp/course-agent-selftest-x1y2/src") == (
        "at <address> in <tmp>/src"
    )
    assert normalise("""it said "call_a" and 'x': don't append it""") == (
        "it said '…' and '…': don't append it"
    )


def test_the_json_round_trips_and_lists_every_row() -> None:
    figures = ClassReport.from_rows(CLASS, seconds=75.0).to_dict()
    assert json.loads(json.dumps(figures)) == figures
    assert figures["seconds"] == 75.0
    assert figures["rows"][3] == {
        "submission": "/class/dev.ipynb",
        "passed": 2,
        "total": 4,
        "failed": [3, 4],
        "note": "",
        "seconds": 1.5,
        "written": [],  # the main lab has no answer a person reads
    }


def test_a_class_of_two_labs_keeps_each_labs_checks_apart() -> None:
    other = GradeRow("/class/zed.ipynb", 1, 2, (2,), ("extension: no",), 1.0, "", ("hooks", "ext"))
    checks = ClassReport.from_rows([*CLASS, other]).to_dict()["checks"]
    assert [(c["number"], c["name"]) for c in checks] == [
        (1, "hooks"),
        (1, "registry"),
        (2, "ext"),
        (2, "path boundary"),
        (3, "fragment merging"),
        (4, "truncation"),
    ]
    assert [c["failed"] for c in checks] == [0, 0, 1, 0, 3, 3]


ROWS = st.lists(
    st.one_of(
        st.builds(
            lambda name, failed: row(name, {n: f"wrong {n}" for n in failed}),
            st.from_regex(r"[a-z]{1,8}", fullmatch=True),
            st.sets(st.integers(1, len(NAMES))),
        ),
        st.builds(lambda name: unscored(name, "timeout: cell 3 ran over 9 s"), st.just("x")),
    ),
    max_size=40,
)


@given(ROWS)
def test_every_figure_adds_up_to_the_rows(rows: list[GradeRow]) -> None:
    figures = ClassReport.from_rows(rows).to_dict()
    assert sum(score["count"] for score in figures["scores"]) == len(rows)
    assert sum(reason["count"] for reason in figures["unscored"]) == len(rows) - figures["scored"]
    for check in figures["checks"]:
        assert check["failed"] == sum(check["number"] in r.failed for r in rows)
        assert sum(f["count"] for f in check["top"]) <= check["failed"]


def test_grading_without_a_kernel_still_gives_a_report(tmp_path: Path) -> None:
    # Files that are not notebooks never reach a kernel: grade_class runs here in a moment.
    for name in ("a", "b"):
        (tmp_path / f"{name}.ipynb").write_text("{", encoding="utf-8")
    graded = grade_class(tmp_path, jobs=2)
    assert [r["reason"] for r in graded.to_dict()["unscored"]] == ["not a notebook"]
    assert graded.to_dict()["submissions"] == 2
    assert "<svg" in graded._repr_html_()


def test_a_notebook_shows_the_report_inline(tmp_path: Path) -> None:
    """A real kernel: the report as a cell's value displays as HTML, with its charts."""
    rows = ", ".join(
        f"GradeRow({r.submission!r}, {r.passed!r}, {r.total!r}, {r.failed!r}, {r.details!r}, "
        f"1.0, {r.note!r}, {r.checks!r})"
        for r in CLASS
    )
    source = (
        "from course_agent.lab.grade import GradeRow\n"
        "from course_agent.lab.report import ClassReport\n\n"
        f"ClassReport.from_rows([{rows}])"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(
        env=kernel_env(), cwd=str(tmp_path)
    )
    output = nb.cells[0].outputs[0]
    assert output["output_type"] == "execute_result"
    shown = output["data"]["text/html"]
    assert shown.startswith('<div class="ca-report">') and shown.count("<svg") == 2
    assert "fragment merging" in shown and "/class/" not in shown  # names below the class folder
    assert re.search(r"<td>dev\.ipynb</td><td><span>2/4</span></td><td><span>3 4</span>", shown)


def test_the_lab_package_never_imports_ipython() -> None:
    folder = Path(__file__).resolve().parent.parent / "course_agent" / "lab"
    for module in folder.glob("*.py"):
        assert not re.search(r"^\s*(from|import) IPython", module.read_text(), re.M), module


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--report", "missing/report.html", "--report {tmp}/missing/report.html: give a file"),
        ("--json", ".", "--json {tmp}: give a file in a folder that exists"),
        ("--feedback", "file.txt", "--feedback {tmp}/file.txt is a file: give a folder"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture, option: str, value: str, message: str
) -> None:
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "file.txt").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main_grade([str(tmp_path / "a.ipynb"), option, str(tmp_path / value).rstrip("/.")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path) in err
    assert "graded" not in err  # no notebook was run
