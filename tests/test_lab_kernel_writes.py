"""`course-agent grade`: nothing a kernel writes is read, written, copied or chmod-ed after it.
Each student's kernel plants a symlink, a FIFO or a hard link in every folder it can write (its
private folder, its TMPDIR) and tries its own submission folder by path; the grade then writes
every output, feedback into the submissions folder itself, and nothing outside changed. Every
file operation of the grader's process is watched (an audit hook): once a kernel started, its
folder is only removed, and nothing else names it."""

from __future__ import annotations

import csv
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from lab_class import submission
from test_lab_nbgrader_writes import KINDS, PLANT, SECRET, check_later_operations

from course_agent.lab.grade_command import main_grade
from course_agent.lab.jail import sandbox_problem

pytestmark = [
    pytest.mark.skipif(bool(sandbox_problem()), reason="needs the grading sandbox"),
    pytest.mark.timeout(600),
]


HOOKED: list[Any] = []
WATCHING: list[list[tuple[str, str]]] = []  # while a list is here, the hook records into it


def _named(arg: Any) -> str | None:
    if isinstance(arg, (str, bytes, os.PathLike)):
        return os.fsdecode(arg)
    if isinstance(arg, (list, tuple)):
        return " ".join(str(item) for item in arg)
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if WATCHING and event.startswith(("open", "os.", "shutil.", "tempfile.", "subprocess.")):
        for arg in args:
            if (name := _named(arg)) is not None and "course-agent-" in name:
                WATCHING[-1].append((event, name))
                return


def test_a_kernel_s_plants_reach_no_later_step(tmp_path: Path) -> None:
    victim = tmp_path / "instructor" / "gradebook.db"
    victim.parent.mkdir()
    victim.write_text(SECRET, encoding="utf-8")
    victim.chmod(0o600)
    subs = tmp_path / "subs"
    for kind in KINDS:
        probe = PLANT.format(victim=str(victim), autograded=str(subs / kind), kind=kind)
        submission(subs / kind / "day03-lab.ipynb", extra=[probe])
    out = tmp_path / "out"
    out.mkdir()
    outputs = ["--csv", "g.csv", "--lms", "canvas", "c.csv", "--report", "r.html"]
    outputs += ["--json", "r.json", "--reuse", "kept.json"]
    named = [str(out / arg) if "." in arg else arg for arg in outputs]
    if _hook not in HOOKED:  # an audit hook stays for the process: one, idle unless watching
        sys.addaudithook(_hook)
        HOOKED.append(_hook)
    events: list[tuple[str, str]] = []
    WATCHING.append(events)
    try:
        code = main_grade([str(subs), "--jobs", "2", *named, "--feedback", str(subs)])
    finally:
        WATCHING.clear()
    assert code == 0
    check_later_operations(events, len(KINDS))  # one kernel per notebook
    with (out / "g.csv").open(newline="", encoding="utf-8") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    # The starter's score: the plants changed nothing.
    assert {kind: (rows[kind]["passed"], rows[kind]["note"]) for kind in KINDS} == dict.fromkeys(
        KINDS, ("2", "")
    )
    assert victim.read_text(encoding="utf-8") == SECRET
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.stat().st_nlink == 1
    for kind in KINDS:  # the submission folder holds what was handed in and its feedback only
        folder = subs / kind
        assert sorted(path.name for path in folder.iterdir()) == [
            "day03-lab.ipynb",
            "day03-lab.md",
        ]
        for path in folder.iterdir():
            info = path.lstat()
            assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, path
