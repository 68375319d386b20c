"""Run a lab notebook in a fresh kernel of this interpreter, with an environment that holds no keys.

Every kernel the package starts for a lab (grading, `lab execute`, the nbval hand-in) gets its
environment from `kernel_environment`, the one place that decides what a key looks like.
A run is bounded by the per-cell timeout, a wall deadline per notebook, and how much of the
kernel's output it holds; with `sandbox`, the kernel runs in `jail`'s sandbox under its limits.
Deliberately not handled: confinement without `sandbox` (a plain kernel can read any file its user
can, use any memory, and leave a detached child behind).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from course_agent.lab.jail import Limits, kernel_manager
from course_agent.lab.kernel_spec import current_env_kernels
from course_agent.lab.private import discard, private_folder
from course_agent.lab.wire import Wire

# nbclient, jupyter_client and ipykernel are the test extra's (and the `lab` extra's): they are
# imported where they are used, so that the CLI starts without them.

__all__ = [
    "OUTPUT_LIMIT",
    "is_key_name",
    "kernel_environment",
    "output_kept",
    "run_notebook",
    "stop_kernel",
]

# OPENAI_API_KEY, GITHUB_TOKEN, aws_secret, DB_PASSWORD, ... in any case: the name's last part.
KEY_NAME = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
SHORTEST_KEY = 8  # a removed value this long is also looked for inside the values that stay
# Bytes of output a run keeps in the notebook, all cells together, counted as they were sent
# (wire.py); later outputs are dropped. A lab prints a few thousand.
OUTPUT_LIMIT = 10_000_000


def is_key_name(name: str) -> bool:
    """Whether a variable of this name holds a secret, judged by its name alone."""
    return KEY_NAME.search(name) is not None


def kernel_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without keys, for a kernel that runs someone's code.

    A variable is dropped when its name looks like a key's, and also when its value contains a
    dropped key (`OPENAI_BASE_URL=https://proxy/?key=sk-...`, a proxy URL with a password).
    """
    environ = dict(os.environ if environ is None else environ)
    secrets = [value for name, value in environ.items() if is_key_name(name)]
    secrets = [value for value in secrets if len(value) >= SHORTEST_KEY]
    return {
        name: value
        for name, value in environ.items()
        if not is_key_name(name) and not any(secret in value for secret in secrets)
    }


def output_kept(km: Any, msg: dict[str, Any]) -> bool:
    """Whether an output message still fits in OUTPUT_LIMIT bytes, all kept outputs counted as
    they were sent (a message read elsewhere: its content as JSON)."""
    size = msg.get("wire_bytes")
    if not isinstance(size, int):
        size = len(json.dumps(msg.get("content"), default=str).encode())
    km.output_kept = getattr(km, "output_kept", 0) + size
    return km.output_kept <= OUTPUT_LIMIT


@functools.cache
def _capped_client() -> type:
    """nbclient's client, keeping outputs until OUTPUT_LIMIT bytes, then dropping the rest."""
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
            if output_kept(self.km, msg):
                return super().output(outs, msg, display_id, cell_index)
            return None

    return CappedClient


def _cell(index: int) -> str:
    """A cell counted from 1, as people count cells in a notebook."""
    return f"cell {index + 1}"


def _replies_to(on_reply: Callable[[int, Any], None]) -> Callable[..., None]:
    """nbclient's hook after a cell (cell, cell_index, execute_reply) as on_reply(index, reply)."""
    return lambda cell, cell_index, execute_reply: on_reply(cell_index, execute_reply)


