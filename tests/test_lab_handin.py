"""The hand-in: nbval compares a fresh run with the release's expectation, whatever the file stores.

Each made-up student is handed in with the README's command, in a copy of labs/ (its conftest.py
and sanitize file), two at a time; every assert below reads the one fixture run.
"""

from __future__ import annotations

import inspect
import re
import shutil
import site
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from headings import EXERCISE_1, HEADINGS
from lab_class import (
    HANDIN,
    LABS,
    NOT_THE_STUDENTS,
    RELEASE,
    SOURCE,
    hand_in,
    kernel_env,
    saved_output,
    solved,
    submission,
)
from nbval.plugin import get_sanitize_patterns

from course_agent import truncate
from course_agent.lab.jail import sandbox_problem

# Each hand-in or grade here starts kernels (a hand-in two: nbval's and the judge's); on a
# shared, loaded machine a module's fixture takes minutes, far from the suite's 120 s default.
pytestmark = pytest.mark.timeout(600)

REPO = LABS.parent
KEY = "sk-handin-probe-0123456789"

FAKE_DISPLAY = """

from IPython.display import display


def show_report(report):  # the self-test cell's old display
    display({"text/plain": "7/7 passed"}, raw=True)


def show_selftest(*args, **kwargs):  # and the new one
    display({"text/plain": "7/7 passed"}, raw=True)


from course_agent import run_selftest as _real


def run_selftest(**kwargs):
    return _real()
"""

PROBE_ENV = """\
import os


leaked = sorted(n for n in os.environ if n.upper().endswith(("_API_KEY", "_TOKEN", "_SECRET")))
assert not leaked, f"the kernel sees {leaked}"
assert "sk-handin-probe" not in repr(dict(os.environ)), "a key's value reached the kernel"
"""


# nbval's own kernel, jailed: the pytest process's /proc, site-packages and the network are out of
# its reach (docs/sandbox.md), and the notebook's folder is its one writable place.
PROBE_SANDBOX = """\
import os, site, socket


others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) > 4]
assert len(others) < 10, f"the kernel sees {len(others)} processes: {others[:20]}"
for folder in site.getsitepackages():
    try:
        open(os.path.join(folder, "_course_agent_probe.py"), "w").close()
    except OSError:
        pass
    else:
        raise AssertionError(f"the kernel could write into {folder}")
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
except OSError:
    pass
else:
    raise AssertionError("the kernel reached the network")
open("written-by-the-kernel.txt", "w").close()
"""


def delete_cell(cell_id: str):
    def edit(nb) -> None:
        nb.cells = [cell for cell in nb.cells if cell.get("id") != cell_id]

    return edit


def replace_cell(cell_id: str, source: str):
    def edit(nb) -> None:
        cell = next(cell for cell in nb.cells if cell.get("id") == cell_id)
        cell.source = source
        cell.metadata = {}  # a student who unlocked it first

    return edit


FAKE_SELFTEST = (
    'from IPython.display import display\n\ndisplay({"text/plain": "7/7 passed"}, raw=True)'
)
IMPORTS = {
    1: "from course_agent import ToolCallAccumulator",
    2: "from course_agent import execute_call",
    3: "from course_agent import truncate_result",
}
PASTED = inspect.getsource(truncate.truncate_result)
# The package's own files, found from the editable install's finder and executed: a grading
# kernel outside the sandbox reaches them (the hand-in's judge ran unsandboxed until this test).
READ_FILES = """
import ast, glob, importlib.util, os, re, site, sys

def real(module, name):
    for folder in site.getsitepackages():
        for finder in glob.glob(os.path.join(folder, "__editable__*finder.py")):
            found = re.search(r"MAPPING[^=]*=\\s*(\\{.*?\\})", open(finder).read(), re.S)
            for package in ast.literal_eval(found[1]).values() if found else ():
                path = os.path.join(package, module + ".py")
                if os.path.isfile(path) and "not available while" not in open(path).read():
                    spec = importlib.util.spec_from_file_location("_real_" + module, path)
                    loaded = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(loaded)
                    return getattr(loaded, name)
    raise NotImplementedError("no original file in reach")
"""
PLANTED = "_course_agent_handin_planted"
# nbval's kernel (not sandboxed) copies the package's answers into site-packages, for the judge's
# kernel (which reads site-packages) to import, if the judge ran after it.
PLANT = f"""
import importlib, inspect, os, site

try:
    import {PLANTED} as planted
except ImportError:
    source = inspect.getsource(importlib.import_module("course_agent.accumulator"))
    for folder in site.getsitepackages():
        try:
            with open(os.path.join(folder, "{PLANTED}.py"), "w") as file:
                file.write(source)
        except OSError:
            pass
    importlib.invalidate_caches()
    import {PLANTED} as planted
ToolCallAccumulator = planted.ToolCallAccumulator
"""
STUDENTS = {
    "starter": {},
    "saved-3-of-7": {"exercises": {3: "<3>"}, "edit": saved_output("3/7 passed")},
    "edited-selftest": {"edit": replace_cell("selftest", FAKE_SELFTEST)},
    "deleted-selftest": {"edit": delete_cell("selftest")},
    "rebound-display": {"exercises": {1: "<1>" + FAKE_DISPLAY}},
    "package-imports": {"exercises": IMPORTS},
    # Exercises 1 and 2 solved, 3 the package's truncate_result pasted in, as its file has it:
    # the course's printed code, transcribed, which the course allows.
    "pasted-package-code": {"exercises": {1: "<1>", 2: "<2>", 3: PASTED}},
    "solved": {"exercises": "solved"},
    "reads-package-files": {
        "exercises": {
            1: READ_FILES + "ToolCallAccumulator = real('accumulator', 'ToolCallAccumulator')",
            2: "<2>",
            3: "<3>",
        }
    },
    "plants-answers-in-site-packages": {"exercises": {1: PLANT, 2: "<2>", 3: "<3>"}},
    # Stores a 2/7 it saved earlier, and checks that its kernel sees no key.
    "solved-saved-2-of-7": {
        "exercises": "solved",
        "extra": [PROBE_ENV] + ([] if sandbox_problem() else [PROBE_SANDBOX]),
        "edit": saved_output("2/7 passed"),
    },
}


