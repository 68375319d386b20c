"""A kernel's one writable folder: fresh, the notebook's helper modules copied in within bounds,
and discarded without following anything a kernel planted there (lab/private.py)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import nbformat
import pytest
from code_cells import notebook, streamed
from lab_class import RELEASE, solved, submission

from course_agent.lab.grade import grade_one
from course_agent.lab.jail import sandbox_problem
from course_agent.lab.kernel import run_notebook
from course_agent.lab.private import HELPER_BYTES, HELPER_FILES, discard, private_folder


def test_only_regular_python_files_beside_the_notebook_come_along(tmp_path: Path) -> None:
    beside = tmp_path / "submission"
    beside.mkdir()
    secret = tmp_path / "secret.py"
    secret.write_text("KEY = 'sk-private-0123456789'\n")
    (beside / "helper.py").write_text("ANSWER = 42\n")
    (beside / "linked.py").symlink_to(secret)  # a link: never followed
    os.mkfifo(beside / "fifo.py")  # a FIFO: never opened for long (it would hang a read)
    (beside / ".hidden.py").write_text("x = 1\n")
    (beside / "big.py").write_bytes(b"#" * (HELPER_BYTES + 1))
    (beside / "notes.txt").write_text("not a module\n")
    (beside / "package.py").mkdir()  # a folder named like a module
    folder = private_folder(beside, inside=str(tmp_path))
    assert sorted(path.name for path in folder.iterdir()) == ["helper.py"]
    assert (folder / "helper.py").read_text() == "ANSWER = 42\n"
    assert folder.parent == tmp_path.resolve() and folder.name.startswith("course-agent-private-")


def test_at_most_helper_files_modules_are_copied(tmp_path: Path) -> None:
    for number in range(HELPER_FILES + 8):
        (tmp_path / f"m{number:03}.py").write_text(f"N = {number}\n")
    folder = private_folder(tmp_path, inside=str(tmp_path))
    assert len(list(folder.iterdir())) == HELPER_FILES


def test_discarding_follows_no_link_fifo_or_hard_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "classmates").mkdir(parents=True)
    victim = outside / "classmates" / "alice.ipynb"
    victim.write_text("alice's notebook\n")
    folder = private_folder(inside=str(tmp_path))
    (folder / "to-folder").symlink_to(outside / "classmates")
    (folder / "to-file").symlink_to(victim)
    os.link(victim, folder / "hard-link")
    os.mkfifo(folder / "fifo")
    locked = folder / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "file").write_text("x")
    (locked / "inner" / "up").symlink_to(outside)
    locked.chmod(0)  # a folder the kernel made unreadable
    discard(folder)
    assert not folder.exists()
    assert victim.read_text() == "alice's notebook\n" and victim.stat().st_nlink == 1
    assert stat.S_IMODE((outside / "classmates").stat().st_mode) != 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["outside"]


PLANT = """\
import os
os.symlink({victim!r}, "notebook.ipynb")
os.symlink({folder!r}, "feedback")
os.mkfifo("grades.csv")
os.link("helper.py", "hard-link.py")
os.makedirs("locked/inner")
os.symlink("/", "locked/inner/root")
os.chmod("locked", 0)
print(sorted(os.listdir(".")))
"""


@pytest.mark.skipif(bool(sandbox_problem()), reason="needs bubblewrap")
def test_what_a_sandboxed_kernel_plants_is_gone_and_nothing_it_points_at_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: the kernel's writable folder was the one asked for (a submission's, nbgrader's
    # autograded one), and a link planted there was followed by whatever came next.
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "helper.py").write_text("ANSWER = 42\n")
    victim = submission / "lab.ipynb"
    victim.write_text("the student's notebook\n")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    nb = notebook(PLANT.format(victim=str(victim), folder=str(submission)), "import helper")
    assert run_notebook(nb, timeout=60, cwd=submission, sandbox=True) == ""
    assert streamed(nb.cells[0]) == (
        "['feedback', 'grades.csv', 'hard-link.py', 'helper.py', 'locked', 'notebook.ipynb']\n"
    )
    assert not nb.cells[1].outputs  # the helper module imported
    assert sorted(path.name for path in submission.iterdir()) == ["helper.py", "lab.ipynb"]
    assert victim.read_text() == "the student's notebook\n"
    assert (submission / "helper.py").stat().st_nlink == 1
    assert list(temporary.iterdir()) == []  # the private folder and the run's, removed


@pytest.mark.skipif(bool(sandbox_problem()), reason="needs bubblewrap")
def test_answers_in_a_module_beside_the_notebook_are_graded_as_jupyterlab_runs_them(
    tmp_path: Path,
) -> None:
    # Honest students lose no more: `from answers import ...` in each exercise cell gave
    # ModuleNotFoundError in the grade (the kernel ran in an empty folder), 2/7.
    setup = next(cell for cell in nbformat.read(RELEASE, as_version=4).cells if cell.id == "setup")
    (tmp_path / "answers.py").write_text("\n\n".join([setup.source, *solved().values()]) + "\n")
    imports = {
        1: "from answers import ToolCallAccumulator",
        2: "from answers import execute_call",
        3: "from answers import truncate_result",
    }
    row = grade_one(submission(tmp_path / "lab.ipynb", imports), timeout=60)
    assert (row.passed, row.total, row.note) == (7, 7, "")
