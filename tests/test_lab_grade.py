"""`course-agent grade` on a made-up class: honest students, broken ones and cheats, one run.

The whole class is graded once, through the command, two kernels at a time; the tests read its
CSV. A cheat may fail loudly or quietly, but none may reach 7/7, and its row must say why.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from class_mixture import ENDLESS_DRAIN
from headings import EXERCISE_1, EXERCISE_2
from lab_class import RELEASE, SOURCE, kernel_env, solution, solved, submission
from test_selftest import REPLAY

from course_agent.lab.grade import GradeRow, find_notebooks, grade_one
from course_agent.lab.grade_command import main_grade, print_table
from course_agent.lab.notebook_file import LARGEST_NOTEBOOK
from course_agent.lab.strip import NOT_AVAILABLE

TIMEOUT = 15  # per cell: far above the slowest lab cell, the self-test (about a second)
KEY = "sk-grader-probe-0123456789"

FAKE_REPORT = """\
from IPython.display import display

checks = [{"number": n, "ok": True, "line": "fine"} for n in range(1, 8)]
display(
    {"text/plain": "7/7 passed"}, raw=True, metadata={"course_agent/selftest": {"checks": checks}}
)"""

REBIND = """

from course_agent import run_selftest as _real


def run_selftest(**kwargs):  # whatever the self-test cell hands over, grade the package's code
    return _real()"""

IMPORTS = {
    1: "from course_agent import ToolCallAccumulator",
    2: "from course_agent import execute_call",
    3: "from course_agent import truncate_result",
}
SUBCLASS_AND_WRAPPER = {
    1: "import course_agent\n\n\nclass ToolCallAccumulator(course_agent.ToolCallAccumulator):\n"
    "    pass",
    2: "from course_agent import registry as _registry\n\n\n"
    "def execute_call(tools, call, ctx):\n    return _registry.execute_call(tools, call, ctx)",
    3: solution(3),
}


# The grader's cell is in the kernel's input history (In[-1]) while it runs, and the student's code
# runs inside it: this prints a 7/7 report after the grader's old nonce, once, from exercise 3.
FORGE = """
import json as _json, re as _re

_forged = []


def _forge():
    found = _re.search(r"[0-9a-f]{32}", In[-1])
    if found and not _forged:
        _forged.append(found[0])
        checks = [{"number": n, "name": "x", "ok": True, "line": "fine"} for n in range(1, 8)]
        print(found[0], _json.dumps({"checks": checks, "refused": []}))
