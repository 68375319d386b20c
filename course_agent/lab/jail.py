"""A grading kernel in a bubblewrap sandbox: it, and all it starts, reach nothing but themselves.

Own PID, network, IPC, UTS and user namespaces, no capabilities, an empty environment but for a
few harmless names, a read-only view of the system, the interpreter and the package, one private
writable folder, and caps on memory, processes and CPU (cgroups where the grader may create them,
else resource limits). The grader talks to the kernel over unix sockets in the private folder.
Deliberately not handled: the wall deadline per notebook (`kernel.run_notebook` stops the sandbox
with `JailedKernels.stop`), disk quotas (the folders are tmpfs or the grader's temporary folder).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import site
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Limits", "cgroup_folders", "jail_command", "kernel_manager", "sandbox_problem"]

GB = 1024**3


@dataclass(frozen=True)
class Limits:
    """What one notebook's sandbox may use (docs/sandbox.md gives each figure's reason)."""

    memory: int = 2 * GB  # bytes, every process of the sandbox together (a solved lab: 150 MB)
    processes: int = 256  # processes and threads together (an idle kernel has 10 threads)
    cpu_seconds: int = 600  # per process (RLIMIT_CPU); a solved lab takes 5
    wall_seconds: float = 900  # the whole notebook, start to end, killed by the grader


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
    """ "" when a sandbox starts here, else one line saying why not and what to do."""
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


def _cgroup_mounts() -> dict[str, Path]:
    """{"memory": mount point, ...} for cgroup v1 controllers; {"": mount point} for v2."""
    mounts: dict[str, Path] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, point, kind, options, *_ = line.split()
        if kind == "cgroup2":
            mounts.setdefault("", Path(point))
        elif kind == "cgroup":
            for option in options.split(","):
                mounts.setdefault(option, Path(point))
    return mounts


def cgroup_folders() -> dict[str, Path]:
    """Where this process may create a child cgroup for "memory", "pids" and "cpuacct".

    Nested under the grader's own cgroups, so that whatever bounds the grader bounds its kernels.
    v2 only where the controllers are already delegated to children (subtree_control).
    """
    mounts, found = _cgroup_mounts(), {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else []:
            if name in ("memory", "pids", "cpuacct") and name in mounts:
                found[name] = mounts[name] / path.lstrip("/")
        if not names and "" in mounts:  # v2: one hierarchy, controllers listed in files
            folder = mounts[""] / path.lstrip("/")
            delegated = (folder / "cgroup.subtree_control").read_text().split()
            found |= {name: folder for name in ("memory", "pids") if name in delegated}
    return {name: folder for name, folder in found.items() if os.access(folder, os.W_OK | os.X_OK)}


def _binds(mounts: Sequence[tuple[Path, Path]], flag: str) -> list[str]:
    return [arg for source, target in mounts for arg in (flag, str(source), str(target))]


def _readable() -> list[tuple[Path, Path]]:
    """The interpreter, its site-packages and this package: read-only, each where it is."""
    import course_agent

    package = Path(course_agent.__file__).resolve().parent
    folders = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent}
    folders |= {Path(folder) for folder in site.getsitepackages()}
    # An editable install imports the package from its checkout: only the package folder is
    # bound, never the checkout around it, which may hold a .env.
    folders = {folder.resolve() for folder in folders if folder.is_dir()}
    return [(folder, folder) for folder in sorted(folders)] + [(package, package)]


def jail_command(
    private: Path, limits: Limits, binds: Sequence[tuple[Path, Path]] = ()
) -> list[str]:
    """bwrap's arguments up to the command: the sandbox of one kernel, `private` its only
    writable folder (bound where it is: the unix sockets to the grader live there)."""
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
    command += _binds(_readable(), "--ro-bind") + _binds(binds, "--ro-bind")
    command += ["--bind", str(private), str(private), "--chdir", str(private)]
    return [*command, "--remount-ro", "/"]


class Cgroups:
    """One sandbox's cgroups (possibly none): made with its limits, emptied and removed after."""

    def __init__(self, limits: Limits, folders: dict[str, Path]) -> None:
        name = f"course-agent-{secrets.token_hex(6)}"
        self.out_of_memory = False
        self.folders = {kind: parent / name for kind, parent in folders.items()}
        settings = {
            "memory": {"memory.limit_in_bytes": limits.memory, "memory.max": limits.memory},
            "pids": {"pids.max": limits.processes},
        }
        for kind, folder in self.folders.items():
            folder.mkdir(exist_ok=True)
            for file, value in settings.get(kind, {}).items():
                if (folder / file).exists():
                    (folder / file).write_text(str(value))
        # v1 swaps past memory.limit_in_bytes unless memsw is capped too (where there is swap)
        with contextlib.suppress(OSError):
            (self.folders["memory"] / "memory.memsw.limit_in_bytes").write_text(str(limits.memory))

    def procs(self) -> list[str]:
        """The files a process writes its pid to, to join every one of these cgroups."""
        return sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})

    def memory_killed(self) -> bool:
        """Whether the kernel's out-of-memory killer stopped a process of this sandbox."""
        if self.out_of_memory:
            return True
        folder = self.folders.get("memory")
        for file in ("memory.oom_control", "memory.events"):
            with contextlib.suppress(OSError, KeyError):
                pairs = (line.split() for line in (folder / file).read_text().splitlines())
                if int(dict(pairs)["oom_kill"]):
                    return True
        return False

    def remove(self) -> None:
        """Kill whatever is left in them (a detached grandchild, say), then remove them."""
        self.out_of_memory = self.memory_killed()  # what the files say, before they go
        for _ in range(50):
            left = set()
            for folder in self.folders.values():
                with contextlib.suppress(OSError):
                    left |= set((folder / "cgroup.procs").read_text().split())
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
            for folder in list(self.folders.values()):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            if not any(folder.exists() for folder in self.folders.values()):
                return
            time.sleep(0.02)


