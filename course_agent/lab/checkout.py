"""Where an instructor's release goes: the checkout of this repository they work in, never the
installed package.

`pip install .` copies the package into site-packages, so the reference a release writes beside
the running code would miss the repository (and the next install would overwrite it). A release
writes into the checkout it is run from (or the one holding the source); outside one it refuses.
Deliberately not handled: a checkout laid out otherwise (its root must hold pyproject.toml).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["RELEASED", "checkout_of", "installed", "reference_for"]

RELEASED = Path("course_agent") / "lab" / "released"  # a checkout's references, one per lab
# The project table's name line, as pyproject.toml spells it.
NAME = re.compile(r'^name\s*=\s*"course-agent"\s*$', re.MULTILINE)
INSTALL_FOLDERS = {"site-packages", "dist-packages"}  # where pip and Debian's python install


def checkout_of(start: Path) -> Path | None:
    """The root of the course-agent checkout `start` is in, or None outside one."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        project = folder / "pyproject.toml"
        ours = (folder / RELEASED.parent).is_dir() and project.is_file()
        if ours and NAME.search(project.read_text(encoding="utf-8", errors="replace")):
            return folder
    return None


def installed(path: Path) -> bool:
    """Whether `path` lies in an installed package's folder (site-packages or dist-packages)."""
    return not INSTALL_FOLDERS.isdisjoint(path.resolve().parts)


def reference_for(name: str, source: Path, cwd: Path) -> Path:
    """Where the reference of the lab notebook `name` goes: the checkout of `cwd`, else that of
    `source`; ValueError naming what to do when neither is one, or the checkout is installed."""
    checkout = checkout_of(cwd) or checkout_of(source.parent)
    if checkout is None:
        raise ValueError(
            f"{cwd} is in no checkout of course-agent, and the reference belongs in one: run this "
            "from the repository's root, or name the file with --reference FILE"
        )
    reference = checkout / RELEASED / name
    if installed(reference):
        raise ValueError(
            f"{reference} is inside an installed package, which the next install overwrites: "
            "run this from the repository's root, or name the file with --reference FILE"
        )
    return reference