"""
FORGED = {
    "16-forged-report": FORGE + "\n\ndef truncate_result(result):\n    _forge()\n"
    "    raise NotImplementedError",
    # ... then stops the grader's cell before its own report, or ends it with one named like it.
    "17-forged-report-then-exit": FORGE + "\n\ndef truncate_result(result):\n    _forge()\n"
    "    raise SystemExit",
    "18-exception-named-like-the-report": FORGE
    + "\n\nclass GradeReport(BaseException):\n    pass\n\n\ndef truncate_result(result):\n"
    "    checks = [{'number': n, 'name': 'x', 'ok': True, 'line': 'fine'} for n in range(1, 8)]\n"
    "    raise GradeReport(_json.dumps({'checks': checks, 'refused': []}))",
    # A thread started in the exercise cell prints into whichever cell runs: the grader's too.
    "19-forging-thread": FORGE + "\n\nimport threading, time\n\n\ndef _watch():\n"
    "    while not _forged:\n        _forge()\n        time.sleep(0.01)\n\n\n"
    "threading.Thread(target=_watch, daemon=True).start()\n\n\n"
    "def truncate_result(result):\n    raise NotImplementedError",
}
# A file name that would draw a 7/7 row of its own on the grader's terminal.
EVIL_NAME = "20-link\n01-solved.ipynb  7\u22157    -  \x1b[2K\u202e.ipynb"


def probe(path: Path) -> str:
    """A cell that writes what the kernel sees of its environment and folder to `path`."""
    return (
        "import json, os\n"
        f"with open({str(path)!r}, 'w') as file:\n"
        "    json.dump({'names': sorted(os.environ), 'values': list(os.environ.values()),\n"
        "               'cwd': os.getcwd(), 'files': os.listdir('.')}, file)"
    )


def without(cell_id: str):
    def edit(nb) -> None:
        nb.cells = [cell for cell in nb.cells if cell.get("id") != cell_id]

    return edit


def fake_selftest(nb) -> None:
    cell = next(cell for cell in nb.cells if cell.get("id") == "selftest")
    cell.source, cell.metadata = FAKE_REPORT, {}


def cell_number(cell_id: str) -> int:
    """Where a cell is in the lab, counted from 1 as the grader reports it."""
    ids = [cell.get("id") for cell in nbformat.read(RELEASE, as_version=4).cells]
    return ids.index(cell_id) + 1


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Grade the class once, with `course-agent grade --jobs 2`, keys in the grader's shell."""
    folder = tmp_path_factory.mktemp("class")
    seen = tmp_path_factory.mktemp("probe") / "seen.json"
    answers = solved()
    students = {
        "01-solved": {"exercises": answers},
        "02-starter": {},
        "03-truncation-only": {"exercises": {3: answers[3]}},
        "04-endless-loop": {"exercises": {**answers, 1: answers[1] + ENDLESS_DRAIN}},
        "05-kernel-killed": {"exercises": {**answers, 2: "import os\n\nos._exit(1)"}},
        "06-deleted-definition": {"exercises": {**answers, 2: "# oops"}},
        "08-fake-report": {"extra": [FAKE_REPORT]},
        "09-rebound-selftest": {"exercises": {1: answers[1] + REBIND}},
        "10-edited-selftest": {"edit": fake_selftest},
        "11-package-imports": {"exercises": IMPORTS},
        "12-subclass-and-wrapper": {"exercises": SUBCLASS_AND_WRAPPER},
        "13-deleted-setup": {"exercises": answers, "edit": without("setup")},
        "14-env-probe": {"exercises": answers, "extra": [probe(seen)]},
        "15-silenced": {
            "exercises": answers,
            "extra": ["import io, sys\n\nsys.stdout = io.StringIO()"],
        },
        "22-replayed-answers": {"exercises": {**answers, 3: REPLAY}},
    }
    students |= {name: {"exercises": {3: source}} for name, source in FORGED.items()}
    for name, edits in students.items():
        submission(folder / f"{name}.ipynb", **edits)
    # A link to the solution where the instructor keeps it, and a notebook of 21 MB.
    (folder / f"{EVIL_NAME}").symlink_to(SOURCE)
    padding = " " * (LARGEST_NOTEBOOK + 1_000_000)
    (folder / "21-huge.ipynb").write_text(RELEASE.read_text()[:-2] + padding + "}\n")
    text = RELEASE.read_text()
    (folder / "07-broken-json.ipynb").write_text(text[: len(text) // 2], encoding="utf-8")
    # A key file beside the submissions: the kernels must not start where they can read it.
    (folder / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")

    out = folder.parent / "grades.csv"
    env = kernel_env(
        OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, GITHUB_TOKEN=KEY, aws_secret=KEY, MY_KEY=KEY
    )
    env["TMPDIR"] = str(tmp := tmp_path_factory.mktemp("tmp"))
    command = [sys.executable, "-m", "course_agent", "grade", str(folder)]
    command += ["--timeout", str(TIMEOUT), "--jobs", "2", "--csv", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="", encoding="utf-8") as file:
        rows = {Path(row["submission"]).stem: row for row in csv.DictReader(file)}
    return {
        "table": done.stdout,
        "rows": rows,
        "left": list(tmp.iterdir()),
        "seen": json.loads(seen.read_text()) if seen.exists() else None,
        "folder": folder,
    }


@pytest.mark.parametrize(
    ("name", "passed", "failed"),
    [
        ("01-solved", "7", ""),
        ("02-starter", "2", "3 4 5 6 7"),
        ("03-truncation-only", "3", "3 4 6 7"),
        ("13-deleted-setup", "7", ""),  # the locked setup cell was put back before the run
        ("15-silenced", "7", ""),  # its stdout is gone, but the grade comes in the kernel's reply
        # Each printed a 7/7 report imitating the grader's: only the kernel's reply is read.
        ("16-forged-report", "2", "3 4 5 6 7"),
        ("19-forging-thread", "2", "3 4 5 6 7"),
        # What the kernel raises while answering (SystemExit, an exception named like the old
        # report) is its answer to that check: it fails, the others are judged.
        ("17-forged-report-then-exit", "2", "3 4 5 6 7"),
        ("18-exception-named-like-the-report", "2", "3 4 5 6 7"),
        # The package's answers are not in the grading kernel: imported, subclassed or wrapped,
        # they fail the checks that run them.
        ("11-package-imports", "2", "3 4 5 6 7"),
        ("12-subclass-and-wrapper", "3", "3 4 6 7"),
        ("06-deleted-definition", "4", "4 6 7"),
    ],
)
def test_a_submission_that_runs_gets_its_score_and_failed_checks(
    graded: dict[str, Any], name: str, passed: str, failed: str
) -> None:
    row = graded["rows"][name]
    assert (row["passed"], row["total"], row["failed"], row["note"]) == (passed, "7", failed, "")


def test_the_details_say_why_each_check_failed(graded: dict[str, Any]) -> None:
    details = graded["rows"]["03-truncation-only"]["details"].split(" | ")
    assert len(details) == 4
    assert details[0].startswith("fragment merging: ")


def test_answers_recorded_at_the_default_seed_meet_the_graders_own_seed(
    graded: dict[str, Any],
) -> None:
    # The replay scores 7/7 in the lab's own cell (tests/test_selftest.py pins that limit); the
    # grader draws its own seed, so the recorded answers miss its truncation cases.
    row = graded["rows"]["22-replayed-answers"]
    assert int(row["passed"]) < 7 and "5" in row["failed"].split(), row


@pytest.mark.parametrize("name", ["08-fake-report", "09-rebound-selftest", "10-edited-selftest"])
def test_no_cheat_reaches_seven_and_is_graded_on_its_real_code(
    graded: dict[str, Any], name: str
) -> None:
    row = graded["rows"][name]
    assert row["total"] == "7" and row["note"] == "", row
    real = ("3", "4 5 6 7") if name == "09-rebound-selftest" else ("2", "3 4 5 6 7")
    assert (row["passed"], row["failed"]) == real


def test_rows_say_what_went_wrong_and_where(graded: dict[str, Any]) -> None:
    imported = graded["rows"]["11-package-imports"]["details"].split(" | ")
    assert imported[0] == (f"fragment merging: {EXERCISE_1}: {NOT_AVAILABLE}")
    deleted = graded["rows"]["06-deleted-definition"]["details"].split(" | ")[0]
    assert deleted == (
        f"bad-argument feedback: {EXERCISE_2}: the kernel gave no answer: "
        "NameError: name 'execute_call' is not defined"
    )


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("04-endless-loop", f"timeout: cell {cell_number('check-1')} ran over {TIMEOUT} s"),
        ("05-kernel-killed", f"kernel died in cell {cell_number('exercise-2')}"),
        ("07-broken-json", "not a notebook: JSONDecodeError: "),
        (EVIL_NAME.removesuffix(".ipynb"), "a symbolic link, not a notebook"),
        ("21-huge", "too large: "),
    ],
)
def test_a_submission_that_cannot_finish_gets_a_row_saying_why(
    graded: dict[str, Any], name: str, note: str
) -> None:
    row = graded["rows"][name]
    assert (row["passed"], row["total"], row["failed"]) == ("", "", "")
    assert row["note"].startswith(note)


def test_the_kernels_reach_no_file_outside_their_sandbox(graded: dict[str, Any]) -> None:
    # The probe would write what it sees (keys, folder) beside the class: its sandbox has no such
    # folder. What a sandboxed kernel sees is in tests/test_lab_jail.py.
    assert graded["seen"] is None
    assert graded["rows"]["14-env-probe"]["passed"] == "7"


def test_the_run_goes_on_to_the_end_and_prints_the_table(graded: dict[str, Any]) -> None:
    lines = graded["table"].splitlines()
    assert lines[0].split() == ["submission", "score", "failed", "seconds", "note"]
    assert len(lines) == 1 + 22 + 2  # header, the class, then the total and where the CSV went
    assert "22 submissions graded in" in lines[-2]
    # The file name that holds a newline, an ANSI escape and a right-to-left mark draws no row.
    evil = next(line for line in lines if line.startswith(str(graded["folder"] / "20-link")))
    assert "\\n01-solved.ipynb  7\u22157    -  \\x1b[2K\\u202e.ipynb" in evil
    assert not any("\x1b" in line or "\u202e" in line for line in lines)
    starter = next(line for line in lines if "02-starter" in line)
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
        (["{folder}", "--lab", "day04"], "invalid choice: 'day04'"),
        (["{folder}", "--lms", "blackboard", "x.csv"], "--lms blackboard: give one of canvas"),
        (["{folder}", "--lms", "canvas", "/no/such/dir/x.csv"], "--lms /no/such/dir/x.csv: give"),
    ],
)
def test_bad_usage_is_refused_before_any_kernel_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture, argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main_grade([arg.format(folder=tmp_path) for arg in argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_notebook_of_no_lab_gets_a_row_saying_so_without_a_kernel(tmp_path: Path) -> None:
    cells = [nbformat.v4.new_code_cell("x = 1", id="mine")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "mine.ipynb")
    row = grade_one(tmp_path / "mine.ipynb", timeout=5)
    assert (row.passed, row.total) == (None, None)
    assert row.note == "not a lab: none of the cells of day03-lab or day03-extensions; give --lab"


def test_a_solved_extension_lab_under_the_main_labs_name_gets_the_main_labs_score(
    tmp_path: Path,
) -> None:
    # The red team's: Classroom detected the lab from the cells, so a friend's solved extension
    # lab saved as labs/day03-lab.ipynb scored 7/7; the workflow now says `--lab day03-lab`.
    notebook = tmp_path / "day03-lab.ipynb"
    notebook.write_bytes((SOURCE.parent / "day03-extensions.ipynb").read_bytes())
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_agent", "grade", str(notebook), "--lab", "day03-lab"]
    done = subprocess.run(
        [*command, "--csv", str(out)], env=kernel_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(newline="", encoding="utf-8") as file:
        [row] = list(csv.DictReader(file))
    assert (row["passed"], row["total"], row["failed"]) == ("2", "7", "3 4 5 6 7")
