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
    server = SimpleNamespace(contents_manager=manager, kernel_manager=Kernels({}))
    saving._load_jupyter_server_extension(server)
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


class Kernels:
    """A server's kernel manager as the extension reads it: kernel id -> its process's pid."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids

    def __contains__(self, kernel: str) -> bool:
        return kernel in self.pids

    def get_kernel(self, kernel: str) -> SimpleNamespace:
        return SimpleNamespace(provisioner=SimpleNamespace(pid=self.pids[kernel]))


KERNEL = "4a2f6a0e-1c3b-4d5e-8f90-123456789abc"
MODEL = "0123456789abcdef0123456789abcdef"


def live_notebook() -> nbformat.NotebookNode:
    saved = notebook()
    view = {**VIEW, "model_id": MODEL}
    saved.cells[0].outputs[0].data[WIDGET_VIEW] = view
    saved.cells[0].outputs[0].metadata = {
        "course_agent": {"saved_as": "static", "kernel": KERNEL, "pid": 4242}
    }
    return saved


def test_a_reload_gets_the_live_widget_back_while_the_kernel_that_made_it_lives(tmp_path):
    # Issue 33: a browser reload turned live cards static though their kernel still ran.
    kernels = Kernels({KERNEL: 4242})
    manager = FileContentsManager(root_dir=str(tmp_path))
    server = SimpleNamespace(contents_manager=manager, kernel_manager=kernels)
    saving._load_jupyter_server_extension(server)
    model = {
        "type": "notebook",
        "format": "json",
        "content": json.loads(nbformat.writes(live_notebook())),
    }
    manager.save(model, "live.ipynb")
    assert WIDGET_VIEW not in (tmp_path / "live.ipynb").read_text().split('"metadata"')[0]
    reloaded = manager.get("live.ipynb")["content"].cells[0].outputs[0]
    assert reloaded.data[WIDGET_VIEW]["model_id"] == MODEL  # ipywidgets restores it from the kernel
    kernels.pids[KERNEL] = 5151  # restarted: same id, a new process, its widgets gone
    assert WIDGET_VIEW not in manager.get("live.ipynb")["content"].cells[0].outputs[0].data
    del kernels.pids[KERNEL]  # shut down
    assert manager.get("live.ipynb")["content"].cells[0].outputs[0].data == CARD


def test_a_save_keeps_what_the_widget_shows_now(tmp_path, monkeypatch):
    # Issue 33: a replay or an unfolded fragments list, made after the cell ran, was not saved.
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    shown = {
        "text/plain": "v glob\nreplay 1, not sent to the model:\nx glob",
        "text/html": "<p>r</p>",
    }
    folder = tmp_path / "course-agent-shown"
    folder.mkdir()
    (folder / f"{MODEL}.json").write_text(json.dumps(shown))
    saved = live_notebook()
    assert static_outputs(saved) == 1
    assert saved.cells[0].outputs[0].data == shown
    # A name that is not a model id is never read as a path.
    assert saving.read_shown("../" + MODEL) is None


def test_the_package_ships_the_config_that_enables_the_extension():
    shipped = REPO / "jupyter-config" / "jupyter_server_config.d" / "course_agent.json"
    config = json.loads(shipped.read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"course_agent.notebook.saving": True}}}
    assert saving._jupyter_server_extension_points() == [{"module": "course_agent.notebook.saving"}]
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"etc/jupyter/jupyter_server_config.d" = ["jupyter-config/' in pyproject
