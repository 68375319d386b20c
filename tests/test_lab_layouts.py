"""No answer inside any grading sandbox, under every install layout and from every folder.

For each layout (tests/layouts.py) and folder the grader may be started in, the grader's own
path (restore, the stripped package, run_judged: what `course-agent grade` does) runs a lab whose
exercise cells only import the package's answers, with a probe cell after them: it reads every
file the kernel can read and looks for distinctive lines and bytecode of each graded function and
of the solution, a `.env` and the key. The README's commands (the grade inside the checkout, the
hand-in from the repository root) run as well. Every path: the probe finds nothing, the lab 2/7.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from lab_class import HANDIN, NOT_THE_STUDENTS, solved, submission
from layouts import KEY, Layout, layouts

from course_agent.lab.jail import sandbox_problem
from course_agent.lab.labs import LABS
from course_agent.lab.strip import stripped_package

LAB = LABS["day03-lab"]
IMPORTS = {
    1: "from course_agent.accumulator import ToolCallAccumulator",
    2: "from course_agent.registry import execute_call",
    3: "from course_agent.truncate import truncate_result",
}

# The probe: every file under / but /proc, /sys, /dev and the system's own folders (which jail.py
# binds whole from the host, and no install writes into), links not followed; each one named
# `.env*` noted, each that can hold Python source, bytecode or a notebook (SUFFIXES) read, but
# for the standard library's own modules (its site-packages is read). The markers come as hex,
# so that no file the kernel writes (IPython's history) holds them.
SUFFIXES = (".py", ".pyc", ".pyi", ".pth", ".ipynb", ".zip", ".egg")
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "sys", "dev")
PROBE = """\
import json, os, stat
_markers = {bytes.fromhex(value): name for name, value in json.loads(%r).items()}
_stdlib, _suffixes = %r, %r
_found = {"hits": {}, "envs": [], "files": 0, "read": 0}
_found["key in environment"] = %r in repr(os.environ)
for _top, _dirs, _files in os.walk("/"):
    if _top == "/":
        _dirs[:] = [name for name in _dirs if name not in %r]
    for _name in _files:
        _path = os.path.join(_top, _name)
        _found["files"] += 1
        if _name.startswith(".env"):
            _found["envs"].append(_path)
        _own = _path.startswith(_stdlib + "/") and "-packages/" not in _path
        if _own or not _name.endswith(_suffixes):
            continue
        try:
            _fd = os.open(_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(_fd, "rb") as _file:
            if not stat.S_ISREG(os.fstat(_file.fileno()).st_mode):
                continue
            _data = _file.read()
        _found["read"] += 1
        _seen = [name for marker, name in _markers.items() if marker in _data]
        if _seen:
            _found["hits"][_path] = _seen
print("PROBE " + json.dumps(_found))
"""

# What `course-agent grade` does with one notebook, its probe's output printed as well.
DRIVER = """\
import json, sys
from pathlib import Path
import nbformat
from course_agent.lab.grade import run_judged
from course_agent.lab.labs import LABS
from course_agent.lab.notebook_file import read_notebook
from course_agent.lab.restore import restore

lab, path = LABS["day03-lab"], Path(sys.argv[1])
nb = restore(read_notebook(path), nbformat.read(lab.released, as_version=4))
problem, report = run_judged(nb, 120, lab, path.parent)
texts = [out.get("text", "") for cell in nb.cells for out in cell.get("outputs", [])]
probe = [line[6:] for text in texts for line in text.splitlines() if line.startswith("PROBE ")]
print(json.dumps({
    "problem": problem,
    "passed": sum(check["ok"] for check in report["checks"]) if report else None,
    "probe": json.loads(probe[-1]) if probe else texts,
}))
"""


def _graded_function(module: str, name: str) -> Any:
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def markers(install: Path) -> dict[str, bytes]:
    """Pieces of each graded function and of the solution found in no file of the stripped
    copy, nor in another package of `install` (a venv): one source line each, and each
    function's bytecode."""
    copy = stripped_package(LAB)
    corpus = b"\0".join(path.read_bytes() for path in copy.rglob("*") if path.is_file())
    found: dict[str, bytes] = {}
    sources = {
        name: inspect.getsource(_graded_function(module, name)) for module, name in LAB.stripped
    }
    # The solution's lines as its notebook stores them: inside JSON strings.
    stored = {
        f"solution {number}": "\n".join(json.dumps(line, ensure_ascii=False)[1:-1] for line in text)
        for number, text in ((n, s.splitlines()) for n, s in solved().items())
    }
    for name, source in (sources | stored).items():
        lines = [line.strip() for line in source.splitlines()[1:]]
        lines = [line for line in lines if len(line) >= 24 and not line.startswith("#")]
        for number, line in enumerate([x for x in lines if x.encode() not in corpus][:1], 1):
            found[f"{name}, line {number}"] = line.encode()
    for module, name in LAB.stripped:
        code = _graded_function(module, name).__code__.co_code
        if len(code) >= 40 and code not in corpus:
            found[f"{name}, bytecode"] = code
    elsewhere: set[bytes] = set()
    for path in next((install / "lib").glob("python3*/site-packages")).rglob("*.py"):
        if "course_agent" not in path.parts:
            data = path.read_bytes()
            elsewhere |= {marker for marker in found.values() if marker in data}
    found = {name: marker for name, marker in found.items() if marker not in elsewhere}
    found["the key"] = KEY.encode()
    return found


def environment(layout: Layout) -> dict[str, str]:
    """A student's or instructor's shell: the layout's venv first, a key set, no PYTHONPATH
    (the suite's, which points at this checkout)."""
    keep = {name: os.environ[name] for name in ("HOME", "LANG", "TMPDIR") if name in os.environ}
    path = f"{layout.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    return {**keep, "PATH": path, "OPENAI_API_KEY": KEY}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, lab_install: Path) -> dict[str, Any]:
    assert sandbox_problem() == "", sandbox_problem()
    root = tmp_path_factory.mktemp("layouts")
    found = markers(lab_install)
    # A positive control: every marker is in the checkout a layout is made from.
    made = layouts(root, lab_install)
    checkout = made["editable"].checkout
    every = b"\0".join(
        path.read_bytes()
        for folder in (checkout / "course_agent", checkout / "labs")
        for path in folder.rglob("*")
        if path.is_file()
    )
    every += (checkout / ".env").read_bytes()
    missing = [name for name, marker in found.items() if marker not in every]
    assert not missing, missing
    hexes = json.dumps({name: marker.hex() for name, marker in found.items()})
    probe = PROBE % (hexes, sysconfig.get_path("stdlib"), SUFFIXES, KEY, SYSTEM)
    notebook = submission(root / "elsewhere" / "imports.ipynb", IMPORTS, [probe])
    return {"layouts": made, "notebook": notebook, "markers": found}


# (layout, folder the grader starts in): "checkout" is `python -m` from the checkout, whose own
# course_agent/ then comes first on the grader's path.
# (The regular install graded elsewhere sees only its site-packages: one of the places here.)
CASES = [("regular", "checkout"), ("editable", "checkout"), ("src", "elsewhere")]


@pytest.fixture(scope="module")
def probed(built: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    results = {}
    for name, folder in CASES:
        layout = built["layouts"][name]
        cwd = layout.checkout if folder == "checkout" else built["notebook"].parent
        done = subprocess.run(
            [layout.python, "-c", DRIVER, str(built["notebook"])],
            cwd=cwd,
            env=environment(layout),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        results[name, folder] = json.loads(done.stdout.splitlines()[-1])
    return results


@pytest.mark.parametrize(("layout", "folder"), CASES)
def test_no_file_in_the_sandbox_holds_an_answer_a_env_or_the_key(
    probed: dict, layout: str, folder: str
) -> None:
    found = probed[layout, folder]
    probe = found["probe"]
    assert isinstance(probe, dict), probe  # the probe ran and printed its findings
    assert probe["read"] > 1000  # it read site-packages
    assert probe["hits"] == {}
    assert probe["envs"] == [] and not probe["key in environment"]


@pytest.mark.parametrize(("layout", "folder"), CASES)
def test_the_imports_only_lab_scores_two_of_seven(probed: dict, layout: str, folder: str) -> None:
    found = probed[layout, folder]
    assert (found["problem"], found["passed"]) == ("", 2)


def test_the_readme_grade_inside_the_checkout_gives_two_of_seven(built: dict) -> None:
    # `python -m course_agent grade` in the checkout gave 7/7: the grader imported the checkout.
    layout = built["layouts"]["regular"]
    command = [layout.python, "-m", "course_agent", "grade", str(built["notebook"])]
    done = subprocess.run(
        [*command, "--csv", str(built["notebook"].parent / "grades.csv")],
        cwd=layout.checkout,
        env=environment(layout),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"\b2/7\b", done.stdout), done.stdout


def test_the_readme_hand_in_from_the_repository_root_passes_two_checks(built: dict) -> None:
    layout = built["layouts"]["regular"]
    lab = layout.checkout / "labs" / "day03-lab.ipynb"
    original = lab.read_bytes()
    lab.write_bytes(built["notebook"].read_bytes())
    try:
        words = HANDIN.split()[1:]
        done = subprocess.run(
            [layout.python, *words, *NOT_THE_STUDENTS, "-v", "--color=no"],
            cwd=layout.checkout,
            env=environment(layout),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        lab.write_bytes(original)
    assert done.returncode == 1, done.stdout[-3000:]
    verdicts = dict(re.findall(r"::check_(\d) (PASSED|FAILED)", done.stdout))
    assert len(verdicts) == 7 and list(verdicts.values()).count("PASSED") == 2, done.stdout
