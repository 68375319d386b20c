"""Every `course_agent/...` path the docs, labs, notebooks and code comments name exists.

A path named in prose goes stale silently when a module moves; this reads each one the reader
could follow and checks it is in the checkout. Deliberately not handled: dotted module names
(`course_agent.app.guard`) and paths outside the package.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from walkthrough_files import LAB_SOURCES, WALKTHROUGH

from course_agent.lab.labs import LABS

REPO = Path(__file__).resolve().parent.parent
# What a reader follows: the docs, the committed labs and notebooks (never a listing of labs/ or
# notebooks/: a notebook of one's own there is the student's), the package's own text.
READ = sorted(
    {
        REPO / "README.md",
        *(REPO / "docs").glob("*.md"),
        *WALKTHROUGH,
        *LAB_SOURCES,
        *(lab.released for lab in LABS.values()),
        *(REPO / "labs" / lab.released.name for lab in LABS.values()),  # as `lab release` writes
        *(REPO / "course_agent").rglob("*.py"),
    }
)
PATH = re.compile(r"(?<![\w/.-])course_agent/[\w./-]*[\w/]")  # not inside an absolute path


def named_paths(text: str) -> set[str]:
    """The course_agent/... paths in `text`, without a trailing full stop or markup."""
    return {found.rstrip("/.") for found in PATH.findall(text.replace("\\n", "\n"))}


def test_the_pattern_finds_paths_in_prose_and_in_notebook_json() -> None:
    text = 'see `course_agent/tools/guards/` and "course_agent/loop.py.\\n", course_agent/app/x.py.'
    assert named_paths(text) == {
        "course_agent/tools/guards",
        "course_agent/loop.py",
        "course_agent/app/x.py",
    }


@pytest.mark.parametrize("source", READ, ids=lambda path: str(path.relative_to(REPO)))
def test_every_course_agent_path_named_exists(source: Path) -> None:
    text = source.read_text(encoding="utf-8")
    missing = sorted(path for path in named_paths(text) if not (REPO / path).exists())
    assert not missing, f"{source.relative_to(REPO)} names paths that do not exist: {missing}"
