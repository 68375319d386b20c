"""Every walkthrough notebook runs top to bottom offline and still shows what it was saved with.

Each notebook is run by nbval in a fresh subprocess (its own kernel, no key in the environment) and
its outputs compared with the stored ones after notebooks/nbval-sanitize.cfg masks temporary paths.
When the package changes on purpose, refresh the stored outputs (see `refresh` below) and review
the diff. Also: no committed notebook saves widget state or anything that looks like an API key.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
WALKTHROUGH = sorted((REPO / "notebooks").glob("*.ipynb"))
COMMITTED = sorted(
    path
    for folder in ("notebooks", "labs", "tests/notebooks")
    for path in (REPO / folder).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in path.parts
)
SANITIZE = "notebooks/nbval-sanitize.cfg"
# Settings that would take a notebook online or change the offline scenario: never passed on.
SETTINGS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "COURSE_AGENT_MODEL",
    "INJECT",
    "MOCK",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SELFTEST",
)
# sk-..., sk-proj-..., sk-ant-...: the shapes of OpenAI and Anthropic keys.
KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TAIL_LINES = 60


def offline_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in SETTINGS}


@pytest.mark.parametrize("notebook", WALKTHROUGH, ids=lambda path: path.name)
def test_the_notebook_runs_offline_and_matches_its_stored_outputs(
    notebook: Path, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",  # the reader's install has none; its plugin costs 0.8 s a start
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        SANITIZE,
        str(notebook.relative_to(REPO)),
    ]
    # The sandboxes and trees the notebook makes land in tmp_path, which pytest cleans up.
    environment = {**offline_environment(), "TMPDIR": str(tmp_path)}
    run = subprocess.run(
        command, cwd=REPO, env=environment, capture_output=True, text=True, check=False
    )
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-TAIL_LINES:])
    assert run.returncode == 0, (
        f"{notebook.name} failed under nbval (exit {run.returncode}). If the package changed on "
        f"purpose, refresh it with `python {Path(__file__).relative_to(REPO)} "
        f"{notebook.relative_to(REPO)}` and review the diff.\n{tail}"
    )


def test_the_walkthrough_has_one_notebook_per_part_of_the_course() -> None:
    numbers = [path.name[:2] for path in WALKTHROUGH]
    assert numbers == ["01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.parametrize("notebook", COMMITTED, ids=lambda path: str(path.relative_to(REPO)))
def test_a_committed_notebook_saves_no_widget_state_and_no_key(notebook: Path) -> None:
    text = notebook.read_text(encoding="utf-8")
    saved = nbformat.reads(text, as_version=4)
    assert "widgets" not in saved.metadata, "saved widget state: run the demo with --static"
    assert WIDGET_VIEW not in text, "a widget view without its state shows 'model not found'"
    leaked = KEY_SHAPE.findall(text)
    assert not leaked, f"something shaped like an API key: {leaked[0][:7]}..."


@pytest.mark.parametrize("notebook", WALKTHROUGH, ids=lambda path: path.name)
def test_a_walkthrough_notebook_carries_no_execution_timing(notebook: Path) -> None:
    saved = nbformat.read(notebook, as_version=4)
    timed = [cell.id for cell in saved.cells if "execution" in cell.metadata]
    assert not timed, f"cells {timed} carry execution timing; refresh the notebook"


def refresh(notebook: Path) -> None:
    """Execute `notebook` in place from notebooks/, offline, keeping no timing or widget state."""
    saved = nbformat.read(notebook, as_version=4)
    NotebookClient(
        saved,
        timeout=120,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(notebook.parent)}},
    ).execute(env=offline_environment())
    saved.metadata.pop("widgets", None)
    for cell in saved.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(saved, notebook)


if __name__ == "__main__":
    # python tests/test_notebooks.py notebooks/06-the-loop.ipynb ...: refresh the stored outputs.
    for name in sys.argv[1:] or [str(path) for path in WALKTHROUGH]:
        refresh(Path(name).resolve())
        print(f"refreshed {name}")
