"""What a student pays before the first question: the CLI's start-up, `import course_agent`, and
`%load_ext`.

Every run is a fresh process, since a second import costs nothing: `course-agent --help` and a
first offline answer (`course-agent --mock`) against `python -c pass`; `python -c "import
course_agent"` against `python -c pass`, and `ipython -c "%load_ext course_agent"` against
`ipython -c pass`. `%load_ext` is also timed inside a fresh IPython InteractiveShell, which exists
before it starts, as in a kernel. Run alone (`python benchmarks/startup.py [--repeat N]`) it
prints the CLI's rows only. Deliberately not handled: a kernel's own start-up, and Jupyter's
front end.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from measure import Sample, Timing, probe, run_command, time_together
from report import Row, format_table

__all__ = ["cli_rows", "startup_rows"]


def _load_ext_together(repeat: int, names: list[str]) -> list[dict[str, Sample]]:
    """probe.py's `load_ext NAME` figures for each name, in turns, after a warm-up round."""
    runs: list[list[dict[str, float]]] = [[] for _ in names]
    for round_number in range(repeat + 1):
        for name, taken in zip(names, runs, strict=True):
            figures = probe("load_ext", name)
            if round_number:  # round 0 warms the disk cache
                taken.append(figures)
    return [
        {key: Sample.of([run[key] for run in taken], "s") for key in taken[0] if "seconds" in key}
        for taken in runs
    ]


def _ipython() -> str:
    """The ipython script beside this Python (a venv's bin/), else the one on PATH."""
    beside = Path(sys.executable).with_name("ipython")
    found = str(beside) if beside.exists() else shutil.which("ipython")
    if found is None:
        raise RuntimeError("ipython is not installed: pip install -e .")
    return found


def _script(name: str) -> str:
    """A console script beside this Python (a venv's bin/), else the one on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed: pip install -e .")
    return found


def cli_rows(repeat: int) -> list[Row]:
    """`course-agent --help` and a first offline answer, each against `python -c pass`."""
    python, agent = sys.executable, _script("course-agent")
    with tempfile.TemporaryDirectory() as folder:
        offline = [agent, "--mock", "--root", folder, "where is divide?"]
        helped, answered, bare = time_together(
            [
                lambda: run_command([agent, "--help"]),
                lambda: run_command(offline),
                lambda: run_command([python, "-c", "pass"]),
            ],
            repeat,
        )
    return [
        Row.timed("start-up: `course-agent --help`", helped, "`python -c pass`", bare, at_most=3.0),
        Row.timed(
            "start-up: a first offline answer, `course-agent --mock --root EMPTY q`",
            answered,
            "`python -c pass`",
            bare,
        ),
    ]


def startup_rows(repeat: int, notes: list[str]) -> list[Row]:
    python, ipython = sys.executable, _ipython()
    ours, bare, shell_ours, shell_bare = time_together(
        [
            lambda: run_command([python, "-c", "import course_agent"]),
            lambda: run_command([python, "-c", "pass"]),
            lambda: run_command([ipython, "-c", "%load_ext course_agent"]),
            lambda: run_command([ipython, "-c", "pass"]),
        ],
        repeat,
    )
    load_ours, load_peer = _load_ext_together(repeat, ["course_agent", "autoreload"])
    notes.append(
        "%load_ext only declares the magics; the first use of one imports them, which took "
        f"{load_ours['first_use_seconds'].show()} in the same fresh shells"
    )
    in_shell = Timing(load_ours["seconds"], load_ours["cpu_seconds"])
    peer_in_shell = Timing(load_peer["seconds"], load_peer["cpu_seconds"])
    return [
        *cli_rows(repeat),
        Row.timed(
            "start-up: `import course_agent`, fresh process",
            ours,
            "`python -c pass`",
            bare,
            at_most=3.0,
        ),
        Row.timed(
            "start-up: `ipython -c '%load_ext course_agent'`",
            shell_ours,
            "`ipython -c pass`",
            shell_bare,
            at_most=1.3,
        ),
        Row.timed(
            "start-up: `%load_ext course_agent` in a fresh shell",
            in_shell,
            "`%load_ext autoreload`",
            peer_in_shell,
            under=0.3,
        ),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the CLI's start-up against `python -c pass`")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (default 7)")
    print(format_table(cli_rows(parser.parse_args().repeat)))
