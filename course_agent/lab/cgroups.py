"""A cgroup per sandbox, nested in the grader's own: caps on memory and processes, and a list of
every process in it, so that none outlives its grade.

Deliberately not handled: cgroup v2 without delegated controllers (`cgroup_folders` then finds
none, and `jail` falls back to resource limits), CPU shares (CPU time is only counted).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

__all__ = ["Cgroups", "cgroup_folders"]


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
            found["cpuacct"] = folder  # cpu.stat: every v2 cgroup counts its CPU time
    return {name: folder for name, folder in found.items() if os.access(folder, os.W_OK | os.X_OK)}


class Cgroups:
    """One sandbox's cgroups (possibly none): made with its limits, emptied and removed after."""

    def __init__(self, memory: int, processes: int, folders: dict[str, Path]) -> None:
        name = f"course-agent-{secrets.token_hex(6)}"
        self.out_of_memory = False
        self.folders = {kind: parent / name for kind, parent in folders.items()}
        settings = {
            "memory": {"memory.limit_in_bytes": memory, "memory.max": memory},
            "pids": {"pids.max": processes},
        }
        for kind, folder in self.folders.items():
            folder.mkdir(exist_ok=True)
            for file, value in settings.get(kind, {}).items():
                if (folder / file).exists():
                    (folder / file).write_text(str(value))
        # v1 swaps past memory.limit_in_bytes unless memsw is capped too (where there is swap)
        with contextlib.suppress(OSError, KeyError):
            (self.folders["memory"] / "memory.memsw.limit_in_bytes").write_text(str(memory))

    def procs(self) -> list[str]:
        """The files a process writes its pid to, to join every one of these cgroups."""
        return sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of this sandbox so far (None: not counted here)."""
        folder = self.folders.get("cpuacct")
        with contextlib.suppress(OSError, ValueError, KeyError):
            if folder is not None and (folder / "cpuacct.usage").exists():  # v1: nanoseconds
                return int((folder / "cpuacct.usage").read_text()) / 1e9
            if folder is not None:  # v2: "usage_usec 1234" among other lines
                pairs = (line.split() for line in (folder / "cpu.stat").read_text().splitlines())
                return int(dict(pairs)["usage_usec"]) / 1e6
        return None

    def memory_killed(self) -> bool:
        """Whether the kernel's out-of-memory killer stopped a process of this sandbox."""
        if self.out_of_memory:
            return True
        folder = self.folders.get("memory")
        if folder is None:
            return False
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
