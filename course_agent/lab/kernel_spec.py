"""How a lab's kernel starts: this interpreter's ipykernel, whatever kernel name is asked for,
as nbval's --nbval-current-env starts it, less the debugger; its manager's sockets bounded.

The grader's kernels, nbval's in the hand-in and nbgrader's all take their spec and manager
from here (jail.py wraps the manager, kernel.py runs it: neither imports the other back).
Deliberately not handled: where the kernel runs and what it may reach (lab/jail.py), and its
environment (kernel_environment in lab/kernel.py).
"""

from __future__ import annotations

import functools
from typing import Any

from course_agent.lab.wire import LARGEST_MESSAGE, QUEUED_MESSAGES, bounded, bounded_client

__all__ = [
    "LARGEST_MESSAGE",
    "LAUNCH",
    "QUEUED_MESSAGES",
    "bounded",
    "current_env_kernels",
    "current_env_specs",
]

# How a lab's kernel starts: ipykernel_launcher's steps (the working folder off the import path,
# unless PYTHONSAFEPATH left it off already; then the app), less the debugger. ipykernel imports
# debugpy as it starts, 60 of the 220 ms of CPU a kernel's start takes (measured); nobody
# attaches a debugger to a kernel that grades.
LAUNCH = """\
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
sys.modules["debugpy"] = None
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


@functools.cache
def _current_env_specs() -> type:
    """Kernel specs that, whatever the name asked for, give this interpreter's ipykernel, started
    by LAUNCH (nbval's --nbval-current-env, less the debugger)."""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> Any:
            spec = ipykernel.kernelspec.get_kernel_dict()
            # [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]: the module's place
            where = spec["argv"].index("-m")
            spec["argv"][where : where + 2] = ["-c", LAUNCH]
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES, **spec)

    return CurrentEnvSpecs


def current_env_specs() -> Any:
    """A KernelSpecManager whose every kernel is this interpreter's, started without a debugger."""
    return _current_env_specs()()


@functools.cache
def current_env_kernels() -> type:
    """A kernel manager whose kernels run this interpreter, like nbval's --nbval-current-env.

    Async on purpose: nbclient polls a blocking manager's channels forever once its kernel dies.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Type, default

    class CurrentEnvKernelManager(AsyncKernelManager):
        client_factory = Type(bounded_client())  # every byte it reads counted (wire.py)

        @default("kernel_spec_manager")
        def _default_kernel_spec_manager(self) -> KernelSpecManager:
            return current_env_specs()

    return CurrentEnvKernelManager
