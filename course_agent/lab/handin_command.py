"""`course-agent lab handin [NOTEBOOK]`: the judged hand-in, from wherever the student stands.

It finds the lab (the repository's root, labs/, a Classroom checkout, or a folder below one) and
runs exactly the README's command, `python -m pytest --nbval ... labs/day03-lab.ipynb`, from the
folder above labs/, with this interpreter: the one that has the lab's extra, activated or not.
What is missing (the notebook, the hand-in's files, the lab's extra) is said in one line.
Deliberately not handled: what the hand-in does (lab/handin.py), or a lab outside a labs/ folder
that holds the hand-in's conftest.py and nbval-sanitize.cfg.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from course_agent.lab.labs import LABS, find_lab

__all__ = ["NEEDED", "add_handin_parser", "handin_command", "main_handin"]

HANDIN_FILES = ("conftest.py", "nbval-sanitize.cfg")  # beside the lab: the hand-in's own
NEEDED = ("pytest", "nbval", "nbformat", "nbclient", "ipykernel")  # the `lab` extra's, in use


class NoHandin(ValueError):
    """What keeps the hand-in from running, as one line saying what to do."""


def _wanted(given: str | None) -> list[str]:
    """The notebook names to look for: the one given, else the labs in the package's order."""
    if given is None:
        return [lab.notebook for lab in LABS.values()]
    try:
        return [find_lab(Path(given).name).notebook]
    except ValueError:
        return [Path(given).name]


def find_handin(given: str | None, cwd: Path) -> Path:
    """The lab notebook to hand in: `given` if it is a file, else the first lab found in `cwd`,
    its labs/, or a labs/ of a folder above it (a student in labs/source/ or in the root)."""
    if given is not None and Path(cwd, given).is_file():
        return Path(cwd, given).resolve()
    folders = [cwd, cwd / "labs"] + [parent / "labs" for parent in cwd.parents]
    for folder in folders:
        for name in _wanted(given):
            if (folder / name).is_file() and (folder / HANDIN_FILES[0]).is_file():
                return (folder / name).resolve()
    what = repr(given) if given else " or ".join(_wanted(None))
    raise NoHandin(
        f"no {what} here or in a labs/ folder above: run this from the repository's root, "
        "labs/ or your Classroom checkout, or name the notebook (course-agent lab handin "
        "labs/day03-lab.ipynb)"
    )


def handin_command(notebook: Path) -> tuple[list[str], Path]:
    """(the README's hand-in command for `notebook`, the folder it runs from: above labs/)."""
    labs = notebook.parent
    missing = [name for name in HANDIN_FILES if not (labs / name).is_file()]
    if missing:
        raise NoHandin(
            f"{labs} has no {' or '.join(missing)}: hand in the notebook inside the labs/ folder "
            "of the repository or of your Classroom checkout"
        )
    sanitize = f"{labs.name}/{HANDIN_FILES[1]}"
    words = ["-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with", sanitize]
    return [sys.executable, *words, f"{labs.name}/{notebook.name}"], labs.parent


def missing_modules() -> list[str]:
    """The hand-in's modules this interpreter cannot import."""
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def add_handin_parser(commands: argparse._SubParsersAction) -> None:
    handin = commands.add_parser(
        "handin",
        help="hand in a lab: run its judged nbval hand-in (from the root, labs/ or a Classroom "
        "checkout)",
    )
    handin.add_argument(
        "notebook",
        nargs="?",
        metavar="NOTEBOOK",
        help="the lab notebook or its name (default: the first of "
        f"{', '.join(lab.notebook for lab in LABS.values())} found)",
    )


def main_handin(args: argparse.Namespace) -> int:
    """Run the hand-in; its pytest's exit code (0: every check passed), or 2 when it cannot."""
    if missing := missing_modules():
        print(
            f"course-agent lab handin: this Python ({sys.executable}) has no {', '.join(missing)}:"
            ' install the lab\'s extra (pip install ".[lab]" in the repository) or activate the '
            "environment you installed it in",
            file=sys.stderr,
        )
        return 2
    try:
        command, root = handin_command(find_handin(args.notebook, Path.cwd()))
    except NoHandin as exc:
        print(f"course-agent lab handin: {exc}", file=sys.stderr)
        return 2
    print(f"in {root}: python {' '.join(command[1:])}", flush=True)
    return subprocess.run(command, cwd=root).returncode