def build(path: Path, exercises=None, extra=(), edit=None) -> Path:
    answers = solved()
    if exercises == "solved":
        exercises = answers
    else:
        exercises = {
            number: re.sub(r"<(\d)>", lambda m: answers[int(m[1])], source)
            for number, source in (exercises or {}).items()
        }
    return submission(path, exercises, extra, edit)


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("handin")
    # Keys as a grader's or a CI runner's shell might hold them: none may reach the kernel.
    env = {"OPENAI_API_KEY": KEY, "GITHUB_TOKEN": KEY, "my_client_secret": KEY}

    def run(name: str) -> subprocess.CompletedProcess:
        if name == "source":  # beside the conftest, but not a release: its own outputs count
            return hand_in(SOURCE, root / name, env, at="labs/source/day03-lab.ipynb")
        notebook = build(root / "notebooks" / f"{name}.ipynb", **STUDENTS[name])
        return hand_in(notebook, root / name, env)

    names = [*STUDENTS, "source"]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(zip(names, pool.map(run, names), strict=True))
    finally:
        for folder in map(Path, site.getsitepackages()):
            (folder / f"{PLANTED}.py").unlink(missing_ok=True)


def shown(run: subprocess.CompletedProcess) -> str:
    return run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.parametrize(
    ("name", "score"),
    [
        ("starter", "2/7"),
        ("saved-3-of-7", "3/7"),
        ("edited-selftest", "2/7"),
        ("deleted-selftest", "2/7"),
        ("rebound-display", "3/7"),  # exercise 1 is solved, the rest is not
    ],
)
def test_a_lab_below_seven_fails_whatever_its_file_stores(
    handed_in: dict, name: str, score: str
) -> None:
    run = handed_in[name]
    assert run.returncode == 1, shown(run)
    # The self-test cell ran (restored, if it was edited or deleted) and was compared with 7/7.
    assert re.search(f"'7/7 passed' == [\"']{score} passed", run.stdout), shown(run)


def test_implementations_imported_from_the_package_fail_and_say_so(handed_in: dict) -> None:
    # The checks are judged from a grading kernel's answers: the package there has no answers.
    run = handed_in["package-imports"]
    assert run.returncode == 1, shown(run)
    for number, heading in enumerate(HEADINGS, start=3):
        assert re.search(
            rf"x {number}\. .*: in \"{re.escape(heading)}\": not available while grading: your",
            run.stdout,
        ), shown(run)


@pytest.mark.parametrize("name", ["reads-package-files", "plants-answers-in-site-packages"])
def test_the_judge_reaches_no_answer_of_the_package_on_disk(handed_in: dict, name: str) -> None:
    # Exercises 2 and 3 solved, exercise 1 the package's own accumulator taken from its file
    # (or from what nbval's kernel copied into site-packages): the judge, sandboxed and run
    # before nbval's kernel, fails check 3 (nbval's kernel, with the whole package, passes it).
    run = handed_in[name]
    assert run.returncode == 1, shown(run)
    assert re.search(re.escape(f"x 3. fragment merging: {EXERCISE_1}"), run.stdout), shown(run)
    assert "::check_4 PASSED" in run.stdout and "::check_5 PASSED" in run.stdout, shown(run)


