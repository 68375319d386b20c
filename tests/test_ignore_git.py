"""Ignore lines as git reads them, with real git as the referee, and ignore files built to make a
matcher backtrack, which must cost no call more than its budget.

docs/design.md says each line means what it means to git (braces are text, a lone `!` matches
nothing, a trailing tab is part of the name); `git check-ignore` in a repository made in
tmp_path answers for every file of random trees of random .gitignore files.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext
from course_agent.tools.glob_files import RULES_CUT, GlobArgs, run_glob
from course_agent.tools.guards.ignore import MAX_LINE_CHARS, MAX_LINE_WILDCARDS, IgnoreFile
from course_agent.tools.guards.ignore_lines import ignore_lines
from course_agent.tools.guards.keyfiles import is_key_name
from course_agent.tools.guards.walk import SKIP_DIRS, Walk

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")

# Names with what broke tools before: `~`, dots, spaces, unicode, braces, `!` and `#` first.
FOLDERS = ["a", "b", "~d", "d.d", "sp ace", "é", "{x}", "build"]
NAMES = ["a.log", "b.js", "~n.txt", "n~", ".h", "x.", "sp ace.md", "é.py", "日本", "{a,b}"]
NAMES += ["!bang", "#hash", "tab\t", "q\\", "c.txt"]
PIECES = ["a", "b", "~d", "d.d", "sp ace", "é", "build", "a.log", ".h", "n~", "c.txt", "x."]
PIECES += ["{x}", "{a,b}", "日本", "q\\\\", "\\!bang", "\\#hash", "tab\t"]
WILD = ["*", "**", "?", "*.log", "*.js", "*.{log,js}", "[ab]*", "[!a]*", "*~", "~*", "*.*"]
WILD += ["?.*", "*[.]*", "\\*", "a*", "*a*b*", "[a-c]*"]


@st.composite
def lines(draw: st.DrawFn) -> str:
    """One .gitignore line: a prefix, one to three segments, an ending."""
    special = ["!", "#c", "", "/", "*", "**", " ", "!*", "!*/", "\\ ", "*/", "**/"]
    if draw(st.integers(0, 6)) == 0:
        return draw(st.sampled_from(special))
    segments = draw(st.lists(st.sampled_from(PIECES + WILD), min_size=1, max_size=3))
    prefix = draw(st.sampled_from(["", "", "", "!", "/", "**/", "!/"]))
    ending = draw(st.sampled_from(["", "", "", "/", " ", "  ", "\\ ", "\t", "\r", "/**"]))
    return prefix + "/".join(segments) + ending


@st.composite
def trees(draw: st.DrawFn) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Files (path -> text) with .gitignore files among them, and symlinks (path, target)."""
    folders = [""]
    for _ in range(draw(st.integers(0, 5))):
        parent, name = draw(st.sampled_from(folders)), draw(st.sampled_from(FOLDERS))
        folders.append(f"{parent}/{name}" if parent else name)
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 12))):
        folder, name = draw(st.sampled_from(folders)), draw(st.sampled_from(NAMES))
        files[f"{folder}/{name}" if folder else name] = "x\n"
    for _ in range(draw(st.integers(1, 3))):
        folder = draw(st.sampled_from(folders))
        text = "\n".join(draw(st.lists(lines(), min_size=1, max_size=5))) + "\n"
        files[f"{folder}/.gitignore" if folder else ".gitignore"] = text
    if draw(st.booleans()):
        files[".git/info/exclude"] = draw(lines()) + "\n"
    passed = {path.rsplit("/", depth)[0] for path in files for depth in range(1, 10)}
    files = {path: text for path, text in files.items() if path not in passed}
    links = [
        (f"{draw(st.sampled_from(folders))}/link{n}".lstrip("/"), draw(st.sampled_from(FOLDERS)))
        for n in range(draw(st.integers(0, 2)))
    ]
    return files, [(path, target) for path, target in links if path.split("/")[0] not in files]


def git_ignored(root: Path, paths: list[str]) -> set[str]:
    """The paths `git check-ignore` calls ignored, git kept from every file outside `root`."""
    assert GIT is not None
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    env["XDG_CONFIG_HOME"] = str(root / ".git")
    done = subprocess.run(
        [GIT, "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=root,
        input=b"".join(os.fsencode(path) + b"\0" for path in paths),
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return {os.fsdecode(path) for path in done.stdout.split(b"\0") if path}


def build(root: Path, files: dict[str, str], links: list[tuple[str, str]] = ()) -> Path:
    assert GIT is not None
    subprocess.run([GIT, "init", "-q", str(root)], check=True, env={"HOME": str(root)})
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode())  # "\r" kept: a CRLF line is git's too
    for relative, target in links:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(root / relative):
            (root / relative).symlink_to(target)
    return root


def test_the_vocabulary_holds_no_skipped_or_key_name() -> None:
    # Otherwise the walk's own skips (never listed, whatever git says) would muddle the referee.
    names = [*FOLDERS, *NAMES]
    assert not [name for name in names if name in SKIP_DIRS or is_key_name(name)]


@needs_git
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=trees())
def test_the_walk_hides_exactly_what_git_ignores(
    tmp_path_factory: pytest.TempPathFactory, tree: tuple[dict[str, str], list[tuple[str, str]]]
) -> None:
    files, links = tree
    # `?` and [classes] match one character here, one byte in git (docs/design.md names it).
    texts = [text for path, text in files.items() if path.endswith((".gitignore", "exclude"))]
    assume(not any("?" in t or "[" in t for t in texts) or all(p.isascii() for p in files))
    root = build(tmp_path_factory.mktemp("repo"), files, links)
    created = sorted(path for path in files if not path.startswith(".git/"))
    expected = [path for path in created if path not in git_ignored(root, created)]
    # Symlinks are neither entered nor listed (git would list a link itself as a file).
    assert list(Walk(root.resolve())) == expected


