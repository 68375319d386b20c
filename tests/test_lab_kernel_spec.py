"""Lab kernels start as ipykernel_launcher starts them, less the debugger: the grader's, plain and
jailed, and nbval's in the hand-in, plain and jailed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from code_cells import notebook, streamed

from course_agent.lab.kernel import run_notebook
from course_agent.lab.nbval_kernels import start_kernel

# What a kernel shows of how it started: debugpy (None: refused), and whether the folder it started
# in comes first on its import path, before the standard library (it must not, as with
# ipykernel_launcher: a planted json.py would be imported for the real one; IPython adds '' later).
STARTED = (
    "import os, sys\n"
    "print(sys.modules.get('debugpy', 'not imported'), sys.path[0] in ('', os.getcwd()))"
)


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "jailed"])
def test_a_graders_kernel_starts_without_the_debugger(sandbox: bool) -> None:
    nb = notebook(STARTED)
    assert run_notebook(nb, timeout=30, sandbox=sandbox) == ""
    assert streamed(nb.cells[0]) == "None False\n"


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "jailed"])
def test_nbvals_kernel_starts_without_the_debugger_too(tmp_path: Path, sandbox: bool) -> None:
    kernel = start_kernel(tmp_path, startup_timeout=30, sandbox=sandbox)
    seen: list[dict] = []  # the iopub messages the cell sent
    try:
        reply = kernel.kc.execute_interactive(STARTED, timeout=30, output_hook=seen.append)
    finally:
        kernel.stop()
    assert reply["content"]["status"] == "ok"
    printed = [m["content"]["text"] for m in seen if m["header"]["msg_type"] == "stream"]
    assert "".join(printed) == "None False\n"


def test_a_kernel_under_pythonsafepath_keeps_all_of_its_import_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With PYTHONSAFEPATH set, Python puts no '' first: LAUNCH must then remove nothing.
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    show = "import json, sys; print(json.dumps(sys.path))"
    plain = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, check=True)
    nb = notebook(show)
    assert run_notebook(nb, timeout=30) == ""
    assert set(json.loads(plain.stdout)) <= set(json.loads(streamed(nb.cells[0])))


# The adversary of LAUNCH's first step: a module named like one the kernel imports as it starts,
# planted in the folder it starts in. It must never run (ipykernel_launcher's own guarantee).
PLANTED = "open('planted-ran', 'w').close()\nraise SystemExit('the planted json.py ran')\n"


def test_a_module_planted_where_the_kernel_starts_is_not_imported(tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text(PLANTED)
    nb = notebook(
        "import json\nprint(json.__file__ != 'json.py' and 'planted' not in json.__file__)"
    )
    assert run_notebook(nb, timeout=30, cwd=tmp_path) == ""
    assert streamed(nb.cells[0]) == "True\n"
    assert not (tmp_path / "planted-ran").exists()


def test_nor_where_nbvals_kernel_starts(tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text(PLANTED)
    kernel = start_kernel(tmp_path, startup_timeout=30, sandbox=False)
    try:
        reply = kernel.kc.execute_interactive("import json", timeout=30)
    finally:
        kernel.stop()
    assert reply["content"]["status"] == "ok"
    assert not (tmp_path / "planted-ran").exists()
