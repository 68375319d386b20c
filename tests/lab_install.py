"""The README's student install, `pip install ".[lab]"` of a copy of this checkout, made once per
test run in a folder every xdist worker shares: the first worker to ask builds it, the others wait.

The browser tests run JupyterLab from it; the Classroom tests copy it as a runner's Python.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["shared_lab_install"]

REPO = Path(__file__).resolve().parent.parent
# What `pip install .` builds from; copied, so that no build writes into the checkout.
BUILT_FROM = ["course_agent", "jupyter-config", "pyproject.toml", "README.md"]
INSTALL = ".[lab]"  # the README's student install
SERVER_CONFIG = Path("etc/jupyter/jupyter_server_config.d/course_agent.json")  # in the venv


def build(home: Path) -> Path:
    for name in BUILT_FROM:
        source, copy = REPO / name, home / "checkout" / name
        if source.is_dir():
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, copy)
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", INSTALL]
    done = subprocess.run(pip, cwd=home / "checkout", capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"pip install {INSTALL} failed:\n{done.stdout}{done.stderr}"
    assert (venv / SERVER_CONFIG).is_file(), "the install wrote no config enabling the save hook"
    return venv


def shared_lab_install(basetemp: Path) -> Path:
    """The install's venv, under the run's temporary folder (`basetemp`, pytest's)."""
    # A worker's basetemp is <run>/popen-gwN; <run> is common to the workers and removed with
    # the run's other folders. Without xdist, basetemp is <run> itself.
    run = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    home = run / "lab-install"
    with (run / "lab-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released as the file closes
        if not (home / "made").exists():
            shutil.rmtree(home, ignore_errors=True)  # a build that failed half way
            home.mkdir()
            build(home)
            (home / "made").touch()
    return home / "venv"
