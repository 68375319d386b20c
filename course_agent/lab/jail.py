"""A grading kernel in a bubblewrap sandbox: it, and all it starts, reach nothing but themselves.

Own PID, network, IPC, UTS and user namespaces, no capabilities, an empty environment but for a
few harmless names, a read-only view of the system and of Python (python_view.py: the package's
given copy wherever it could be imported), one fresh private writable folder (private.py), caps
on memory, processes and CPU (cgroups where the grader may create them, else resource limits),
and a wall deadline per notebook. The grader talks to the kernel over
unix sockets the kernel makes in a folder bound in, connecting only to its own links to them
(channel.py).
Deliberately not handled: disk quotas (the private folder is in the grader's temporary folder),
machines where bubblewrap cannot start (`sandbox_problem` says why; the caller decides).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_agent.lab.cgroups import Cgroups, cgroup_folders
from course_agent.lab.channel import grader_side, kernel_side, new_channel, take
from course_agent.lab.kernel_spec import current_env_kernels
from course_agent.lab.private import discard, private_folder
from course_agent.lab.python_view import python_view

__all__ = [
    "GB",
    "Limits",
    "blocking_kernel_manager",
    "jail_command",
    "jailed_kernels",
    "kernel_manager",
    "sandbox_problem",
]

GB = 1024**3


@dataclass(frozen=True)
class Limits:
    """What one notebook's sandbox may use (docs/sandbox.md gives each figure's reason)."""

    # Measured on the solved lab (benchmarks/grade_timing.py's notebook, in the sandbox): a
    # peak of 64 MB resident, 11 threads, 0.7 s of CPU, about 4 s from start to end.
    memory: int = 1 * GB  # bytes, every process of the sandbox together (cgroup, or RLIMIT_AS)
    processes: int = 256  # processes and threads together (cgroup pids, or RLIMIT_NPROC)
    cpu_seconds: int = 300  # all processes together (cgroup cpuacct), else each (RLIMIT_CPU)
    wall_seconds: float = 600  # the whole notebook, kernel start to end, then killed


# What a kernel sees of the environment: these names, and no others (PATH and HOME are set).
PASSED_ON = ("LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH", "TZ")
# Of /etc, what Python and the dynamic loader read; the rest (passwd, hosts, ssl keys) stays out.
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types")
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# Run by the grader's interpreter between the grader and bwrap: joins the cgroups and sets the
# resource limits there, so that bwrap and everything under it inherit them from the first
# instruction (argv: JSON {"procs": [file, ...], "limits": {"RLIMIT_CPU": [soft, hard]}}, bwrap...).
ENTER = """\
import json, os, resource, sys
setup = json.loads(sys.argv[1])
for procs in setup["procs"]:
    with open(procs, "w") as file:
        file.write(str(os.getpid()))
for name, (soft, hard) in setup["limits"].items():
    resource.setrlimit(getattr(resource, name), (soft, hard))
os.execv(sys.argv[2], sys.argv[2:])
"""


@functools.cache
def sandbox_problem() -> str:
    """Why no sandbox starts here, in one line that says what to do; "" when one does."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    probe = [bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap would not run: {exc}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1][:160]
        return f"bubblewrap cannot make a sandbox here ({said}): allow user namespaces"
    return ""


def _binds(mounts: Sequence[tuple[Path, Path]], flag: str) -> list[str]:
    return [arg for source, target in mounts for arg in (flag, str(source), str(target))]