def _rlimits(limits: Limits, cgroups: Cgroups) -> dict[str, tuple[int, int]]:
    """Resource limits for what the cgroups do not cap; CPU always (SIGXCPU, then SIGKILL)."""
    chosen = {"RLIMIT_CPU": (limits.cpu_seconds, limits.cpu_seconds + 5)}
    if "memory" not in cgroups.folders:
        chosen["RLIMIT_AS"] = (limits.memory, limits.memory)
    if "pids" not in cgroups.folders:
        chosen["RLIMIT_NPROC"] = (limits.processes, limits.processes)
    return chosen


@functools.cache
def _jailed_kernels() -> type:
    """The manager class: the current-env kernel, its command wrapped in ENTER and bwrap."""
    from jupyter_client.kernelspec import KernelSpec

    from course_agent.lab.kernel import _current_env_kernels

    class JailedKernels(_current_env_kernels()):  # type: ignore[misc]
        limits: Limits
        private: Path
        binds: Sequence[tuple[Path, Path]]
        cgroups: Cgroups | None = None
        process: subprocess.Popen | None = None
        stopped = ""  # which limit the grader stopped it for, when it did

        @property
        def kernel_spec(self) -> KernelSpec:
            spec = super().kernel_spec
            spec.interrupt_mode = "message"  # a signal would reach bwrap, not the kernel
            return spec

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            self.cgroups = Cgroups(self.limits, cgroup_folders())
            setup = {"procs": self.cgroups.procs(), "limits": _rlimits(self.limits, self.cgroups)}
            enter = [sys.executable, "-I", "-S", "-c", ENTER, json.dumps(setup)]
            inner = super().format_kernel_cmd(extra_arguments)
            return [*enter, *jail_command(self.private, self.limits, self.binds), *inner]

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            # bwrap's own processes keep the environment they get, and the kernel can read
            # theirs in /proc/1/environ: they get nothing of the grader's either.
            # ("independent": jupyter_client then adds no JPY_PARENT_PID, the grader's pid.)
            kw |= {"env": {"PATH": os.defpath, "LANG": "C.UTF-8"}, "independent": True}
            await super()._async_launch_kernel(kernel_cmd, **kw)
            self.process = self.provisioner.process  # type: ignore[union-attr]

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
            if self.process is not None:
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            if self.cgroups is not None:
                self.cgroups.remove()

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart)
            self.release()

        # AsyncKernelManager binds this name to the base class's function, not to the above
        cleanup_resources = _async_cleanup_resources

    return JailedKernels


def kernel_manager(
    folder: Path, *, limits: Limits | None = None, binds: Sequence[tuple[Path, Path]] = ()
) -> Any:
    """An (async) KernelManager whose kernel runs jailed with `folder` as its one writable place;
    for nbclient's `NotebookClient(km=...)`. `binds`: more read-only (source, target) pairs.

    The connection file and the unix sockets are in `folder/.kernel`.
    """
    channel = folder / ".kernel"
    channel.mkdir(mode=0o700, exist_ok=True)
    manager = _jailed_kernels()(transport="ipc", connection_file=str(channel / "kernel.json"))
    manager.limits, manager.private, manager.binds = limits or Limits(), folder, tuple(binds)
    return manager
