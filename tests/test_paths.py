"""The hostile-path battery for paths.resolve_inside: every way out of the root is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.paths import is_inside, resolve_inside
from course_agent.protocol import ToolError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """tmp/app with one file, next to tmp/app-secrets (same prefix) and tmp/outside."""
    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "calc.js").write_text("export const x = 1\n")
    (tmp_path / "app-secrets").mkdir()
    (tmp_path / "app-secrets" / "key.txt").write_text("secret\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "passwd").write_text("root:x:0:0\n")
    (app / "link-out.txt").symlink_to(tmp_path / "outside" / "passwd")
    (app / "dir-out").symlink_to(tmp_path / "outside")
    (app / "src" / "nested-out").symlink_to("../../outside")
    (app / "loop").symlink_to("loop")
    (app / "ping").symlink_to("pong")
    (app / "pong").symlink_to("ping")
    (app / "link-in.js").symlink_to("src/calc.js")
    return app


HOSTILE = [
    "../outside/passwd",
    "src/../../outside/passwd",
    "../app-secrets/key.txt",  # a sibling with the same prefix as the root
    "../app-secrets",
    "..",
    "/etc/passwd",
    "/",
    "link-out.txt",  # a symlinked file pointing out
    "dir-out/passwd",  # a symlinked directory pointing out
    "src/nested-out/passwd",  # a relative symlink, one level down
    "loop",  # a symlink to itself
    "ping",  # a two-link loop
    # Python's non-strict resolve stops at a loop and normalises the rest: "loop/.." vanishes,
    # leaving an unresolved symlink that points out (found by the property test below).
    "loop/../dir-out/passwd",
    "ping/../link-out.txt",
    "src/calc.js\0.png",
    "\0",
    "../~",  # a ~ name outside is outside: the resolved path decides, not the string
    "~/../../outside/passwd",
    "",
    "   ",
    "\ud800",  # a lone surrogate: no file name can be encoded from it
]


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError) as refused:
        resolve_inside(root, path)
    assert str(refused.value)  # a message the model can act on, never an empty one


def test_sibling_with_the_same_prefix_is_outside(root: Path) -> None:
    sibling = (root.parent / "app-secrets").resolve()
    assert not is_inside(root.resolve(), sibling)
    with pytest.raises(ToolError, match="outside the working directory"):
        resolve_inside(root, str(sibling / "key.txt"))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/calc.js", "src/calc.js"),
        ("./src/calc.js", "src/calc.js"),
        ("src/../src/calc.js", "src/calc.js"),
        ("link-in.js", "src/calc.js"),  # a symlink that stays inside is fine
        ("src", "src"),
        (".", "."),
        ("not/there/yet.js", "not/there/yet.js"),  # existence is each tool's business
        # Nothing expands ~: an Office lock file, a folder, a lone ~ are names in the root.
        ("~notes.txt", "~notes.txt"),
        ("~$report.docx", "~$report.docx"),
        ("~dir/inner.txt", "~dir/inner.txt"),
        ("~", "~"),
        ("~/.ssh/id_rsa", "~/.ssh/id_rsa"),
    ],
)
def test_paths_inside_resolve(root: Path, path: str, expected: str) -> None:
    assert resolve_inside(root, path) == (root / expected).resolve()


def test_absolute_path_inside_the_root_is_fine(root: Path) -> None:
    absolute = str(root.resolve() / "src" / "calc.js")
    assert resolve_inside(root, absolute) == root.resolve() / "src" / "calc.js"


def test_a_root_given_through_a_symlink_still_works(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert resolve_inside(alias, "src/calc.js") == root.resolve() / "src" / "calc.js"
    with pytest.raises(ToolError):
        resolve_inside(alias, "../outside/passwd")


def test_messages_name_the_problem(root: Path) -> None:
    cases = {"": "empty", "a\0b": "NUL", "../x": "outside", "loop": "loop"}
    for path, words in cases.items():
        with pytest.raises(ToolError, match=words):
            resolve_inside(root, path)


# Path pieces for the property test: every name planted in the fixture, and the ways to climb.
SEGMENTS = ["..", ".", "", "src", "app", "app-secrets", "outside", "passwd", "dir-out", "x"]
SEGMENTS += ["loop", "ping", "pong", "link-out.txt", "link-in.js", "nested-out", "/", "~"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.sampled_from(SEGMENTS),
        max_size=8,
    ).map("/".join)
    | st.text(max_size=40)
)
def test_whatever_the_path_the_answer_is_inside_or_a_refusal(root: Path, path: str) -> None:
    try:
        target = resolve_inside(root, path)
    except ToolError:
        return
    real = root.resolve()
    assert is_inside(real, target)
    assert os.path.realpath(target) == str(target)  # nothing left to resolve: no symlink hops


def test_an_overlong_path_is_refused_saying_the_cap(root: Path) -> None:
    with pytest.raises(ToolError, match="at most 4096 are accepted"):
        resolve_inside(root, "a/" * 3000)
