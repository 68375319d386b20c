"""The trees the tools are measured on: a large real one, and a folder holding one 1 GB file.

The real tree is the standard library plus this environment's site-packages, hard-linked under one
temporary root (a tool has one working directory) without copying a byte, with `node_modules`,
`.git` and `dist` folders planted in it, so that skipping them is part of what is measured.
Deliberately not handled: keeping anything between runs; every run builds and removes its own.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GIB",
    "PLANTED",
    "BigFile",
    "Tree",
    "build_tree",
    "make_big_file",
    "scratch_dir",
    "source_trees",
]

GIB = 1 << 30
# One 64-byte line, repeated: ordinary text, so nothing calls it binary and every line is short.
_LINE = b"2026-09-07 12:00:00 INFO  worker-3 request served in 12 ms ok\n"
# Folders every tool skips, planted where a project has them (at the top, and deeper down):
# where in the tree -> the stdlib folder hard-linked there. Python source, so a search that
# failed to skip them would find matches in them and be seen to.
PLANTED = {
    "node_modules": "test",  # the largest: about 3,800 files
    "stdlib/json/.git": "encodings",
    "stdlib/email/dist": "lib2to3",
}


@dataclass(frozen=True)
class Tree:
    root: Path
    files: int
    size: int  # bytes
    sources: dict[str, Path]  # folder name under root -> the tree it mirrors
    copied: int  # files copied because a hard link was refused (another filesystem)
    planted: int  # files in the skipped folders of PLANTED, counted in `files`
    seconds: float  # to build it


@dataclass(frozen=True)
class BigFile:
    path: Path
    size: int
    lines: int  # 0 for a file that is one line without a newline


def scratch_dir() -> Path:
    """A fresh folder under the system's temporary directory (removed by the caller)."""
    return Path(tempfile.mkdtemp(prefix="course-agent-bench-"))


def source_trees() -> dict[str, Path]:
    """The stdlib (on many builds it also holds the base interpreter's site-packages) and this
    environment's site-packages, unless the one is inside the other."""
    stdlib = Path(sysconfig.get_path("stdlib")).resolve()
    packages = Path(sysconfig.get_path("purelib")).resolve()
    if packages.is_relative_to(stdlib):
        return {"stdlib": stdlib}
    return {"stdlib": stdlib, "site-packages": packages}


def build_tree(scratch: Path) -> Tree:
    """Hard-link every source tree into scratch/tree/<name>; count its files and bytes."""
    start = time.perf_counter()
    root, sources, copied = scratch / "tree", source_trees(), 0

    def link_or_copy(source: str, target: str) -> None:
        nonlocal copied
        try:
            os.link(source, target)
        except OSError:  # another filesystem, or hard links refused: copy instead
            shutil.copy2(source, target)
            copied += 1

    for name, source in sources.items():
        shutil.copytree(source, root / name, symlinks=True, copy_function=link_or_copy)
    planted = 0
    for where, folder in PLANTED.items():
        source = sources["stdlib"] / folder
        if source.is_dir():  # some builds leave the test suite out
            shutil.copytree(source, root / where, symlinks=True, copy_function=link_or_copy)
            planted += sum(len(names) for _, _, names in os.walk(root / where))
    seconds = time.perf_counter() - start
    files = size = 0
    for directory, _, names in os.walk(root):
        files += len(names)
        size += sum(os.lstat(os.path.join(directory, name)).st_size for name in names)
    return Tree(root, files, size, sources, copied, planted, seconds)


def make_big_file(folder: Path, size: int = GIB, one_line: bool = False) -> BigFile:
    """A `size`-byte text file in `folder`: 64-byte log lines, or a single line with no newline
    (minified JSON at its worst). Written in 1 MiB blocks, so writing it needs no memory."""
    folder.mkdir(parents=True, exist_ok=True)
    line = _LINE[:-1] + b" " if one_line else _LINE
    block = line * ((1 << 20) // len(line))
    path = folder / ("one-line.json" if one_line else "huge.log")
    with path.open("wb") as file:
        for _ in range(size // len(block)):
            file.write(block)
    written = path.stat().st_size
    return BigFile(path, written, 0 if one_line else written // len(_LINE))
