"""Shared fixtures. Keep each small; add yours below with a line saying what it is for."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gateway import Gateway
from hypothesis import settings
from IPython.core.interactiveshell import InteractiveShell
from lab_install import shared_lab_install

from course_agent.notebook.magics import register
from course_agent.safety import redaction

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

# Every variable that settings.choose reads: a test sets the ones it means, and no other leaks in.
SETTINGS = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "COURSE_AGENT_MODEL",
    "COURSE_AGENT_REQUEST_TIMEOUT",
    "COURSE_AGENT_TIMEOUT",
    "INJECT",
    "MOCK",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SELFTEST",
]


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    """A loopback gateway (tests/gateway.py): queue replies, point a model at `gateway.url`."""
    with Gateway() as server:
        yield server


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`cli(*args, env={...})` runs `python -m course_agent ARGS` in tmp_path (or `cwd=`) as a user
    would: a real process whose settings are only those in `env` (none leak in from the test's)."""
    base = {name: value for name, value in os.environ.items() if name not in SETTINGS}

    def run(
        *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "course_agent", *args],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            cwd=cwd or tmp_path,
            timeout=60,
        )

    return run


@pytest.fixture(scope="session")
def lab_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the README's student install (tests/lab_install.py), once per run: read it,
    or copy it before changing anything in it."""
    return shared_lab_install(tmp_path_factory.getbasetemp())


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InteractiveShell:
    """A real IPython shell with the extension loaded afresh, in a folder with no .env.

    `shell.magics` is the AgentMagics object; its `conversation.messages` is the transcript.
    """
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # offline sandboxes land in tmp_path
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "course_agent")
    ipython.magics = register(ipython)  # a fresh conversation for every test
    return ipython


def pytest_configure(config: pytest.Config) -> None:
    # The suite starts some 400 Python processes (kernels, graders, nbval, the CLI) and collects a
    # hundred test modules in every worker: without cached bytecode each process compiles what it
    # imports anew, and pytest rewrites every test module's asserts again. Some CI images (this
    # project's too) set PYTHONDONTWRITEBYTECODE; the suite writes its __pycache__/ (git ignores
    # it) for itself and every process it starts (docs/performance.md has the figures).
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # Every process a test starts (the CLI, kernels, nbval, the grader) imports this checkout,
    # whatever pip installed: the README's installs are regular ones, not editable.
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # pytest-xdist hands out the modules with the most tests first; LONGEST_FIRST (below) is the
    # order that keeps both workers busy to the end (a few long kernel tests weigh more).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    # `-n auto`: a worker per core, and two more. Some modules wait rather than compute (a
    # JupyterLab starting, a browser painting, a gateway's timeouts, a graded endless loop): with
    # a worker per core the two cores idled a quarter of the run, with one more an eighth; the
    # others' work fills that (docs/performance.md).
    return len(os.sched_getaffinity(0)) + 2 if hasattr(os, "sched_getaffinity") else 4


# The slow tests: real kernels, nbval and the grader, JupyterLab and a browser, nbgrader, a fresh
# install. `pytest -m "not slow"` leaves them out. Marked here, never test by test, so a new test
# is marked by what it does: it (or a fixture it uses, or a function either defines) names one of
# KERNEL_NAMES, or it is in one of SLOW_FILES (whose kernels start inside helpers of their own).
KERNEL_NAMES = {
    "NotebookClient", "execute_source", "grade_class", "hand_in", "main_grade", "run_notebook",
    "sync_playwright", "lab_install",
}  # fmt: skip
SLOW_FILES = {
    "test_browser.py", "test_lab_class.py", "test_lab_extensions.py", "test_lab_grade.py",
    "test_lab_handin.py", "test_lab_handin_command.py", "test_lab_jail.py", "test_lab_judge.py",
    "test_lab_kernel.py", "test_lab_kernel_spec.py", "test_lab_layouts.py", "test_lab_progress.py",
    "test_lab_release.py",
    "test_notebooks.py",
}  # fmt: skip


def names_used(function: Any) -> set[str]:
    """The names a function's code uses: its inner functions' too, and those of the functions in
    tests/ that it calls (its module's helpers, tests/lab_class.py's, ...), followed all the way."""
    names: set[str] = set()
    todo = [(getattr(function, "__code__", None), getattr(function, "__globals__", {}))]
    seen: set[types.CodeType] = set()
    while todo:
        code, home = todo.pop()
        if not isinstance(code, types.CodeType) or code in seen:
            continue
        seen.add(code)
        names.update(code.co_names)
        todo += [(const, home) for const in code.co_consts if isinstance(const, types.CodeType)]
        for name in code.co_names:
            called = home.get(name)
            inner = getattr(called, "__code__", None)  # a function's code, or None
            if inner is not None and Path(inner.co_filename).parent == TESTS:
                todo.append((inner, called.__globals__))
    return names


def is_slow(item: pytest.Item) -> bool:
    if item.path.name in SLOW_FILES:
        return True
    info = getattr(item, "_fixtureinfo", None)
    fixtures = [d.func for defs in (info.name2fixturedefs.values() if info else ()) for d in defs]
    return any(KERNEL_NAMES & names_used(f) for f in [getattr(item, "function", None), *fixtures])


# pytest-timeout bounds a test and its fixtures' setup: 120 s unless the test sets its own (here,
# not in pyproject.toml, which the student's hand-in reads without pytest-timeout). A slow module's
# fixture runs several kernels for all its tests (a class handed in, a fresh install), which at a
# load of 8 to 10 on 2 cores took over 120 s: slow tests get 600 s unless they set their own.
TIMEOUT_S = 120
SLOW_TIMEOUT_S = 600


# The longest modules, longest first (`--durations`, 2 workers): run first, so that with
# `-n auto --dist loadfile` no worker starts one of them while the other is nearly done.
LONGEST_FIRST = [
    "test_lab_handin.py", "test_lab_classroom.py", "test_browser.py", "test_lab_judge.py",
    "test_notebooks.py", "test_lab_grade.py", "test_lab_class.py", "test_faults.py",
    "test_lab_release.py", "test_lab_extensions.py", "test_lab_jail.py", "test_selftest.py",
    "test_http.py", "test_cli.py", "test_grep_files.py",
]  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        slow = is_slow(item)
        if slow:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_S if slow else TIMEOUT_S))
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole


# Hypothesis's per-example deadline is a timing assertion, and timings belong in benchmarks/:
# on a loaded 2-core CI machine it only makes property tests flaky.
settings.register_profile("course_agent", deadline=None)
settings.load_profile("course_agent")


@pytest.fixture(autouse=True)
def _forget_remembered_keys() -> Iterator[None]:
    """Keys are remembered process-wide (safety.redaction): each test starts with none, so the
    keys one test configures are never cut from another's text."""
    before = set(redaction._KNOWN)
    redaction._KNOWN.clear()
    yield
    redaction._KNOWN.clear()
    redaction._KNOWN.update(before)
