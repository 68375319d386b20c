"""Save live cards as static cards: a Jupyter server extension that edits notebooks on save.

JupyterLab renders a widget output whose widget state is gone as "Error displaying widget: model
not found", even when the output also holds HTML. So outputs marked SAVE_STATIC lose their widget
view on the way to disk: the open notebook keeps the live widget, the file keeps the static card.
Deliberately not handled: other libraries' widgets (unmarked outputs are saved as they are).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SAVE_STATIC", "WIDGET_VIEW", "save_static", "static_outputs"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Output metadata that asks for the static form on save: the display's other MIME types.
SAVE_STATIC: dict[str, Any] = {"course_agent": {"saved_as": "static"}}


def _is_marked(output: Mapping[str, Any]) -> bool:
    marker = output.get("metadata", {}).get("course_agent")
    return isinstance(marker, Mapping) and marker.get("saved_as") == "static"


def static_outputs(notebook: Mapping[str, Any]) -> int:
    """Drop the widget view from every marked output of a notebook (nbformat 4 JSON, edited in
    place); return how many outputs changed."""
    changed = 0
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if _is_marked(output) and WIDGET_VIEW in output.get("data", {}):
                del output["data"][WIDGET_VIEW]
                changed += 1
    return changed


def save_static(model: dict[str, Any], **_: Any) -> None:
    """A contents manager pre-save hook: the notebook goes to disk with its static cards."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), Mapping):
        static_outputs(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Enabled by jupyter-config/course_agent.json, which a regular `pip install` puts in the
    environment's etc/jupyter/jupyter_server_config.d; an editable install skips it (copy it there
    by hand: `jupyter server extension enable` refuses a module no config file names yet)."""
    serverapp.contents_manager.register_pre_save_hook(save_static)
