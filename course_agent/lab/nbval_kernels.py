"""nbval's kernel for the hand-in: in the grading sandbox, its one writable place a fresh folder,
or, where no sandbox starts, a plain kernel whose environment holds no keys.

nbval drives the kernel through its RunningKernel (a manager and a blocking client); this module
hands it ours, over unix sockets, one that notices a dead kernel (nbval alone waits out its whole
cell timeout, 2,000 s by default, for a reply that will never come) and stops reading a notebook
that prints past OUTPUT_LIMIT (the pytest process holds what nbval reads, outside any sandbox).
Deliberately not handled: the cells' outputs (nbval compares them) and the judge (lab/handin.py).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from queue import Empty
from typing import Any

import zmq
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel

from course_agent.lab.jail import blocking_kernel_manager
from course_agent.lab.kernel import OUTPUT_LIMIT, kernel_environment
from course_agent.lab.kernel_spec import bounded, current_env_specs

__all__ = ["WatchedKernel", "start_kernel"]

POLL_SECONDS = 1.0  # how often a wait for a reply looks whether the kernel still lives


class KernelDied(RuntimeError):
    """The kernel is gone: nbval reports it on the cell that was running."""


class TooMuchOutput(RuntimeError):
    """The notebook printed past OUTPUT_LIMIT: nbval reports it on each cell from then on."""


class BoundedSockets(zmq.Context):
    """The client's sockets, as the grader's (kernel.py): a bounded queue and message size, so a
    kernel printing without end cannot fill this process's memory (pytest is not sandboxed)."""

    def socket(self, *args: Any, **kwargs: Any) -> Any:
        return bounded(super().socket(*args, **kwargs))


class WatchedKernel(RunningKernel):
    """nbval's RunningKernel around a manager we started, whose waits end when the kernel dies."""

    def __init__(self, manager: Any, client: Any) -> None:  # nbval's own starts a kernel itself
        self.km, self.kc = manager, client
        self.printed = 0  # characters of output read so far, every cell together
        self._ensure_iopub_up()

    def get_message(self, stream: str, timeout: float | None = None) -> dict[str, Any]:
        if self.printed > OUTPUT_LIMIT:
            raise TooMuchOutput(f"the notebook printed more than {OUTPUT_LIMIT:,} characters")
        ends = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SECONDS if ends is None else min(POLL_SECONDS, ends - time.monotonic())
            try:
                message = super().get_message(stream, timeout=max(left, 0))
                content = message.get("content", {})
                self.printed += len(str(content.get("text", ""))) + len(
                    str(content.get("data", ""))
                )
                return message
            except Empty:
                if not self.km.is_alive():
                    raise KernelDied(
                        "the kernel died (a cell ended its process, or a sandbox limit did)"
                    ) from None
                if ends is not None and time.monotonic() >= ends:
                    raise


def start_kernel(folder: Path, startup_timeout: float, *, sandbox: bool) -> WatchedKernel:
    """A kernel of this interpreter for nbval, started in `folder`: jailed there (`folder` its one
    writable place) with `sandbox`, else a plain one without keys."""
    specs = current_env_specs()  # nbval's current-env kernel, started without a debugger
    if sandbox:
        manager = blocking_kernel_manager(
            kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=specs
        )
        manager.start_kernel(cwd=str(folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        manager = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=specs)
        manager.start_kernel(
            cwd=str(folder),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=kernel_environment(),
        )
    client = manager.client(context=BoundedSockets())
    client._created_context = True  # so that stopping the client closes its sockets' context
    client.start_channels()
    try:
        client.wait_for_ready(timeout=startup_timeout)
        return WatchedKernel(manager, client)
    except BaseException:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        raise
