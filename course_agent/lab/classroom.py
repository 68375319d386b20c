"""A GitHub Classroom template for a lab: what a student repository holds, and a workflow in which
each of the lab's checks is an autograding test of its own, worth its points.

`write_template(checkout, dest, lab)` copies the package from a checkout of this repository, the
lab's starter (from the reference it copies, never a working copy) and the two files of its hand-in,
and writes `.github/workflows/classroom.yml`, which `workflow(lab)` returns. On GitHub's runner the
workflow puts the template back around the student's notebook, installs bubblewrap (the grader
sandboxes each kernel) and the package, then runs `course-agent grade NOTEBOOK --check N` once per
check (the first grades, the others `--reuse` its rows): a partly solved lab shows its own count,
and the Actions log each failing check's line.
Deliberately not handled: creating the assignment on GitHub, and the lab's answers a person reads
(Classroom has no manual grading: grade those from the collected notebooks).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from course_agent.lab.checkout import RELEASED
from course_agent.lab.labs import LABS, SELFTEST_CELL, Lab, find_lab, write_notebook
from course_agent.lab.template_files import GITIGNORE, student_readme

__all__ = [
    "HANDIN",
    "PACKAGE_FILES",
    "WORKFLOW",
    "add_parser",
    "checks_of",
    "main_classroom",
    "workflow",
    "write_starter",
    "write_template",
]

# What `pip install ".[lab]"` reads from the checkout: the sources, the project file and the Jupyter
# server config it installs as a data file (while pyproject.toml lists one: copied when the checkout
# has it). The README it names as its long description is the template's own (template_files.py).
PACKAGE_FILES = ("course_agent", "pyproject.toml", "jupyter-config")
# The student's hand-in, from the template's root (the lab's README gives the same).
HANDIN = (
    "python -m pytest --nbval --nbval-current-env "
    "--nbval-sanitize-with labs/nbval-sanitize.cfg labs/{notebook}"
)
HANDIN_FILES = ("conftest.py", "nbval-sanitize.cfg")  # labs/: the student's own hand-in command
WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
MINUTES_PER_CHECK = 5  # the grader runs the whole notebook for each check: about 10 s

HEADER = """\
# GitHub Classroom autograding for {lab}, written by `course-agent lab classroom` (labs/README.md).
# Each check is an autograding test of its own, worth its points: a partly solved lab shows its own
# count, and the Actions log shows each failing check's line. The grade of record is the judge's
# (`course-agent grade`): it runs the notebook in a sandbox and checks it from outside the kernel.
name: Autograding Tests
"on":
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
        with:
          fetch-depth: 0 # the first commit is the template as the instructor made it
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Grade the notebook alone, in the template as the instructor made it
        # Nothing else of the student's counts: not an edited labs/conftest.py or package file, nor
        # an added conftest.py, pytest.ini (addopts = --co) or pytest.py.
        run: |
          if [ -L {notebook} ]; then
            echo "{notebook} is a symbolic link: commit the notebook itself"
            exit 1
          fi
          # One first commit, the template's: a second root merged in could pose as the template.
          if [ "$(git rev-list --max-parents=0 HEAD | wc -l)" -ne 1 ]; then
            echo "the history has more than one first commit: push only on top of the template"
            exit 1
          fi
          cp {notebook} "$RUNNER_TEMP/{name}"
          git checkout --quiet --force --detach "$(git rev-list --max-parents=0 HEAD)"
          git clean -d --force --force -x --quiet
          rm -f {kept}
          cp "$RUNNER_TEMP/{name}" {notebook}
      - name: Install the sandbox the grader runs each kernel in
        # Bubblewrap needs unprivileged user namespaces, which Ubuntu 24.04's AppArmor forbids.
        run: |
          sudo apt-get update -q
          sudo apt-get install -y -q bubblewrap
          sudo sh -c '[ ! -e {userns} ] || sysctl -w {sysctl}=0'
      - name: Install the package and what the grader needs
        run: python -m pip install ".[lab]"
"""
CHECK = """\
      - name: check {n}
        id: check-{n}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: check {n}
          command: course-agent grade {notebook} --lab {lab} --check {n} --reuse {kept}
          timeout: {minutes}
          max-score: {points}
"""
REPORTER = """\
      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{results}
        with:
          runners: {runners}
