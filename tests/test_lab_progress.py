"""Progress while grading: tqdm's bar on a terminal (a real pseudo-terminal), plain lines on a pipe.

The last two tests run `course-agent grade` itself, its stderr on a pty or a pipe, on a class of
files that are not notebooks (so no kernel starts: the rows come at once, the display is the same).
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from lab_class import kernel_env

from course_agent.lab.grade import GradeRow
from course_agent.lab.progress import GradeProgress

ROWS = [
    GradeRow("class/alice.ipynb", 7, 7, (), (), 2.0),
    GradeRow("class/bob.ipynb", 2, 7, (3, 4, 5, 6, 7), ("x",) * 5, 2.0),
    GradeRow("class/carol\x1b[2J.ipynb", None, None, (), (), 9.0, "timeout: cell 11 ran over 9 s"),
]


def read_all(fd: int) -> str:
    """Everything written to the other end of `fd` until it is closed (a pty gives EIO then)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


class Terminal:
    """A pseudo-terminal whose output is read as it comes (Linux drops what is unread at close)."""

    def __init__(self, columns: int = 0) -> None:
        self.master, self.slave = pty.openpty()
        if columns:  # as a terminal window sets it; unset, the pty says 0 columns
            size = struct.pack("HHHH", 24, columns, 0, 0)
            fcntl.ioctl(self.slave, termios.TIOCSWINSZ, size)
        self.shown: list[str] = []
        self.reader = threading.Thread(target=lambda: self.shown.append(read_all(self.master)))
        self.reader.start()

    def close(self) -> str:
        """Everything shown on the terminal."""
        os.close(self.slave)
        self.reader.join(timeout=30)
        os.close(self.master)
        return self.shown[0]


def test_a_pipe_gets_one_plain_line_per_notebook() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as out, GradeProgress(len(ROWS), out) as progress:
        for row in ROWS:
            progress.update(row)
    lines = read_all(read_end).splitlines()
    os.close(read_end)
    assert len(lines) == 3 and "\r" not in "".join(lines)
    # Two counts no notebook is in both of: below full marks (scored), and not scored at all.
    assert lines[0].startswith("graded 1/3 class/alice.ipynb: 7/7 | 0 below full marks, 0 not ")
    assert lines[1].startswith("graded 2/3 class/bob.ipynb: 2/7 | 1 below full marks, 0 not scored")
    assert " elapsed, about " in lines[1] and lines[1].endswith(" left")
    # A file name's escape codes are shown, not obeyed.
    assert lines[2].startswith("graded 3/3 class/carol\\x1b[2J.ipynb: - | 1 below full marks, 1 ")


def test_a_terminal_gets_tqdms_bar_redrawn_in_place() -> None:
    terminal = Terminal(columns=120)
    out = os.fdopen(os.dup(terminal.slave), "w")
    with out, GradeProgress(len(ROWS), out) as progress:
        for row in ROWS:
            progress.update(row)
    shown = terminal.close()
    frames = [frame for frame in shown.split("\r") if frame.strip()]
    assert frames[0].startswith("grading:   0%|") and "0/3" in frames[0]
    assert "0 below full marks, 0 not scored" in frames[0]
    assert frames[-1].startswith("grading: 100%|") and "3/3" in frames[-1]
    assert "1 below full marks, 1 not scored" in frames[-1]
    assert "<00:00" in frames[-1]  # tqdm's time left
    assert "graded " not in shown  # no plain lines on a terminal


def not_notebooks(folder: Path, count: int) -> Path:
    for number in range(count):
        (folder / f"{number:02}-broken.ipynb").write_text("{not json", encoding="utf-8")
    return folder


def grade_command(folder: Path) -> list[str]:
    return [sys.executable, "-m", "course_agent", "grade", str(folder), "--jobs", "2"]


def test_course_agent_grade_prints_plain_lines_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    done = subprocess.run(
        grade_command(not_notebooks(tmp_path, 4)),
        env=kernel_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(" ", 2)[1] for line in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert "| 0 below full marks, 4 not scored |" in lines[-1] and lines[-1].endswith(" left")
    assert "\r" not in done.stderr
    assert "graded 1/4" not in done.stdout  # the table on stdout stays as it was
    header = ["submission", "score", "failed", "seconds", "note"]
    assert done.stdout.splitlines()[0].split() == header


def test_course_agent_grade_draws_a_bar_when_stderr_is_a_terminal(tmp_path: Path) -> None:
    terminal = Terminal()
    done = subprocess.run(
        grade_command(not_notebooks(tmp_path, 4)),
        env=kernel_env(),
        stdout=subprocess.PIPE,
        stderr=terminal.slave,
        text=True,
        timeout=120,
    )
    shown = terminal.close()
    assert done.returncode == 0
    frames = [frame for frame in shown.split("\r") if frame.strip()]
    assert frames[0].startswith("grading:   0%|") and "0/4" in frames[0]
    assert frames[-1].startswith("grading: 100%|") and "4/4" in frames[-1]
    assert "0 below full marks, 4 not scored" in frames[-1]
    assert "graded 1/4" not in shown
