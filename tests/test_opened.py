"""tools/guards/opened.py: what was opened is checked, not only what was named."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_agent.paths import resolve_inside
from course_agent.protocol import ToolError
from course_agent.tools.guards import opened
from course_agent.tools.guards.opened import open_inside, open_regular


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """tmp/app/src/calc.js, next to tmp/outside/passwd."""
    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "calc.js").write_text("export const x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "passwd").write_text("root:x:0:0\n")
    return app


def test_open_inside_opens_a_file_inside(root: Path) -> None:
    fd = open_inside(root, resolve_inside(root, "src/calc.js"), "src/calc.js")
    with open(fd, "rb") as file:
        assert file.read() == b"export const x = 1\n"


def swap_src_for_a_way_out(root: Path) -> None:
    """After the check: src becomes a symlink to a directory outside holding a calc.js too."""
    (root.parent / "outside" / "calc.js").write_text("OUTSIDE\n")
    (root / "src").rename(root / "src.real")
    (root / "src").symlink_to(root.parent / "outside")


@pytest.mark.parametrize("kernel_knows_the_path", [True, False])
def test_open_inside_refuses_a_directory_swapped_after_the_check(
    root: Path, monkeypatch: pytest.MonkeyPatch, kernel_knows_the_path: bool
) -> None:
    if not kernel_knows_the_path:  # as on a system without /proc or F_GETPATH
        monkeypatch.setattr(opened, "_opened_path", lambda fd: None)
    target = resolve_inside(root, "src/calc.js")
    swap_src_for_a_way_out(root)
    with pytest.raises(ToolError, match="outside the working directory"):
        open_inside(root, target, "src/calc.js")


def test_open_inside_never_follows_a_last_component_turned_symlink(root: Path) -> None:
    target = resolve_inside(root, "src/calc.js")
    target.unlink()
    target.symlink_to(root.parent / "outside" / "passwd")
    with pytest.raises(OSError):
        open_inside(root, target, "src/calc.js")


def test_open_regular_refuses_a_fifo_without_blocking(root: Path) -> None:
    import os

    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="pipe is a FIFO"):
        open_regular(root, resolve_inside(root, "pipe"), "pipe")