def jail_command(
    private: Path,
    limits: Limits,
    package: Path | None = None,
    channel: Path | None = None,
) -> list[str]:
    """bwrap's arguments up to the command: the sandbox of one kernel, `private` its writable
    folder, `package` the copy of course_agent it sees wherever Python would find the package
    (default: this process's own), `channel` (channel.py's; its kernel side bound where it is)
    the folder of the unix sockets to the grader."""
    command = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user"]
    command += ["--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    command += ["--hostname", "sandbox", "--clearenv"]
    environ = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    environ |= {"HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONNOUSERSITE": "1", "USER": "student"}
    environ["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    command += [arg for name, value in environ.items() for arg in ("--setenv", name, value)]
    for top in map(Path, SYSTEM):
        if top.is_symlink():  # merged /usr: /bin -> usr/bin
            command += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            command += ["--ro-bind", str(top), str(top)]
    etc = [Path("/etc", name) for name in ETC]
    command += _binds([(path, path) for path in etc if path.exists()], "--ro-bind")
    command += ["--proc", "/proc", "--dev", "/dev"]
    command += ["--size", str(limits.memory), "--tmpfs", "/tmp"]
    # Of Python, only what the interpreter needs, `package` wherever course_agent could be found.
    command += python_view(package, environ.get("PYTHONPATH"), SYSTEM).arguments()
    command += ["--bind", str(private), str(private)]
    if channel is not None:
        command += ["--bind", str(kernel_side(channel)), str(kernel_side(channel))]
    command += ["--chdir", str(private)]
    return [*command, "--remount-ro", "/"]


def _rlimits(limits: Limits, cgroups: Cgroups) -> dict[str, tuple[int, int]]:
    """Resource limits for what the cgroups do not cap; CPU always (SIGXCPU, then SIGKILL), a
    backstop 5 s late where the cgroup counts the notebook's CPU (JailedKernels._watch)."""
    cpu = limits.cpu_seconds + (5 if "cpuacct" in cgroups.folders else 0)
    chosen = {"RLIMIT_CPU": (cpu, cpu + 5)}
    if "memory" not in cgroups.folders:
        chosen["RLIMIT_AS"] = (limits.memory, limits.memory)
    if "pids" not in cgroups.folders:
        chosen["RLIMIT_NPROC"] = (limits.processes, limits.processes)
    return chosen


class _Sandbox:
    """What makes a kernel manager's kernel run jailed: mixed in before a jupyter_client manager
    (the grader's async one, or nbval's blocking one), it wraps the kernel's command in ENTER and
    bwrap, moves the connection to unix sockets, and watches the limits."""

    limits = Limits()
    private: Path | None = None  # None: one of its own, made as it starts (nbgrader's, nbval's)
    made: Path | None = None  # the private folder this sandbox made, and removes
    channel: Path | None = None  # the connection file and the sockets (channel.py)
    package: Path | None = None  # the course_agent it sees (None: this process's own)
    cgroups: Cgroups | None = None
    process: subprocess.Popen | None = None
    done: threading.Event | None = None  # set when the sandbox is released
    stopped = ""  # which limit the grader stopped it for, when it did

    @property
    def kernel_spec(self) -> Any:
        spec = super().kernel_spec  # type: ignore[misc]
        spec.interrupt_mode = "message"  # a signal would reach bwrap, not the kernel
        return spec

    async def _async_pre_start_kernel(self, **kw: Any) -> Any:
        if self.private is None:  # the folder asked for (nbgrader's autograded/) is never it
            asked = kw.get("cwd")
            self.private = self.made = private_folder(None if asked is None else Path(asked))
        kw["cwd"] = str(self.private)
        self.channel = channel = new_channel()
        self.transport, self.ip = "ipc", str(kernel_side(channel) / "kernel-ipc")
        self.connection_file = str(kernel_side(channel) / "kernel.json")
        return await super()._async_pre_start_kernel(**kw)  # type: ignore[misc]

    async def _async_post_start_kernel(self, **kw: Any) -> None:
        # The kernel's folder is its to write: the grader connects only to its own links to the
        # sockets the kernel made there (channel.py), never by a name the kernel could swap.
        assert self.channel is not None  # set by _async_pre_start_kernel
        ports = [self.shell_port, self.iopub_port, self.stdin_port, self.control_port]
        names = [f"kernel-ipc-{port}" for port in [*ports, self.hb_port]]
        process = self.process
        await take(self.channel, names, lambda: process is None or process.poll() is None)
        self.ip = str(grader_side(self.channel) / "kernel-ipc")
        await super()._async_post_start_kernel(**kw)  # type: ignore[misc]

    async def _async_start_kernel(self, **kw: Any) -> None:
        try:
            await super()._async_start_kernel(**kw)  # type: ignore[misc]
        except BaseException:  # started halfway (its sockets refused, say): undo it all
            self.release()
            raise

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        limits = self.limits
        self.cgroups = Cgroups(limits.memory, limits.processes, cgroup_folders())
        setup = {"procs": self.cgroups.procs(), "limits": _rlimits(self.limits, self.cgroups)}
        enter = [sys.executable, "-I", "-S", "-c", ENTER, json.dumps(setup)]
        inner = super().format_kernel_cmd(extra_arguments)  # type: ignore[misc]
        private = self.private or Path.cwd()  # set by _async_pre_start_kernel, which runs first
        jail = jail_command(private, self.limits, self.package, self.channel)
        return [*enter, *jail, *inner]

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        # bwrap's own processes keep the environment they get, and the kernel can read
        # theirs in /proc/1/environ: they get nothing of the grader's either.
        # ("independent": jupyter_client then adds no JPY_PARENT_PID, the grader's pid.)
        kw |= {"env": {"PATH": os.defpath, "LANG": "C.UTF-8"}, "independent": True}
        await super()._async_launch_kernel(kernel_cmd, **kw)  # type: ignore[misc]
        self.process = self.provisioner.process  # type: ignore[attr-defined]
        self.done = threading.Event()
        threading.Thread(target=self._watch, args=(self.done,), daemon=True).start()

    def _watch(self, done: threading.Event) -> None:
        """Four times a second until `done`: stop the sandbox past the notebook's wall limit,
        or once all its processes together used its CPU limit."""
        wall, cpu = self.limits.wall_seconds, self.limits.cpu_seconds
        ends = time.monotonic() + wall
        while not done.wait(0.25):
            used = None if self.cgroups is None else self.cgroups.cpu_seconds()
            if time.monotonic() > ends:
                return self.stop(f"the notebook ran over its wall limit of {wall:g} s")
            if used is not None and used > cpu:
                return self.stop(f"the notebook used its CPU limit of {cpu} s")

    def stop(self, why: str) -> None:
        """Kill the whole sandbox now (any thread): bwrap's init dies, and all under it."""
        self.stopped = why
        if self.process is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroups is not None:
            for procs in self.cgroups.procs():
                for pid in Path(procs).read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)

    def limit_hit(self) -> str:
        """Which limit ended the sandbox ("" when none, or none we can tell)."""
        if self.stopped:
            return self.stopped
        if self.cgroups is not None and self.cgroups.memory_killed():
            return f"the sandbox's memory limit ({self.limits.memory / GB:g} GB) was reached"
        code = None if self.process is None else self.process.poll()
        if code == 128 + signal.SIGXCPU or code == -signal.SIGXCPU:
            return f"a process ran over its CPU limit of {self.limits.cpu_seconds} s"
        return ""

    def release(self) -> None:
        """Kill what is left of the sandbox and remove its cgroups (again: no harm)."""
        if self.done is not None:
            self.done.set()
        if self.process is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroups is not None:
            self.cgroups.remove()
        if self.channel is not None:
            discard(self.channel)
        if self.made is not None:  # what the kernel wrote: removed, no link in it followed
            discard(self.made)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)  # type: ignore[misc]
        self.release()


