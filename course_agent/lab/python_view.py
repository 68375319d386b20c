"""What a sandboxed kernel sees of Python: an allow-list from the interpreter's own paths, and one
given copy of course_agent at every place that interpreter could import the package from.

Bound read-only: the standard library (its lib-dynload), the site-packages on the interpreter's
path, the executable and the links to it, `rg` beside it, the shared libpython, pyvenv.cfg.
A base interpreter's site-packages that is not on the path is covered by an empty folder. Every
place `course_agent` is found (each sys.path entry, each finder on sys.meta_path: an editable
install's mapping, a `.pth` line, PYTHONPATH, a checkout) shows `package`, so the stripped copy
hides the answers wherever Python would look; nothing else of a checkout or a prefix is there.
Deliberately not handled: the system folders (/usr, /lib), which jail.py binds whole, and a
package installed as a zip (refused: reinstall it with pip).
"""

from __future__ import annotations

import functools
import json
import os
import site
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PythonView", "package_places", "python_view"]

# Run by the kernel's interpreter, with the kernel's PYTHONPATH: where it would find the package.
PLACES = """\
import importlib.machinery, json, sys
places = []
for entry in sys.path[1:]:  # [0] is the folder of -c; the kernel's launch drops it
    try:
        spec = importlib.machinery.PathFinder.find_spec("course_agent", [entry])
    except (ImportError, OSError, ValueError):
        spec = None
    if spec is not None:
        places += list(spec.submodule_search_locations or [spec.origin])
for finder in sys.meta_path:
    try:
        spec = finder.find_spec("course_agent", None)
    except Exception:
        spec = None
    if spec is not None:
        places += list(spec.submodule_search_locations or [spec.origin])
print(json.dumps({"places": places, "path": sys.path[1:]}))
"""


class PythonView:
    """bwrap's arguments for one view: (flag, source, target) steps, in the order they apply."""

    def __init__(self, steps: list[tuple[str, ...]]) -> None:
        self.steps = steps

    def arguments(self) -> list[str]:
        return [arg for step in self.steps for arg in step]


@functools.cache
def _probe(pythonpath: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(places of course_agent, sys.path) as the kernel's interpreter sees them, started with
    the kernel's PYTHONPATH in an empty folder."""
    env = {"PATH": os.defpath, "PYTHONNOUSERSITE": "1", "LANG": "C.UTF-8"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory(prefix="course-agent-view-") as empty:
        done = subprocess.run(
            [sys.executable, "-c", PLACES],
            capture_output=True,
            text=True,
            env=env,
            cwd=empty,
            timeout=60,
            check=True,
        )
    found = json.loads(done.stdout.splitlines()[-1])
    return tuple(found["places"]), tuple(found["path"])


def package_places(pythonpath: str | None = None) -> list[Path]:
    """Every folder this interpreter (with `pythonpath`) could import course_agent from, and the
    one this process imported; ValueError for a package inside a zip, which no bind can cover."""
    import course_agent

    places, _ = _probe(pythonpath)
    found = [Path(place) for place in places] + [Path(course_agent.__file__).parent]
    resolved = []
    for place in found:
        if not place.is_dir():
            raise ValueError(f"course_agent is installed as {place}: reinstall it with pip")
        resolved += [place.absolute(), place.resolve()]  # a link in the path: both names
    return list(dict.fromkeys(resolved))


def _executables() -> list[tuple[str, ...]]:
    """The interpreter as its path names it, each link in the chain recreated, the file bound;
    rg beside it (the grep tool's); libpython when the build links one in its LIBDIR."""
    steps: list[tuple[str, ...]] = []
    scripts = Path(sys.executable).parent
    names = [scripts / name for name in ("python", "python3", Path(sys.executable).name, "rg")]
    for path in dict.fromkeys(names):
        while path.is_symlink():
            target = os.readlink(path)
            steps.append(("--symlink", target, str(path)))
            path = (path.parent / target).absolute()
        if path.is_file():
            steps.append(("--ro-bind", str(path), str(path)))
    libdir = Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent")
    for name in {sysconfig.get_config_var(var) for var in ("INSTSONAME", "LDLIBRARY")} - {None}:
        library = libdir / str(name)
        if library.is_file():
            steps.append(("--ro-bind", str(library.resolve()), str(library)))
    config = Path(sys.prefix, "pyvenv.cfg")
    if config.is_file():
        steps.append(("--ro-bind", str(config), str(config)))
    return list(dict.fromkeys(steps))  # two names' chains may share their last links


def _under(step: tuple[str, ...], system: Sequence[str]) -> bool:
    return step[0] == "--symlink" and any(Path(step[-1]).is_relative_to(top) for top in system)


def python_view(
    package: Path | None = None, pythonpath: str | None = None, system: Sequence[str] = ()
) -> PythonView:
    """What a kernel of this interpreter (with `pythonpath`) sees of Python: `package` (default:
    this process's course_agent) at every place the package could be imported from. `system`:
    the folders bound whole before it (/usr, ...), whose links are not made again."""
    import course_agent

    package = package or Path(course_agent.__file__).resolve().parent
    _, path = _probe(pythonpath)
    stdlib = Path(sysconfig.get_path("stdlib"))
    dynload = [Path(entry) for entry in path if Path(entry).name == "lib-dynload"]
    sites = {Path(folder) for folder in site.getsitepackages()}
    sites |= {Path(sysconfig.get_path(name)) for name in ("purelib", "platlib")}
    on_path = {Path(entry) for entry in path}
    used = sorted(folder for folder in sites if folder in on_path and folder.is_dir())
    steps = [("--ro-bind", str(folder), str(folder)) for folder in [stdlib, *dynload, *used]]
    # The base's own site-packages sits inside its standard library: a venv does not use it.
    bases = {"base": sys.base_prefix, "platbase": sys.base_prefix}
    base = {Path(sysconfig.get_path(name, vars=bases)) for name in ("purelib", "platlib")}
    steps += [("--tmpfs", str(folder)) for folder in sorted(base - on_path) if folder.is_dir()]
    # A link inside the system's folders is there already (jail.py binds them whole): bwrap
    # cannot make it again ("File exists"), as for /usr/bin/python3 without a venv.
    steps += [step for step in _executables() if not _under(step, system)]
    steps += [("--ro-bind", str(package), str(place)) for place in package_places(pythonpath)]
    return PythonView(steps)