@pytest.mark.parametrize(
    ("line", "name", "hidden"),
    [
        ("*.{log,js}", "a.log", False),  # braces are text to git
        ("*.{log,js}", "x.{log,js}", True),
        ("{a,b}", "{a,b}", True),
        ("a.log\n!", "a.log", True),  # a lone "!" matches nothing
        ("tab\t", "tab\t", True),  # git trims trailing spaces, not tabs
        ("sp\\ ", "sp ", True),  # an escaped space stays
        ("q\\", "q\\", False),  # a dangling backslash matches nothing
        ("q\\\\", "q\\", True),
        ("a.log\r", "a.log", True),  # CRLF line ends
        ("x\x0by", "x\x0by", True),  # \x0b is no line end to git
        ("[ab", "[ab", False),  # an unclosed class matches nothing
    ],
)
def test_lines_git_reads_its_own_way(tmp_path: Path, line: str, name: str, hidden: bool) -> None:
    assert bool(IgnoreFile(ignore_lines(line + "\n")).verdict(name, False)) is hidden
    if GIT is not None:  # and git agrees
        root = build(tmp_path, {".gitignore": line + "\n", name: ""})
        assert (name in git_ignored(root, [name])) is hidden


# -- hostile ignore files: linear matching, bounded lines, the clock inside the walk -----------


@pytest.mark.timeout(30)
def test_a_line_of_stars_costs_glob_no_more_than_any_line(tmp_path: Path) -> None:
    # `a*a*a*a*a*a*a*a*a*a*a*a*b` and a 44-character name took one glob 55 s (Python's re
    # backtracking); the line is matched in linear time, and the listing is complete.
    (tmp_path / ".gitignore").write_text("a*" * 12 + "b\n")
    (tmp_path / ("a" * 44)).write_text("")
    (tmp_path / ("a" * 43 + "b")).write_text("")
    result = run_glob(GlobArgs(pattern="**/*"), ToolContext(tmp_path))
    assert result.meta["stopped"] is False and result.meta["exact"] is True
    assert result.content.split("\n")[:2] == [".gitignore", "a" * 44]


@pytest.mark.timeout(30)
def test_a_300_kb_line_is_not_applied_and_the_listing_says_so(tmp_path: Path) -> None:
    # One 300 KB line made glob answer "no files match **/* in the 0 entries walked" (83 s on
    # this machine, the budget long gone before the walk began).
    (tmp_path / ".gitignore").write_text("a?" * 150_000 + "\n*.log\n")
    for name in ("x.py", "y.log"):
        (tmp_path / name).write_text("")
    result = run_glob(GlobArgs(pattern="**/*"), ToolContext(tmp_path))
    assert result.meta["stopped"] is False
    assert result.content.split("\n") == [
        ".gitignore",
        "x.py",
        "(1 path hidden by .gitignore)",
        "(some ignore files were too large to apply in full: paths they hide may be listed)",
    ]


@st.composite
def hostile(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Lines of stars and `**` chains, some too long, some too many; names of long runs."""
    stars = st.integers(1, 60).map(lambda k: "a*" * k + "b")
    chains = st.integers(1, 40).map(lambda k: "**/a" * k + "/b")
    long = st.integers(MAX_LINE_CHARS - 5, MAX_LINE_CHARS + 5).map(lambda n: "*a" * (n // 2))
    line = st.one_of(stars, chains, long, st.sampled_from(["*.log", "!keep*", "a?"]))
    rules = draw(st.lists(line, min_size=1, max_size=400))
    names = draw(
        st.lists(st.integers(1, 200).map(lambda n: "a" * n), min_size=1, max_size=5, unique=True)
    )
    return rules, [*names, *(name + "b" for name in names)]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=hostile())
@pytest.mark.timeout(300)
def test_no_hostile_ignore_file_makes_glob_overrun_or_lie(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[list[str], list[str]]
) -> None:
    rules, names = case
    root = tmp_path_factory.mktemp("hostile")
    (root / "d").mkdir()
    (root / "d" / ".gitignore").write_text("\n".join(rules) + "\n")
    for name in names:
        (root / "d" / name).write_text("")
        (root / name).write_text("")
    result = run_glob(GlobArgs(pattern="**/*", limit=2000), ToolContext(root), seconds=2.0)
    if result.meta["stopped"]:  # within its budget, and saying so
        assert "time budget" in result.content or "stopped after 2 s" in result.content
        return
    listed = [line for line in result.content.split("\n") if not line.startswith("(")]
    wild = [sum(map(line.count, "*?[")) for line in rules]
    if max(map(len, rules)) > MAX_LINE_CHARS or max(wild) > MAX_LINE_WILDCARDS:
        assert RULES_CUT in result.content
    if RULES_CUT in result.content:
        return  # some lines were not applied, and the listing says so
    # Complete: each name at d/ is hidden iff some line without a slash matches it (fnmatch,
    # an independent matcher; no "!" line matches these names, no anchored line a bare name).
    bare = [line for line in rules if "/" not in line and not line.startswith("!")]
    kept = [name for name in names if not any(fnmatch.fnmatchcase(name, p) for p in bare)]
    assert listed == sorted([*names, "d/.gitignore", *(f"d/{name}" for name in kept)])