@functools.cache
def jailed_kernels() -> type:
    """The grader's manager (async, for nbclient): the current-env kernel, jailed."""

    class JailedKernels(_Sandbox, current_env_kernels()):  # type: ignore[misc]
        # AsyncKernelManager binds these names to the base class's functions, not to overrides
        start_kernel = _Sandbox._async_start_kernel
        cleanup_resources = _Sandbox._async_cleanup_resources

    return JailedKernels


@functools.cache
def _blocking_jailed_kernels() -> type:
    """nbval's manager (blocking, for its RunningKernel): the current-env kernel, jailed."""
    from jupyter_client.manager import KernelManager
    from jupyter_core.utils import run_sync

    class BlockingJailedKernels(_Sandbox, KernelManager):  # type: ignore[misc]
        start_kernel = run_sync(_Sandbox._async_start_kernel)
        cleanup_resources = run_sync(_Sandbox._async_cleanup_resources)

    return BlockingJailedKernels


def kernel_manager(
    folder: Path, *, limits: Limits | None = None, package: Path | None = None
) -> Any:
    """An (async) KernelManager whose kernel runs jailed with `folder` (fresh, private.py's) as
    its one writable place; for nbclient's `NotebookClient(km=...)`. `package`: the copy of
    course_agent the kernel sees wherever Python would find the package (default: this one).

    The connection file and the unix sockets are in a folder of their own while the kernel runs;
    its shutdown (or cleanup_resources, or `release()`) kills what is left, removes its cgroups
    and that folder.
    """
    manager = jailed_kernels()()
    manager.limits, manager.private, manager.package = limits or Limits(), folder, package
    return manager


def blocking_kernel_manager(**kwargs: Any) -> Any:
    """A blocking KernelManager (jupyter_client's own, `kwargs` its traits) whose kernel runs
    jailed in a private folder of its own, the helper modules of the folder it is started in
    (`start_kernel(cwd=...)`) copied there, under `Limits()`: for nbval's kernel in the hand-in
    (lab/handin.py)."""
    return _blocking_jailed_kernels()(**kwargs)
