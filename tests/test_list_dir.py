"""list_dir's body: a directory's entries, sorted and bounded, inside the tools' one boundary."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from course_agent.protocol import ToolContext, ToolError
from course_agent.tools import list_dir
from course_agent.tools.list_dir import run_list_dir


def listed(root: Path, path: str = ".", limit: int = 100) -> str:
    return run_list_dir(SimpleNamespace(path=path, limit=limit), ToolContext(root)).content


def test_entries_come_sorted_with_directories_marked_and_skipped_ones_left_out(
    tmp_path: Path,
) -> None:
    for name in ["b.txt", "a/x.txt", "node_modules/m.js", ".git/HEAD", ".env.example"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert listed(tmp_path) == ".env.example\na/\nb.txt\nlink"
    assert listed(tmp_path, "a") == "x.txt"


def test_past_the_limit_it_says_how_many_were_withheld(tmp_path: Path) -> None:
    for number in range(5):
        (tmp_path / f"f{number}").write_text("x")
    assert (
        listed(tmp_path, limit=2)
        == "f0\nf1\n(3 more withheld; raise limit, or glob for what you need)"
    )
    assert listed(tmp_path, limit=5).splitlines() == [f"f{n}" for n in range(5)]


def test_an_empty_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert listed(tmp_path, "empty") == "empty is empty"


def test_counting_stops_at_the_budget_and_says_at_least(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(list_dir, "ENTRY_BUDGET", 4)
    for number in range(9):
        (tmp_path / f"f{number}").write_text("x")
    lines = listed(tmp_path, limit=1).splitlines()
    assert lines == ["f0", "(at least 3 more withheld; counting stopped at 4)"] or lines[
        1
    ].startswith("(at least 3")


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("b.txt", "b.txt is a file, not a directory: read it with read_file"),
        ("missing", "missing does not exist"),
        ("..", "outside the working directory"),
        ("~", "~ does not exist"),  # a name in the root: nothing expands ~
    ],
)
def test_a_file_a_missing_path_and_one_outside_are_refused(
    tmp_path: Path, path: str, problem: str
) -> None:
    (tmp_path / "b.txt").write_text("x")
    with pytest.raises(ToolError, match=problem):
        listed(tmp_path, path)
