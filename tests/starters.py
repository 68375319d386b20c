"""The student starters the tests use: made from labs/source/, never read from labs/ itself.

A student solves labs/day03-lab.ipynb in the clone, and the suite must still pass there, so a test
that needs the starter gets what `course-agent lab release` writes from the solution source, once
per process, in a temporary folder removed at exit. `committed_starter` is the one look at labs/:
the starter as git last committed it beside the reference, for the check that it is not stale.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

from course_agent.lab.labs import write_notebook
from course_agent.lab.release import release_notebooks

__all__ = ["committed_starter", "starter"]

REPO = Path(__file__).resolve().parent.parent


@functools.cache
def _folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="course-agent-starters-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@functools.cache
def starter(source: Path) -> Path:
    """The student notebook released from `source`, under the same file name."""
    path = _folder() / source.name
    write_notebook(release_notebooks(source)[0], path)
    return path


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30
        )
    except OSError:  # no git on this machine
        return None
    return done.stdout if done.returncode == 0 else None


def committed_starter(name: str) -> tuple[str, bytes] | None:
    """(where, labs/NAME) as released with the package's reference for NAME: from the last commit
    that changed the reference (`lab release` writes both at once, and a student never touches the
    reference, so a student's commits do not count); from the working copy only while the
    reference itself has uncommitted changes (an instructor releasing). None outside a git clone
    (a downloaded archive, say)."""
    reference = f"course_agent/lab/released/{name}"
    if _git("diff", "--quiet", "HEAD", "--", reference) is None and _git("rev-parse", "HEAD"):
        return "the working copy", (REPO / "labs" / name).read_bytes()
    commit = (_git("log", "-1", "--format=%H", "--", reference) or "").strip()
    if not commit:
        return None
    shown = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:labs/{name}"], capture_output=True, timeout=30
    )
    return (f"commit {commit[:12]}", shown.stdout) if shown.returncode == 0 else None
