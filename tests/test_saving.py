"""The save hook through a real Jupyter contents manager, as JupyterLab's Save would call it."""

import json
from pathlib import Path
from types import SimpleNamespace

import nbformat
from jupyter_server.services.contents.filemanager import FileContentsManager

from course_agent.notebook import saving
from course_agent.notebook.saving import SAVE_STATIC, WIDGET_VIEW, static_outputs

REPO = Path(__file__).resolve().parent.parent
VIEW = {"version_major": 2, "version_minor": 0, "model_id": "0123abcd"}
CARD = {"text/plain": "v glob({}) fed back 1 chars - x", "text/html": "<details>...</details>"}


def notebook() -> nbformat.NotebookNode:
    ours = nbformat.v4.new_output("display_data", data={WIDGET_VIEW: VIEW, **CARD})
    ours.metadata = SAVE_STATIC
    theirs = nbformat.v4.new_output(
        "display_data", data={WIDGET_VIEW: VIEW, "text/plain": "Slider"}
    )
    cell = nbformat.v4.new_code_cell("%%agent --mock\nq", outputs=[ours, theirs])
    return nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("text")])


def test_marked_outputs_lose_their_widget_view_and_keep_the_static_card():
    saved = notebook()
    assert static_outputs(saved) == 1
    ours, theirs = saved.cells[0].outputs
    assert ours.data == CARD
    assert WIDGET_VIEW in theirs.data  # another library's widget is saved as it is
    assert static_outputs(saved) == 0  # saving twice changes nothing more


def test_the_server_extension_hook_edits_what_a_real_contents_manager_writes(tmp_path):
    manager = FileContentsManager(root_dir=str(tmp_path))
    saving._load_jupyter_server_extension(SimpleNamespace(contents_manager=manager))
    model = {
        "type": "notebook",
        "format": "json",
        "content": json.loads(nbformat.writes(notebook())),
    }
    manager.save(model, "live.ipynb")
    text = (tmp_path / "live.ipynb").read_text()
    on_disk = nbformat.reads(text, as_version=4)
    assert on_disk.cells[0].outputs[0].data == CARD
    assert text.count(WIDGET_VIEW) == 1  # only the unmarked output's
    manager.save({"type": "file", "format": "text", "content": WIDGET_VIEW}, "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == WIDGET_VIEW  # other files are not touched


def test_the_package_ships_the_config_that_enables_the_extension():
    shipped = REPO / "jupyter-config" / "jupyter_server_config.d" / "course_agent.json"
    config = json.loads(shipped.read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"course_agent.notebook.saving": True}}}
    assert saving._jupyter_server_extension_points() == [{"module": "course_agent.notebook.saving"}]
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"etc/jupyter/jupyter_server_config.d" = ["jupyter-config/' in pyproject
