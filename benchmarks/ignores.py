"""glob and grep on a tree with ignore files as a real project has them, against `find` and an
independent `rg` that reads the same ignore files itself.

The tree is corpus.build_tree's (the stdlib and site-packages, hard-linked) with nested
.gitignore files planted at several depths (negations, folder patterns, `**`) and a large ignored
`target/` folder. Deliberately not handled: the tree's other rows (search.py) and cold caches.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from corpus import Tree
from measure import run_command, time_together
from report import Row, budget_stops

from course_agent.protocol import ToolContext
from course_agent.tools import GLOB_TOOL, GREP_TOOL, SKIP_DIRS
from course_agent.tools.grep_files import find_rg

__all__ = ["ROOT_IGNORE", "ignore_rows", "plant_ignores"]

# GitHub's Python .gitignore, its most used lines, and a build folder.
ROOT_IGNORE = "\n".join(
    [
        *("__pycache__/", "*.py[cod]", "*$py.class", "*.so", "build/", "*.egg-info/", "*.egg"),
        *(".coverage", ".coverage.*", "*.cover", "*.log", "*.mo", "*.pot", "docs/_build/"),
        *("target/", "npm-debug.log*", "*.sw?", ".#*", "*~", "*.pyi", "!typing.pyi"),
    ]
)
# Planted in every third folder at the second level: per-package rules, as vendored code has.
PACKAGE_IGNORE = "tests/\n**/data/*.txt\n!README*\n*.tmp\n/setup.cfg\n"
DEEP_IGNORE = "*.html\n!index.html\n**/templates/**/*.txt\n"


def _write(path: Path, text: str) -> None:
    """A new file: never written through a hard link into the tree the corpus mirrors."""
    path.unlink(missing_ok=True)
    path.write_text(text)


def plant_ignores(tree: Tree) -> int:
    """The .gitignore files above, and a `target/` folder (the stdlib's test suite, linked);
    how many ignore files were planted."""
    _write(tree.root / ".gitignore", ROOT_IGNORE + "\n")
    planted = 1
    for top in sorted(path for path in tree.root.iterdir() if path.is_dir()):
        for index, folder in enumerate(sorted(p for p in top.iterdir() if p.is_dir())):
            if index % 3 == 0:
                _write(folder / ".gitignore", PACKAGE_IGNORE)
                planted += 1
                deeper = sorted(p for p in folder.iterdir() if p.is_dir())[:1]
                for inner in deeper:
                    _write(inner / ".gitignore", DEEP_IGNORE)
                    planted += 1
    source = tree.sources["stdlib"] / "test"
    if source.is_dir():
        shutil.copytree(source, tree.root / "target", copy_function=os.link)
    return planted


def _rg_skips() -> list[str]:
    return [f"--glob=!{name}" for name in sorted(SKIP_DIRS)]


def _rg_reading_ignores(rg: str) -> list[str]:
    """rg applying the .gitignore files itself, as our tools do: no .git needed, none above."""
    return [rg, "--no-config", "--hidden", "--no-require-git", "--no-ignore-parent"]


def _run(tool: Any, arguments: dict[str, str], root: Path, metas: list[Any]) -> None:
    metas.append(tool.run(tool.args.model_validate(arguments), ToolContext(root)).meta)


def ignore_rows(tree: Tree, repeat: int, notes: list[str]) -> list[Row]:
    rg = find_rg()
    if rg is None:
        raise RuntimeError("ripgrep is not installed: pip install ripgrep")
    planted = plant_ignores(tree)
    notes.append(f"ignores: {planted} .gitignore files planted, and target/ (ignored)")
    prunes = []
    for name in [*sorted(SKIP_DIRS), "target"]:
        prunes += [*(["-o"] if prunes else []), "-name", name]
    find = ["find", ".", "-type", "d", "(", *prunes, ")", "-prune", "-o", "-name", "*.zq9"]
    files = [*_rg_reading_ignores(rg), "--files", "--glob=*.zq9", *_rg_skips(), "."]
    search = [*_rg_reading_ignores(rg), "-n", "--max-count=50", *_rg_skips(), "isinstance", "."]
    globs: list[Any] = []
    greps: list[Any] = []
    ours_glob, theirs_find, theirs_files, ours_grep, theirs_rg = time_together(
        [
            lambda: _run(GLOB_TOOL, {"pattern": "**/*.zq9"}, tree.root, globs),
            lambda: run_command([*find, "-print"], tree.root),
            lambda: run_command(files, tree.root),
            lambda: _run(GREP_TOOL, {"pattern": "isinstance"}, tree.root, greps),
            lambda: run_command(search, tree.root),
        ],
        repeat,
    )
    label = "with nested .gitignore files"
    return [
        Row.timed(
            f"glob `**/*.zq9` {label}",
            ours_glob,
            "`find`, same folders pruned",
            theirs_find,
            at_most=1.0,
            invalid=budget_stops(globs),
        ),
        Row.timed(
            f"glob `**/*.zq9` {label}",
            ours_glob,
            "`rg --files`, reading them",
            theirs_files,
            invalid=budget_stops(globs),
        ),
        Row.timed(
            f"grep `isinstance` {label}",
            ours_grep,
            "`rg`, reading them",
            theirs_rg,
            at_most=1.05,
            invalid=budget_stops(greps),
        ),
    ]
