"""Real nbgrader (the test extra's): nothing a kernel writes is read, written, copied or chmod-ed
by a later nbgrader step. Each student's kernel plants a symlink, a FIFO or a hard link in every
folder it can write (its working folder, its TMPDIR) and tries its autograded folder by path; then
`nbgrader autograde` and `generate_feedback` run, and nothing outside is changed, nothing hangs,
and every file nbgrader made is a plain file of its own (lab/nbgrader_kernels.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lab_class import LABS, SOURCE, kernel_env, submission

from course_agent.lab.jail import sandbox_problem

KINDS = ["symlink", "fifo", "hardlink"]
SECRET = "the instructor's own file, never in a student's feedback\n"
PLANT = """\
import os
victim, autograded, kind = {victim!r}, {autograded!r}, {kind!r}
made = []
for folder in {{os.getcwd(), autograded, os.environ.get("TMPDIR", "/tmp")}}:
    for name in ["day03-lab.ipynb", "data.csv", "gradebook.db"]:
        path = os.path.join(folder, name)
        try:
            if os.path.lexists(path):
                os.remove(path)
            if kind == "symlink":
                os.symlink(victim, path)
            elif kind == "fifo":
                os.mkfifo(path)
            else:
                own = os.path.join(folder, "own.txt")
                open(own, "w").close()
                os.link(own if not os.path.exists(victim) else victim, path)
            made.append(path)
        except OSError as exc:
            made.append(f"{{path}}: {{exc.strerror}}")
print(made)"""

# nbgrader, its file operations watched by an audit hook: each one naming a path of a kernel's
# (its private folder: lab/private.py's prefix, or run_notebook's) is logged to $WATCH_LOG when
# nbgrader exits.
PRIVATE = "course-agent-private-"
KERNEL_FOLDERS = (PRIVATE, "course-agent-run-")
WATCHED = """
import atexit, json, os, sys
events = []
def hook(event, args):
    if not event.startswith(("open", "os.", "shutil.", "tempfile.", "subprocess.", "glob.")):
        return
    for arg in args:
        if isinstance(arg, (str, bytes, os.PathLike)):
            name = os.fsdecode(arg)
        elif isinstance(arg, (list, tuple)):
            name = " ".join(map(str, arg))
        else:
            continue
        if "course-agent-" in name:
            events.append([event, name])
            return