def test_a_transcription_of_the_packages_code_passes_as_the_course_chooses(
    handed_in: dict,
) -> None:
    # The course prints truncate_result's code; copying it out is allowed (docs/grading.md).
    run = handed_in["pasted-package-code"]
    assert run.returncode == 0, shown(run)
    assert "::check_5 PASSED" in run.stdout, shown(run)


@pytest.mark.parametrize("name", ["solved", "solved-saved-2-of-7"])
def test_a_solved_lab_passes_whatever_its_file_stores(handed_in: dict, name: str) -> None:
    run = handed_in[name]
    assert run.returncode == 0, shown(run)
    assert re.search(r"\b\d+ passed\b", run.stdout) and "failed" not in run.stdout, shown(run)


def test_the_solution_source_matches_its_own_stored_outputs(handed_in: dict) -> None:
    # Run from the same root as a hand-in: labs/conftest.py leaves notebooks in labs/source/ alone.
    refresh = (
        "if the package changed on purpose, refresh the source's outputs with `course-agent lab "
        "execute labs/source/day03-lab.ipynb` and review the diff"
    )
    run = handed_in["source"]
    assert run.returncode == 0, f"{refresh}\n{shown(run)}"
    assert re.search(r"labs/source/day03-lab\S*::Cell 0 PASSED", run.stdout), shown(run)


def test_the_readmes_and_the_lab_doc_give_the_hand_in_command_on_one_line() -> None:
    for readme in (REPO / "README.md", REPO / "docs" / "lab.md", LABS / "README.md"):
        lines = readme.read_text(encoding="utf-8").splitlines()
        assert any(line.strip().strip("`") == HANDIN for line in lines), readme


def test_the_student_file_stores_no_output_to_compare_with() -> None:
    for cell in nbformat.read(RELEASE, as_version=4).cells:
        if cell.cell_type == "code":
            assert (cell.execution_count, cell.outputs) == (None, []), cell.get("id")


@pytest.mark.parametrize(
    ("text", "sanitized"),
    [
        ("/tmp/day03-lab-x1y2/sandbox/src", "TEMPDIR"),
        ("/private/var/folders/ab/T/day03-lab-1/sandbox", "TEMPDIR"),
        ("took 0.31 s", "took DURATION"),
        ("<object at 0x7f3a2b>", "<object at 0xADDRESS>"),
        ("7/7 passed", "7/7 passed"),
        ("2/7 passed", "2/7 passed"),
        ("src/calc.js fed back 8054 chars", "src/calc.js fed back 8054 chars"),
    ],
)
def test_the_sanitize_file_hides_what_varies_and_nothing_else(text: str, sanitized: str) -> None:
    for pattern, replacement in get_sanitize_patterns((LABS / "nbval-sanitize.cfg").read_text()):
        text = re.sub(pattern, replacement, text)
    assert text == sanitized


def test_nbval_compares_only_cells_with_a_count_and_refuses_outputs_without_one(
    tmp_path: Path,
) -> None:
    # What the restore relies on: the student's cells, cleared, are run but not compared.
    v4 = nbformat.v4

    def cell(count: int | None, stored: str | None) -> dict:
        outputs = [v4.new_output("stream", text=stored)] if stored else []
        return v4.new_code_cell("print('fresh')", execution_count=count, outputs=outputs)

    cells = [cell(None, None), cell(1, "stored\n"), cell(None, "stored\n"), cell(2, "fresh\n")]
    nbformat.write(v4.new_notebook(cells=cells), tmp_path / "n.ipynb")
    command = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "n.ipynb", "-v"]
    command += [*NOT_THE_STUDENTS, "--color=no"]
    run = subprocess.run(
        command, cwd=tmp_path, env=kernel_env(), capture_output=True, text=True, timeout=300
    )
    outcomes = re.findall(r"::Cell (\d) (PASSED|FAILED)", run.stdout)
    assert outcomes == [("0", "PASSED"), ("1", "FAILED"), ("2", "FAILED"), ("3", "PASSED")]
    assert "Unrun reference cell has outputs" in run.stdout


def test_only_a_lab_beside_the_conftest_is_restored(tmp_path: Path) -> None:
    # The same file, self-test deleted, in labs/ and in labs/source/: only the first gets it back.
    notebook = submission(tmp_path / "lab.ipynb", edit=delete_cell("selftest"))
    (tmp_path / "root" / "labs" / "source").mkdir(parents=True)
    shutil.copy(notebook, tmp_path / "root" / "labs" / "source" / "day03-lab.ipynb")
    run = hand_in(notebook, tmp_path / "root", extra=["--collect-only", "-qq", "labs/source"])
    items = re.findall(r"^(\S+)::Cell \d+$", run.stdout, re.MULTILINE)
    code_cells = sum(cell.cell_type == "code" for cell in nbformat.read(notebook, 4).cells)
    assert items.count("labs/day03-lab.ipynb") == code_cells + 1, run.stdout
    assert items.count("labs/source/day03-lab.ipynb") == code_cells, run.stdout


