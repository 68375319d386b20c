"""Save live cards as static cards: a Jupyter server extension that edits notebooks on their way.

JupyterLab renders a widget output whose widget state is gone as "Error displaying widget: model
not found", even when the output also holds HTML. So outputs marked SAVE_STATIC lose their widget
view on the way to disk, and keep the static form of what the widget shows at the save (replays,
an open fragments list: shown_forms.py), with the view kept aside in their metadata. On the way
back to a browser (a reload) the view is put back while the kernel process that made the widget
lives, and ipywidgets restores the widget from that kernel; otherwise the static card shows.
Deliberately not handled: other libraries' widgets (unmarked outputs are saved as they are).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from course_agent.notebook.shown_forms import read_shown

__all__ = ["SAVE_STATIC", "WIDGET_VIEW", "live_outputs", "save_static", "static_outputs"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Output metadata that asks for the static form on save: the display's other MIME types.
SAVE_STATIC: dict[str, Any] = {"course_agent": {"saved_as": "static"}}


def _marked(notebook: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The marker dict of every marked output, and the output, of a notebook's code cells."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            marker = output.get("metadata", {}).get("course_agent")
            if isinstance(marker, dict) and marker.get("saved_as") == "static":
                yield output


def static_outputs(notebook: Mapping[str, Any]) -> int:
    """Each marked output's widget view moved into its metadata, its static form brought up to
    what the widget shows (nbformat 4 JSON, edited in place); return how many changed."""
    changed = 0
    for output in _marked(notebook):
        view = output.get("data", {}).pop(WIDGET_VIEW, None)
        if not isinstance(view, dict):
            continue
        output["data"].update(read_shown(str(view.get("model_id", ""))) or {})
        output["metadata"]["course_agent"]["widget"] = view
        changed += 1
    return changed


def live_outputs(notebook: Mapping[str, Any], alive: Callable[[str, int], bool]) -> int:
    """Each marked output's widget view put back if `alive(kernel id, pid)` says the process that
    made it still runs; return how many."""
    restored = 0
    for output in _marked(notebook):
        marker = output["metadata"]["course_agent"]
        view, kernel, pid = marker.get("widget"), marker.get("kernel"), marker.get("pid")
        known = isinstance(view, dict) and isinstance(kernel, str) and isinstance(pid, int)
        if known and alive(kernel, pid):
            output.setdefault("data", {})[WIDGET_VIEW] = view
            restored += 1
    return restored


def save_static(model: dict[str, Any], **_: Any) -> None:
    """A contents manager pre-save hook: the notebook goes to disk with its static cards."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), Mapping):
        static_outputs(model["content"])


def _running(kernels: Any) -> Callable[[str, int], bool]:
    def alive(kernel: str, pid: int) -> bool:
        try:
            return kernel in kernels and kernels.get_kernel(kernel).provisioner.pid == pid
        except Exception:  # a provisioner without a pid (a remote kernel): say no
            return False

    return alive


def _serve_live(contents: Any, kernels: Any) -> None:
    """Wrap `contents.get`: a notebook read for a browser gets its live widgets back."""
    get = contents.get
    alive = _running(kernels)

    def restore(model: Any) -> Any:
        notebook = isinstance(model, dict) and model.get("type") == "notebook"
        if notebook and isinstance(model.get("content"), Mapping):
            live_outputs(model["content"], alive)
        return model

    if inspect.iscoroutinefunction(get):

        @functools.wraps(get)
        async def get_async(*args: Any, **kwargs: Any) -> Any:
            return restore(await get(*args, **kwargs))

        contents.get = get_async
    else:

        @functools.wraps(get)
        def get_sync(*args: Any, **kwargs: Any) -> Any:
            return restore(get(*args, **kwargs))

        contents.get = get_sync


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Enabled by jupyter-config/course_agent.json, which a regular `pip install` puts in the
    environment's etc/jupyter/jupyter_server_config.d; an editable install skips it (copy it there
    by hand: `jupyter server extension enable` refuses a module no config file names yet)."""
    serverapp.contents_manager.register_pre_save_hook(save_static)
    _serve_live(serverapp.contents_manager, serverapp.kernel_manager)