log = os.environ["WATCH_LOG"]
atexit.register(lambda: open(log, "a").write(json.dumps(events) + "\\n"))
sys.addaudithook(hook)
from nbgrader.apps.nbgraderapp import main
sys.argv = ["nbgrader", *sys.argv[1:]]
main()
"""
# What may name a kernel's folder once its kernel started: removing it (rmtree opens it
# read-only, then works through descriptors, never following a link).
REMOVING = {"shutil.rmtree", "open", "os.rmdir"}


def later_operations(events: list[tuple[str, str]]) -> tuple[set[str], list[tuple[str, str]]]:
    """The kernels' private folders, and each operation naming one after its kernel started
    (bwrap's command line names it): making it and copying helpers in come before."""
    folders = {
        name
        for event, name in events
        if event == "tempfile.mkdtemp" and any(prefix in name for prefix in KERNEL_FOLDERS)
    }
    later, started = [], set()
    for event, name in events:
        if event == "subprocess.Popen":
            started |= {folder for folder in folders if folder in name}
        else:
            near = [f for f in started if name == f or f.startswith(name.rstrip("/") + "/")]
            if near or any(name.startswith(f + "/") for f in started):
                later.append((event, name))
    return folders, later


def check_later_operations(events: list[tuple[str, str]], kernels: int) -> None:
    """Each kernel's folder, once its kernel started, is only removed, and is gone."""
    folders, later = later_operations(events)
    assert len(folders) == kernels, folders
    removed = {name for event, name in later if event == "shutil.rmtree"}
    for event, name in later:
        assert event in REMOVING, (event, name)
        assert event != "open" or name in removed, (event, name)  # rmtree's own open
    assert not any(os.path.lexists(folder) for folder in folders)


pytestmark = [
    pytest.mark.skipif(bool(sandbox_problem()), reason="needs the grading sandbox"),
    pytest.mark.timeout(900),  # three nbgrader commands, three kernels, in the first test
]


def watched(course: Path) -> Path:
    """Where the watched nbgrader commands log, beside the course."""
    return course.with_name(f"{course.name}-watched.jsonl")


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course of the main lab, one student per kind of planted file, autograded, fed back."""
    course = tmp_path_factory.mktemp("course")
    (course / "source" / "day03").mkdir(parents=True)
    shutil.copy(SOURCE, course / "source" / "day03" / "day03-lab.ipynb")
    shutil.copy(LABS / "nbgrader_config.py", course / "nbgrader_config.py")
    victim = course / "victim.txt"
    victim.write_text(SECRET, encoding="utf-8")
    victim.chmod(0o600)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

    def nbgrader(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-c", WATCHED, *args],
            cwd=course,
            env=kernel_env(PATH=path, WATCH_LOG=str(watched(course))),
            capture_output=True,
            text=True,
            timeout=240,  # a FIFO opened by a later step would wait here for ever
        )
        assert done.returncode == 0, done.stderr[-3000:]

    nbgrader("generate_assignment", "day03")
    for kind in KINDS:
        autograded = course / "autograded" / kind / "day03"
        probe = PLANT.format(victim=str(victim), autograded=str(autograded), kind=kind)
        submission(course / "submitted" / kind / "day03" / "day03-lab.ipynb", extra=[probe])
    nbgrader("autograde", "day03")
    nbgrader("generate_feedback", "day03")
    return course


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("step", ["autograded", "feedback"])
def test_no_planted_file_reaches_an_nbgrader_step(course: Path, kind: str, step: str) -> None:
    victim = course / "victim.txt"
    assert victim.read_text(encoding="utf-8") == SECRET  # not overwritten through a link
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600  # not chmod-ed through one
    assert victim.stat().st_nlink == 1
    folder = course / step / kind / "day03"
    made = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))
    assert made == (["day03-lab.ipynb"] if step == "autograded" else ["day03-lab.html"])
    for path in folder.rglob("*"):
        info = path.lstat()
        assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, path
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace")


@pytest.mark.parametrize("kind", KINDS)
def test_the_kernel_wrote_only_its_own_private_folder(course: Path, kind: str) -> None:
    import nbformat

    graded = nbformat.read(course / "autograded" / kind / "day03" / "day03-lab.ipynb", 4)
    printed = "".join(out.get("text", "") for out in graded.cells[-1].outputs)
    autograded = str(course / "autograded" / kind / "day03")
    # Its tries at nbgrader's folder failed (not even visible); its own folder took the plants.
    assert f"{autograded}/day03-lab.ipynb: " in printed, printed
    assert PRIVATE in printed, printed


def test_once_a_kernel_started_nbgrader_only_removes_its_folder(course: Path) -> None:
    lines = watched(course).read_text(encoding="utf-8").splitlines()
    events = [(event, name) for line in lines for event, name in json.loads(line)]
    check_later_operations(events, len(KINDS))  # autograde: one kernel per notebook


@pytest.mark.parametrize(
    "after", [("open", "/t/course-agent-private-1/x"), ("os.chmod", "/t/course-agent-private-1")]
)
def test_the_watch_catches_an_operation_after_the_kernel_started(after: tuple[str, str]) -> None:
    folder = "/t/course-agent-private-1"
    made = [("tempfile.mkdtemp", folder), ("open", f"{folder}/helper.py")]  # before: allowed
    started = [("subprocess.Popen", f"bwrap --bind {folder} {folder}")]
    removed = [("shutil.rmtree", folder), ("open", folder), ("os.rmdir", folder)]
    assert later_operations([*made, *started, *removed])[1] == removed
    with pytest.raises(AssertionError):
        check_later_operations([*made, *started, after, *removed], 1)
