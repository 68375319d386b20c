"""The install layouts pip and the README produce, built once from the README's student install
(tests/lab_install.py) by hard-linked copies whose site-packages are rewritten as pip would.

`layouts(root, venv)` gives {name: Layout}: "regular" (the install itself), "editable" (setuptools'
finder mapping the package to a checkout), "src" (the same, the checkout under <venv>/src/, as
`pip install -e git+URL` puts it, and a compat editable's .pth naming the other checkout's root:
two places at once).
Each checkout is a copy of this one (package with bytecode, labs/, a .env holding KEY).
"""

from __future__ import annotations

import compileall
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KEY", "Layout", "layouts"]

REPO = Path(__file__).resolve().parent.parent
KEY = "sk-layout-probe-0123456789abcdef"
FINDER = "__editable___course_agent_0_1_0_finder"
# setuptools' own finder (its editable_wheel's template) where setuptools is importable; this is
# its shape: MAPPING, and a meta path finder that the .pth installs.
MINIMAL_FINDER = """\
import sys
from importlib.util import spec_from_file_location
from pathlib import Path

MAPPING = {mapping!r}


class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        root, _, rest = fullname.partition(".")
        if root not in MAPPING:
            return None
        where = Path(MAPPING[root], *rest.split(".")) if rest else Path(MAPPING[root])
        init = where / "__init__.py"
        if init.is_file():
            return spec_from_file_location(fullname, init, submodule_search_locations=[where])
        return spec_from_file_location(fullname, where.with_suffix(".py"))


def install():
    sys.meta_path.append(_EditableFinder)
"""


@dataclass(frozen=True)
class Layout:
    venv: Path
    checkout: Path  # the checkout the package comes from (or, for "regular", one beside)

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")


def _checkout(where: Path) -> Path:
    """A copy of this checkout as a person has it: the package with its bytecode, labs/, the
    project files, and a .env with a key."""
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
    for name in ("course_agent", "labs"):
        shutil.copytree(REPO / name, where / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, where / name)
    compileall.compile_dir(where / "course_agent", quiet=2, workers=1)
    (where / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    return where


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _finder(mapping: dict[str, str]) -> str:
    try:
        from setuptools.command.editable_wheel import _finder_template
    except ImportError:
        return MINIMAL_FINDER.format(mapping=mapping)
    return _finder_template(FINDER, mapping, {})


def _copy(venv: Path, to: Path) -> Path:
    """A hard-linked copy of `venv` without its installed package (pip -e would leave none)."""
    subprocess.run(["cp", "-al", str(venv), str(to)], check=True, timeout=300)
    shutil.rmtree(_site(to) / "course_agent")
    return to


def _editable(venv: Path, package: Path) -> None:
    """`venv`'s site-packages as `pip install -e` leaves it: the finder and the .pth that
    installs it."""
    site = _site(venv)
    (site / f"{FINDER}.py").write_text(_finder({"course_agent": str(package)}))
    (site / "__editable__.course_agent-0.1.0.pth").write_text(
        f"import {FINDER}; {FINDER}.install()\n"
    )


def layouts(root: Path, venv: Path) -> dict[str, Layout]:
    checkout = _checkout(root / "checkout")
    made = {"regular": Layout(venv, checkout)}
    editable = _copy(venv, root / "editable-venv")
    _editable(editable, checkout / "course_agent")
    made["editable"] = Layout(editable, checkout)
    src = _copy(venv, root / "src-venv")
    inside = _checkout(src / "src" / "course-agent")
    _editable(src, inside / "course_agent")
    (_site(src) / "course_agent-compat.pth").write_text(f"{checkout}\n")
    made["src"] = Layout(src, inside)
    return made
