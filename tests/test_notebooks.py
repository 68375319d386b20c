"""Every walkthrough notebook runs top to bottom offline and still shows what it was saved with.

The walkthrough is run by nbval in one subprocess (each notebook in a kernel of its own, no key in
the environment) and each notebook's outputs compared with the stored ones after
notebooks/nbval-sanitize.cfg masks temporary paths; pytest's JUnit XML says which cell failed.
When the package changes on purpose, refresh the stored outputs (see `refresh` below) and review
the diff. Also: no committed notebook saves widget state or anything that looks like an API key.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from starters import starter
from walkthrough_files import LAB_SOURCES, WALKTHROUGH, WALKTHROUGH_NAMES

from course_agent.lab.labs import LABS

REPO = Path(__file__).resolve().parent.parent
# Never a listing of notebooks/ or labs/: a new notebook there, or a student's saved lab, is theirs.
COMMITTED = sorted(
    [
        *WALKTHROUGH,
        *LAB_SOURCES,
        *(lab.released for lab in LABS.values()),
        *(starter(source) for source in LAB_SOURCES),  # what `lab release` writes in labs/
        *(REPO / "tests" / "notebooks").glob("*.ipynb"),
    ]
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


def shown(path: Path) -> str:
    """A notebook's test id: its path in the checkout, or `starter/NAME` for one released here."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else f"starter/{path.name}"


def offline_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in SETTINGS}


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ET.Element]]:
    """nbval over the whole walkthrough, once: notebook name -> its cells' <testcase>s."""
    folder = tmp_path_factory.mktemp("walkthrough")
    report = folder / "junit.xml"
    command = [
        sys.executable, "-m", "pytest",
        "-p", "no:cacheprovider",
        "-p", "no:hypothesispytest",  # none in the reader's install; its plugin costs 0.8 s a start
        "--nbval", "--nbval-current-env", "--nbval-sanitize-with", SANITIZE,
        f"--junitxml={report}", "--color=no",
        *(str(notebook.relative_to(REPO)) for notebook in WALKTHROUGH),
    ]  # fmt: skip
    # The sandboxes and trees the notebooks make land in the module's folder, which pytest cleans.
    environment = {**offline_environment(), "TMPDIR": str(folder)}
    run = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True)
    assert report.exists(), f"nbval wrote no report (exit {run.returncode}):\n{run.stderr[-3000:]}"
    cases: dict[str, list[ET.Element]] = {}
    for case in ET.parse(report).iter("testcase"):
        # classname "notebooks.01-tool-protocol.ipynb", name "Cell 3"
        cases.setdefault(case.get("classname", "").removeprefix("notebooks."), []).append(case)
    return cases


@pytest.mark.parametrize("notebook", WALKTHROUGH, ids=lambda path: path.name)
def test_the_notebook_runs_offline_and_matches_its_stored_outputs(
    walked: dict[str, list[ET.Element]], notebook: Path
) -> None:
    cases = walked.get(notebook.name, [])
    code_cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    assert len(cases) == len(code_cells), f"nbval ran {len(cases)} of {len(code_cells)} cells"
    failed = [
        f"{case.get('name')}: {problem.get('message', '')}\n{(problem.text or '')[-2000:]}"
        for case in cases
        for problem in [*case.iter("failure"), *case.iter("error")]
    ]
    assert not failed, (
        f"{notebook.name} failed under nbval. If the package changed on purpose, refresh it with "
        f"`python {Path(__file__).relative_to(REPO)} {notebook.relative_to(REPO)}` and review the "
        "diff.\n" + "\n".join(failed)
    )


def test_the_walkthrough_has_one_notebook_per_part_of_the_course() -> None:
    numbers = [path.name[:2] for path in WALKTHROUGH]
    assert numbers == ["01", "02", "03", "04", "05", "06", "07"]
    assert all(path.is_file() for path in WALKTHROUGH)


def test_the_manifest_is_the_walkthrough_git_tracks() -> None:
    # What git tracks, not what the folder holds: a notebook of one's own there is no test's.
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "--", "notebooks/*.ipynb"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        pytest.skip("no git on this machine")
    if done.returncode != 0:
        pytest.skip("not a git clone")
    tracked = sorted(Path(line).name for line in done.stdout.splitlines())
    assert tracked == list(WALKTHROUGH_NAMES), "add the new notebook to tests/walkthrough_files.py"


@pytest.mark.parametrize("notebook", COMMITTED, ids=lambda path: shown(path))
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


# -- a notebook of one's own: the README invites one in notebooks/, a student saves labs/ ---------

# Everything a checkout holds that the suite reads, less what git and the runs make.
NOT_COPIED = shutil.ignore_patterns(
    ".git", "__pycache__", ".hypothesis", ".ruff_cache", ".pytest_cache", "artifacts", ".venv"
)


def planted(path: Path) -> None:
    """A notebook as a person might leave one: live widgets saved, a key pasted, no quiz, a link
    to nowhere, a cell that raises."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# mine\n\n[notes](nowhere.md)"),
        nbformat.v4.new_code_cell(
            "key = 'sk-" + "a" * 24 + "'\nraise SystemExit",
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={WIDGET_VIEW: {"model_id": "f00", "version_major": 2}}
                )
            ],
        ),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def collected(root: Path) -> list[str]:
    """Every test id the suite collects in the checkout at `root`."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_a_notebook_of_ones_own_in_notebooks_or_labs_changes_and_fails_no_test(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "checkout"
    shutil.copytree(REPO, copy, ignore=NOT_COPIED)
    before = collected(copy)
    for place in ("notebooks/08-my-demo.ipynb", "labs/my-try.ipynb", "labs/source/mine.ipynb"):
        planted(copy / place)
    planted(copy / "labs" / "day03-lab.ipynb")  # the student's lab, saved with live widgets
    changed = sorted(set(collected(copy)) ^ set(before))
    assert not changed, f"tests that list the folders: {changed}"  # take a fixed manifest
    # And none of those that read the folders fails: the quick ones, and this file's quick ones.
    readers = ["tests/test_docs.py", "tests/test_walkthrough.py", "tests/test_suite.py"]
    quick = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--color=no"]
    for command in (
        [*quick, "-m", "not slow", *readers],
        [*quick, "tests/test_notebooks.py", "-k", "committed_notebook or one_notebook_per_part"],
    ):
        done = subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:]
