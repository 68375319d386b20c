"""A copy of the package for grading kernels, the functions a lab asks for left without bodies.

`stripped_package(lab)` copies course_agent/ into a temporary folder once per grading process,
rewrites each of the lab's `stripped` functions (with `ast`) to raise NotImplementedError("not
available while grading: your code used the package's own answer..."), and adds a
sitecustomize.py that drops an editable install's import hook, so that a kernel started with
PYTHONPATH=<folder> imports the copy. The copy is compiled once, here: every kernel reads it, none
may write it. Deliberately not handled: the original files on disk; only a sandbox that binds the
copy over them hides those.
"""

from __future__ import annotations

import ast
import atexit
import compileall
import functools
import shutil
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

from course_agent.lab.labs import Lab

__all__ = ["NOT_AVAILABLE", "strip_functions", "stripped_package"]

# What a grading kernel says when the student's code reaches one of them: why, and what to do.
NOT_AVAILABLE = (
    "not available while grading: your code used the package's own answer, which the grader "
    "leaves out; write the exercise yourself in its cell"
)
PACKAGE = Path(__file__).resolve().parents[1]  # course_agent/
# Runs at the kernel's start-up (site imports it): an editable install's import hook must not
# find the original package before PYTHONPATH's copy, so it goes.
SITECUSTOMIZE = '''"""course-agent grade: import the stripped copy beside this file."""
import sys

sys.meta_path[:] = [
    finder
    for finder in sys.meta_path
    if not getattr(finder, "__module__", "").startswith("__editable__")
]
'''


class _Strip(ast.NodeTransformer):
    """Replaces the body of each named function (`name` or `Class.name`) with one raise."""

    def __init__(self, names: set[str]) -> None:
        self.names, self.found, self.scope = names, set(), []

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        name = ".".join([*self.scope, node.name])
        if name in self.names:
            self.found.add(name)
            raised = ast.parse(f"raise NotImplementedError({NOT_AVAILABLE!r})").body
            docstring = ast.get_docstring(node)
            node.body = [ast.Expr(ast.Constant(docstring)), *raised] if docstring else raised
        return node


def strip_functions(source: str, names: set[str]) -> str:
    """`source` with the bodies of `names` replaced; ValueError naming any not found."""
    stripper = _Strip(names)
    tree = stripper.visit(ast.parse(source))
    if missing := names - stripper.found:
        raise ValueError(f"no function {', '.join(sorted(missing))} to strip")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


_MAKING = threading.Lock()  # grade's threads ask at once; CPython 3.11's ast is not thread-safe


def stripped_package(lab: Lab) -> Path:
    """The folder to put first on a grading kernel's PYTHONPATH for `lab` (made once, removed
    when this process exits)."""
    with _MAKING:
        return _stripped(lab)


@functools.cache
def _stripped(lab: Lab) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="course-agent-stripped-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = folder / PACKAGE.name
    # The bytecode comes along: copy2 keeps each source's time and size, which its .pyc records,
    # so a kernel loads the unchanged modules instead of compiling the whole package anew.
    shutil.copytree(PACKAGE, copy)
    by_module: defaultdict[str, set[str]] = defaultdict(set)
    for module, name in lab.stripped:
        by_module[module].add(name)
    stripped = {folder.joinpath(*module.split(".")).with_suffix(".py") for module in by_module}
    for compiled in copy.rglob("*.pyc"):
        # Kept only in __pycache__/, beside a source that stays as it was: a stripped module's
        # original, a legacy .pyc or a removed module's may hold the answers (marshal loads them).
        source = compiled.parent.parent / f"{compiled.name.split('.')[0]}.py"
        if compiled.parent.name != "__pycache__" or source in stripped or not source.exists():
            compiled.unlink()
    for module, names in by_module.items():
        path = folder.joinpath(*module.split(".")).with_suffix(".py")
        path.write_text(strip_functions(path.read_text(encoding="utf-8"), names), encoding="utf-8")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    # Whatever has no bytecode yet (the stripped modules): the sandbox binds the copy read-only.
    compileall.compile_dir(copy, quiet=2, workers=1)
    return folder