def run_notebook(
    nb: Any,
    timeout: float,
    cwd: Path | None = None,
    describe: Callable[[int], str] = _cell,
    on_reply: Callable[[int, Any], None] | None = None,
    *,
    limits: Limits | None = None,
    sandbox: bool = False,
    package: Path | None = None,
    pythonpath: Path | None = None,
) -> str:
    """Execute `nb` in place in a fresh kernel; "" or what stopped the run.

    The kernel starts in a new folder of its own, the `*.py` modules directly in `cwd` (the
    notebook's folder) copied in (lab/private.py), and nothing else beside the notebook (a `.env`
    say) at hand; what it writes there is discarded, no link in it followed. An exception inside
    a cell does not stop the run (its output is stored, as in JupyterLab, up to OUTPUT_LIMIT
    bytes in all); a cell running over `timeout` seconds, the whole run over
    `limits.wall_seconds`, or a dying kernel, does, and `describe(index)` names that cell in the
    message. `on_reply(index, reply)` gets the kernel's reply to each cell that ran (its status;
    for an error, its name and text).
    With `sandbox`, the kernel runs in `jail.kernel_manager`'s sandbox under `limits` (default
    `Limits()`), that folder its only writable one, `package` the copy of course_agent it sees
    wherever Python would find the package (lab/strip.py's). Outside a sandbox, `pythonpath`
    goes first on the kernel's import path (the same copy).
    """
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    started: list[int] = []  # cell indexes in the order they started: the last one is running
    # What the notebook leaves in temporary folders goes in one we remove, even if it kills its
    # kernel; the kernel's own stderr (connection warnings, "parent exited") is noise in a table.
    # One folder: the kernel's working (in the sandbox, only writable) one, a plain one's TMPDIR.
    folder = private_folder(cwd, prefix="course-agent-run-")  # absolute, as bwrap binds them
    tmp = str(folder)
    try:
        if sandbox:
            km = kernel_manager(folder, limits=limits or Limits(), package=package)
        else:
            km = current_env_kernels()(kernel_name="current-env")
        km.wire = Wire(stop=lambda why: stop_kernel(km, why))
        client = _capped_client()(
            nb,
            km=km,
            timeout=timeout,
            allow_errors=True,
            record_timing=False,
            # Killed once its cells ran, not asked to exit and waited for (0.1 s a notebook):
            # nothing it would still do counts, and its folder goes anyway.
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(folder)}},
            on_cell_start=lambda cell, cell_index: started.append(cell_index),
            on_cell_executed=None if on_reply is None else _replies_to(on_reply),
        )
        env = {**kernel_environment(), "TMPDIR": tmp, "TEMP": tmp, "TMP": tmp}
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(pythonpath), env.get("PYTHONPATH")])
            )
        where = lambda: describe(started[-1]) if started else "a cell"  # noqa: E731
        # A sandbox keeps its own deadline; a plain kernel gets this one.
        deadline = None if limits is None or sandbox else _deadline(km, limits.wall_seconds)
        try:
            client.execute(
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cleanup_kc=True
            )
            if km.wire.stopped:  # stopped in the last cell, after its reply came
                return f"stopped: {km.wire.stopped}, in {where()}"
        except CellTimeoutError:
            if km.wire.stopped:
                return f"stopped: {km.wire.stopped}, in {where()}"
            return f"timeout: {where()} ran over {timeout:g} s"
        except DeadKernelError:
            stopped = _limit_hit(km)
            return f"stopped: {stopped}, in {where()}" if stopped else f"kernel died in {where()}"
        except Exception as exc:  # a signed message of a shape no kernel sends (a KeyError)
            if not started:
                raise  # no cell ran: the kernel did not start, which is the grader's side
            said = _one_line_error(exc)
            return f"stopped: the kernel sent a message no kernel sends ({said}), in {where()}"
        finally:
            if deadline is not None:
                deadline.cancel()
            if hasattr(km, "release"):
                km.release()
    finally:
        discard(folder)
    return ""


def _one_line_error(exc: BaseException) -> str:
    """`exc` as `KeyError: 'name'`, its first line, at most 100 characters."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:100]


def stop_kernel(km: Any, why: str) -> None:
    """Kill `km`'s kernel now (with a sandbox: all of it), from any thread, for `why`."""
    if hasattr(km, "stop"):
        km.stop(why)
    elif (process := getattr(km.provisioner, "process", None)) is not None:
        km.stopped = why  # the kernel leads its own session (jupyter_client starts it so)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)


def _deadline(km: Any, seconds: float) -> threading.Timer:
    """A timer that kills the kernel (with a sandbox: all of it) `seconds` from now."""
    why = f"the notebook ran over its wall limit of {seconds:g} s"
    timer = threading.Timer(seconds, stop_kernel, (km, why))
    timer.daemon = True
    timer.start()
    return timer


def _limit_hit(km: Any) -> str:
    """Which limit stopped the kernel, as a phrase; "" when it died on its own."""
    wire = getattr(km, "wire", None)
    if wire is not None and wire.stopped:
        return wire.stopped
    if hasattr(km, "limit_hit"):
        return km.limit_hit()
    return getattr(km, "stopped", "")