"""
SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"
# The first check's step grades and keeps each row here; the others read it (lab/reuse.py). In the
# workspace, removed (tracked or not) by the step that puts the template back.
KEPT = ".course-agent-grade.json"


def checks_of(lab: Lab, released: Path | None = None) -> list[int]:
    """Each automatic check's points, in order: the nbgrader points cells (code cells; an answer
    a person reads is a markdown cell and no check) of `released` (default: the package's)."""
    points = []
    for cell in json.loads((released or lab.released).read_text(encoding="utf-8"))["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("grade"):
            points.append(int(meta["points"]))
    return points


def workflow(lab: Lab, released: Path | None = None) -> str:
    """The workflow's YAML for `lab` as `released` (default: the package's reference) has it:
    one autograding test per check, then the reporter."""
    notebook = f"labs/{lab.notebook}"
    text = HEADER.format(
        lab=lab.name,
        notebook=notebook,
        name=lab.notebook,
        userns="/proc/sys/" + SYSCTL.replace(".", "/"),
        sysctl=SYSCTL,
        kept=KEPT,
    )
    points = checks_of(lab, released)
    for n, worth in enumerate(points, 1):
        text += CHECK.format(
            n=n,
            notebook=notebook,
            lab=lab.name,
            kept=KEPT,
            minutes=MINUTES_PER_CHECK,
            points=worth,
        )
    ids = [f"check-{n}" for n in range(1, len(points) + 1)]
    # The reporter reads each test's result from an environment variable named after its step id.
    results = "\n".join(
        f'          {i.upper()}_RESULTS: "${{{{steps.{i}.outputs.result}}}}"' for i in ids
    )
    return text + REPORTER.format(results=results, runners=",".join(ids))


def write_starter(released: Path, path: Path) -> None:
    """The student notebook: the reference `released` with the self-test's expected output
    cleared, exactly what `course-agent lab release` writes as labs/NOTEBOOK beside it."""
    import nbformat

    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        if cell.get("id") == SELFTEST_CELL:
            cell.outputs, cell.execution_count = [], None
    write_notebook(nb, path)


def write_template(checkout: Path, dest: Path, lab: Lab) -> list[str]:
    """Write `lab`'s template into `dest` (empty or new) from `checkout`; the paths written."""
    if not (checkout / "pyproject.toml").is_file() or not (checkout / "course_agent").is_dir():
        raise ValueError(f"{checkout} is no checkout of course-agent: give its root with --from")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty: give a new folder")
    written = []
    for name in PACKAGE_FILES:
        source = checkout / name
        if source.is_dir():
            skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
            shutil.copytree(source, dest / name, ignore=skip)
        elif source.is_file():
            shutil.copy2(source, dest / name)
        else:
            continue
        written.append(name)
    (dest / "labs").mkdir(parents=True, exist_ok=True)
    for name in HANDIN_FILES:
        shutil.copy2(checkout / "labs" / name, dest / "labs" / name)
        written.append(f"labs/{name}")
    # The starter and the workflow's points from the reference the template ships (the
    # checkout's, just copied): they agree by construction, whatever the installed package holds.
    released = dest / RELEASED / lab.notebook
    if not released.is_file():
        raise ValueError(f"{checkout / RELEASED} has no {lab.notebook}: release the lab first")
    write_starter(released, dest / "labs" / lab.notebook)
    (dest / WORKFLOW).parent.mkdir(parents=True, exist_ok=True)
    (dest / WORKFLOW).write_text(workflow(lab, released), encoding="utf-8")
    handin = HANDIN.format(notebook=lab.notebook)
    (dest / "README.md").write_text(student_readme(lab, released, handin), encoding="utf-8")
    (dest / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    return [*written, f"labs/{lab.notebook}", str(WORKFLOW), "README.md", ".gitignore"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`course-agent lab classroom DEST [--lab LAB] [--from CHECKOUT]`."""
    make = commands.add_parser(
        "classroom",
        help="write a GitHub Classroom template for a lab into DEST: one autograding test a check",
    )
    make.add_argument("dest", type=Path, metavar="DEST", help="a new folder for the template")
    make.add_argument("--lab", choices=sorted(LABS), default="day03-lab", help="default day03-lab")
    make.add_argument(
        "--from",
        dest="checkout",
        type=Path,
        default=Path("."),
        metavar="CHECKOUT",
        help="this repository's root, whose package the template ships (default: .)",
    )


def main_classroom(args: argparse.Namespace) -> int:
    """Write the template; 0 done, 1 refused (one line on stderr)."""
    import sys

    try:
        written = write_template(args.checkout, args.dest, find_lab(args.lab))
    except (OSError, ValueError) as exc:
        print(f"course-agent lab classroom: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.dest}: {', '.join(written)}")
    print(f"next: cd {args.dest} && git init && git add . && git commit -m template, then push it")
    return 0
