"""What a live widget shows now, in its static form, left where this user's Jupyter server reads it.

JupyterLab applies a display update only while its cell runs, so a replay or an unfolded fragments
list, made by a click later, never reaches the notebook's output: the kernel writes the card's
current static form to the Jupyter runtime folder instead, one file per widget, and the server's
save hook (saving.py) saves that. The output's metadata says which kernel process made the widget,
so that the server can give a reloaded page the live widget back while that process lives.
Deliberately not handled: a server on another machine than its kernels (it then saves what the
output held when its cell finished).
"""

from __future__ import annotations

import atexit
import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["MAX_SHOWN_BYTES", "MODEL_ID", "forget_all", "read_shown", "remember", "saved_static"]

MAX_SHOWN_BYTES = 2_000_000  # one widget's static form; a larger one is not written (see above)
MODEL_ID = re.compile(r"[0-9a-f]{32}")  # what ipywidgets names a model: never a path of its own
_written: set[Path] = set()


def _folder() -> Path:
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir()) / "course-agent-shown"


def _kernel() -> dict[str, Any]:
    """{"kernel": its id, "pid": this process} inside a kernel a Jupyter server started, else {}."""
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).name  # kernel-<id>.json, as jupyter_server names it
    except Exception:  # not in a kernel: a plain IPython, a script, a test
        return {}
    found = re.fullmatch(r"kernel-([0-9a-f-]{36})\.json", name)
    return {"kernel": found.group(1), "pid": os.getpid()} if found else {}


def saved_static() -> dict[str, Any]:
    """The output metadata of a live widget: save its static form; the kernel that made it."""
    return {"course_agent": {"saved_as": "static", **_kernel()}}


def remember(model_id: str, bundle: dict[str, str]) -> None:
    """Leave `bundle` (text/plain and text/html) as the static form of widget `model_id`."""
    text = json.dumps(bundle, ensure_ascii=False)
    if not MODEL_ID.fullmatch(model_id) or len(text.encode()) > MAX_SHOWN_BYTES or not _kernel():
        return
    folder = _folder()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{model_id}.json"
    partial = folder / f".{model_id}.{os.getpid()}.tmp"
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)  # the server never reads half a file
    if not _written:
        atexit.register(forget_all)
    _written.add(path)


def forget_all() -> None:
    """Remove every file this process left (at its exit: its widgets are gone with it)."""
    for path in _written:
        path.unlink(missing_ok=True)
    _written.clear()


def read_shown(model_id: str) -> dict[str, str] | None:
    """The static form a kernel left for widget `model_id`, or None."""
    if not MODEL_ID.fullmatch(model_id):
        return None
    path = _folder() / f"{model_id}.json"
    try:
        if path.stat().st_size > MAX_SHOWN_BYTES:
            return None
        bundle = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(bundle, dict):
        return None
    return {
        k: v for k, v in bundle.items() if k in ("text/plain", "text/html") and isinstance(v, str)
    }
