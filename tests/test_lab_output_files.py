"""Every file `course-agent grade` writes is made new: whatever was planted at its name (a link to
the instructor's file, a FIFO, a second name of it) is replaced, never opened, written or waited
on, and a linked folder on the way to a feedback file is refused (lab/output_file.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from course_agent.lab.grade_command import main_grade
from course_agent.lab.output_file import UnsafeOutput, write_below, write_file

SECRET = "the instructor's own file\n"
# Each output, as (its option, the path it is given below the work folder, the file it makes).
OUTPUTS = {
    "csv": (["--csv", "{out}/grades.csv"], "grades.csv"),
    "canvas": (["--lms", "canvas", "{out}/canvas.csv"], "canvas.csv"),
    "moodle": (["--lms", "moodle", "{out}/moodle.csv"], "moodle.csv"),
    "report": (["--report", "{out}/report.html"], "report.html"),
    "json": (["--json", "{out}/report.json"], "report.json"),
    "reuse": (["--reuse", "{out}/kept.json"], "kept.json"),
    "feedback": (["--feedback", "{out}/feedback"], "feedback/alice/day03-lab.md"),
    # --feedback given the submissions folder itself: the student's own folder is on the way.
    "feedback-in-submissions": (["--feedback", "{subs}"], "subs/alice/day03-lab.md"),
}


def plant(kind: str, at: Path, victim: Path) -> None:
    """Put a `kind` where an output will go: what a student (or a kernel) could leave there."""
    at.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        at.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(at)
    elif kind == "hardlink":
        os.link(victim, at)
    else:
        raise AssertionError(kind)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """subs/{alice,bob}/day03-lab.ipynb (not JSON: no kernel starts), an output folder, a victim."""
    for student in ("alice", "bob"):
        (tmp_path / "subs" / student).mkdir(parents=True)
        (tmp_path / "subs" / student / "day03-lab.ipynb").write_text("{", encoding="utf-8")
    (tmp_path / "out").mkdir()
    victim = tmp_path / "instructor" / "gradebook.db"
    victim.parent.mkdir()
    victim.write_text(SECRET, encoding="utf-8")
    victim.chmod(0o600)
    return tmp_path


def grade(work: Path, option: list[str]) -> int:
    args = [arg.format(out=work / "out", subs=work / "subs") for arg in option]
    return main_grade([str(work / "subs"), "--no-sandbox", "--lab", "day03-lab", *args])


@pytest.mark.timeout(60)  # a FIFO opened for writing would wait here for ever
@pytest.mark.parametrize("kind", ["symlink", "fifo", "hardlink"])
@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_a_planted_file_is_replaced_never_written_through(
    work: Path, output: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    option, made = OUTPUTS[output]
    target = (work / "out" / made) if not made.startswith("subs/") else work / made
    victim = work / "instructor" / "gradebook.db"
    plant(kind, target, victim)
    assert grade(work, option) == 0, capsys.readouterr().err
    assert victim.read_text(encoding="utf-8") == SECRET
    info = victim.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_nlink == 1  # a planted second name of it was replaced, not written
    made_info = target.lstat()
    assert stat.S_ISREG(made_info.st_mode) and made_info.st_nlink == 1
    assert made_info.st_ino != info.st_ino
    assert target.read_text(encoding="utf-8").strip()  # the grader's own output


@pytest.mark.parametrize("where", ["feedback", "feedback-in-submissions"])
def test_a_linked_folder_on_the_way_to_feedback_is_refused(
    work: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = work / "instructor" / "course"
    elsewhere.mkdir()
    option, _ = OUTPUTS[where]
    if where == "feedback":
        (work / "out" / "feedback").mkdir()
        (work / "out" / "feedback" / "alice").symlink_to(elsewhere)
    else:  # alice's folder is a link: neither searched nor written into
        real = work / "subs" / "alice"
        for item in real.iterdir():
            item.unlink()
        real.rmdir()
        real.symlink_to(elsewhere)
    code = grade(work, option)
    assert list(elsewhere.iterdir()) == []  # nothing went through the link
    if where == "feedback":
        assert code == 2
        assert "alice is a link or not a folder" in capsys.readouterr().err


def test_write_below_refuses_a_path_leaving_its_folder(tmp_path: Path) -> None:
    for relative in ["../x.md", "a/../../x.md", "/etc/x.md"]:
        with pytest.raises(UnsafeOutput):
            write_below(tmp_path / "feedback", Path(relative), "x")
    assert not (tmp_path / "x.md").exists()


def test_write_file_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    write_file(tmp_path / "a.csv", "one\n")
    write_file(tmp_path / "a.csv", "two\n")
    assert [path.name for path in tmp_path.iterdir()] == ["a.csv"]
    assert (tmp_path / "a.csv").read_text(encoding="utf-8") == "two\n"