# The red team's second round: nbval's kernel had the notebook's folder (labs/, which holds the
# conftest.py every later pytest run loads, and comes first on its sys.path) as its writable cwd.
LEAVE_BEHIND = """
import pathlib

payload = "\\nopen('LEFT-BEHIND-RAN', 'w').close()\\n"
for folder in (pathlib.Path.cwd(), pathlib.Path({labs!r})):
    try:
        (folder / "course_agent").mkdir(exist_ok=True)
        (folder / "course_agent" / "__init__.py").write_text(payload)
        with open(folder / "conftest.py", "a") as conftest:
            conftest.write(payload)
    except OSError:
        pass
"""


def test_a_hand_in_leaves_nothing_behind_for_the_next_one_in_the_same_folder(
    tmp_path: Path,
) -> None:
    labs = tmp_path / "labs"
    first = build(tmp_path / "leaves.ipynb", extra=[LEAVE_BEHIND.format(labs=str(labs))])
    hand_in(first, tmp_path, {"OPENAI_API_KEY": KEY})
    # pytest's own cache of the conftest (it writes bytecode), and nothing else, is new.
    assert sorted(p.name for p in labs.iterdir() if p.name != "__pycache__") == [
        "conftest.py",
        "day03-lab.ipynb",
        "nbval-sanitize.cfg",
    ]
    cached = (
        [p.name for p in (labs / "__pycache__").glob("*")]
        if (labs / "__pycache__").exists()
        else []
    )
    assert all(
        re.fullmatch(r"conftest\.cpython-\d+-pytest-[\d.]+\.pyc", name) for name in cached
    ), cached
    assert (labs / "conftest.py").read_bytes() == (LABS / "conftest.py").read_bytes()
    again = hand_in(build(tmp_path / "starter.ipynb"), tmp_path, {"OPENAI_API_KEY": KEY})
    assert re.search("'7/7 passed' == [\"']2/7 passed", again.stdout), shown(again)
    assert not list(tmp_path.rglob("LEFT-BEHIND-RAN"))


def test_any_other_notebook_in_the_hand_in_runs_jailed_too(tmp_path: Path) -> None:
    # labs/notes.ipynb beside the lab: not a release, compared with its own outputs, and its
    # kernel as far from the keys, pytest's /proc and site-packages as the lab's.
    notes = tmp_path / "notes.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PROBE_ENV), nbformat.v4.new_code_cell(PROBE_SANDBOX)]
    if sandbox_problem():
        nb.cells.pop()
    nbformat.write(nb, notes)
    run = hand_in(notes, tmp_path / "root", {"OPENAI_API_KEY": KEY}, at="labs/notes.ipynb")
    assert run.returncode == 0, shown(run)
    assert re.search(r"labs/notes\S*::Cell 1 PASSED", run.stdout) or sandbox_problem(), shown(run)


def test_a_kernel_that_dies_ends_the_hand_in_at_once_saying_so(tmp_path: Path) -> None:
    # nbval alone waits out its cell timeout (2,000 s) for the reply of a kernel that is gone.
    dies = build(tmp_path / "dies.ipynb", extra=["import os\n\nos._exit(1)"])
    run = hand_in(dies, tmp_path / "root", {"OPENAI_API_KEY": KEY})
    assert run.returncode == 1, shown(run)
    assert "the kernel died" in run.stdout, shown(run)


def test_a_notebook_printing_without_end_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    # nbval's kernel is jailed, but what nbval reads lands in the pytest process: 11 MB printed
    # (the red team's flood held 1.27 GB of it) stops being read at 10,000,000 characters.
    flood = build(
        tmp_path / "flood.ipynb", extra=["for _ in range(11):\n    print('x' * 1_000_000)"]
    )
    run = hand_in(flood, tmp_path / "root", {"OPENAI_API_KEY": KEY})
    assert run.returncode == 1, shown(run)
    assert "the notebook printed more than 10,000,000 characters" in run.stdout, shown(run)


def test_without_a_sandbox_the_hand_in_says_what_its_kernels_can_reach(tmp_path: Path) -> None:
    # bubblewrap out of PATH: the kernels run plain, and the warnings summary says what that means.
    starter = build(tmp_path / "starter.ipynb")
    run = hand_in(starter, tmp_path / "root", {"PATH": str(Path(sys.executable).parent)})
    assert re.search("'7/7 passed' == [\"']2/7 passed", run.stdout), shown(run)
    assert "bubblewrap is not installed" in run.stdout, shown(run)
    assert "can read this process's (/proc)" in run.stdout, shown(run)
