"""Ignore rules: one file's lines, the precedence between files, and ripgrep as the referee.

The differential tests build trees with nested .gitignore, .ignore and .git/info/exclude files
and check that glob lists exactly what `rg --files` lists with the same choices.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext
from course_agent.tools.glob_files import GlobArgs, run_glob
from course_agent.tools.grep_files import GrepArgs, find_rg, run_grep
from course_agent.tools.guards import ignore as ignore_module
from course_agent.tools.guards import ignore_file as ignore_file_module
from course_agent.tools.guards import search as search_module
from course_agent.tools.guards.ignore import MAX_IGNORE_FILE, IgnoreFile
from course_agent.tools.guards.keyfiles import is_key_file
from course_agent.tools.guards.walk import SKIP_DIRS, Visibility, Walk

RG = find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep is not installed")


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def rg_files(root: Path, *extra: str) -> list[str]:
    """`rg --files` written out independently: the choices the README states, nothing imported
    from the tool but the list of skipped directory names."""
    assert RG is not None
    command = [RG, "--files", "--no-config", "--hidden", "--no-require-git"]
    command += ["--no-ignore-parent", "--no-ignore-global", *extra]
    command += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS)]
    done = subprocess.run(command, cwd=root, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return sorted(os.fsdecode(line).removeprefix("./") for line in done.stdout.splitlines())


def glob(root: Path, pattern: str) -> str:
    return run_glob(GlobArgs(pattern=pattern, limit=2000), ToolContext(root)).content


def listed(content: str) -> list[str]:
    """The paths of a glob result, without its notes: [] for "no files match ..."."""
    if content.startswith("no files match"):
        return []
    return [line for line in content.split("\n") if not line.startswith("(")]


# -- one file's lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "path", "is_dir", "verdict"),
    [
        (["*.log"], "a/b.log", False, True),
        (["*.log", "!keep.log"], "a/keep.log", False, False),
        (["!keep.log", "*.log"], "keep.log", False, True),  # the last matching line decides
        (["build/"], "build", True, True),
        (["build/"], "build", False, None),  # "build/" names directories only
        (["build"], "build/x.txt", False, None),  # the directory is hidden, not asked about again
        (["/x.py"], "x.py", False, True),
        (["/x.py"], "sub/x.py", False, None),
        (["sub/*.txt"], "sub/y.txt", False, True),
        (["sub/*.txt"], "a/sub/y.txt", False, None),  # a slash anchors the line to its folder
        (["**/sub/*.txt"], "a/sub/y.txt", False, True),
        (["a/**"], "a", True, None),  # everything below a, not a itself
        (["a/**"], "a/b/c", False, True),
        (["a/**/"], "a/b", True, True),  # the directories below a
        (["a/**/"], "a/x.py", False, None),
        (["*/"], "a", True, True),
        (["*.py[cod]"], "m.pyc", False, True),
        (["x   "], "x", False, True),  # trailing spaces are not part of the name
        (["# comment", "", "\\#x"], "#x", False, True),
        (["[z-a]", "y"], "y", False, True),  # a line that cannot be parsed is skipped
        (["*.txt", "!y.txt", "*.md"], "y.txt", False, False),
        (["build/", "!build"], "build", True, False),  # a line for directories, then for any
        (["b*/", "!b*"], "build", True, False),
        (["b*", "!b*/"], "build", False, True),
        (["/a/b/", "!a/b"], "a/b", True, False),
        ([f"name{n}" for n in range(200)] + ["!*7"], "name77", False, False),
    ],
)
def test_one_file_asks_about_the_path_itself(
    lines: list[str], path: str, is_dir: bool, verdict: bool | None
) -> None:
    assert IgnoreFile(lines).verdict(path, is_dir) is verdict


# -- files together, as the walk reads them ----------------------------------------------------


def test_precedence_between_files(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n!excluded.txt\nbuild/\n!build/keep.txt\n",
            ".ignore": "!wanted.log\n",
            ".git/info/exclude": "excluded.txt\nsecret.txt\n",
            "a.log": "",
            "wanted.log": "",  # .ignore outranks .gitignore
            "excluded.txt": "",  # .gitignore outranks .git/info/exclude
            "secret.txt": "",
            "build/keep.txt": "",  # its directory is hidden: no line can bring it back
            "sub/.gitignore": "!*.log\n",
            "sub/b.log": "",  # the deeper file decides
            "sub/deeper/c.log": "",
            "other/d.log": "",
        },
    )
    walk = Walk(tmp_path)
    assert list(walk) == [
        ".gitignore",
        ".ignore",
        "excluded.txt",
        "sub/.gitignore",
        "sub/b.log",
        "sub/deeper/c.log",
        "wanted.log",
    ]
    assert walk.hidden == {".gitignore": 3, ".git/info/exclude": 1}
    assert walk.hidden_note() == "3 paths hidden by .gitignore, 1 by .git/info/exclude"


def test_the_usual_python_noise_is_skipped_without_any_ignore_file(tmp_path: Path) -> None:
    noise = [f"{name}/x.py" for name in sorted(SKIP_DIRS)] + ["pkg/__pycache__/m.cpython-311.pyc"]
    make_tree(tmp_path, dict.fromkeys([*noise, "pkg/m.py", ".github/ci.yml"], ""))
    walk = Walk(tmp_path)
    assert list(walk) == [".github/ci.yml", "pkg/m.py"]
    assert not walk.hidden  # skipped, not hidden: nothing to report


def test_rules_from_above_a_starting_folder_apply(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {".gitignore": "*.gen.py\nsrc/vendor/\n", "src/a.py": "", "src/b.gen.py": ""}
    )
    make_tree(tmp_path, {"src/vendor/v.py": ""})
    assert list(Walk(tmp_path, "src")) == ["a.py"]
    blocked = Walk(tmp_path, "src/vendor")
    assert list(blocked) == [] and blocked.blocked == ".gitignore"


def test_visibility_answers_like_the_walk(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "build/\n*.log\n", "a.py": "", "build/b.py": ""})
    make_tree(tmp_path, {"c.log": "", "node_modules/m.js": "", "deep/er/d.py": ""})
    visible = Visibility(tmp_path)
    assert [p for p in ["a.py", "build/b.py", "c.log", "node_modules/m.js"] if visible(p)] == [
        "a.py"
    ]
    assert visible("deep/er/d.py") and visible.rules_in("build") == ".gitignore"


@pytest.mark.timeout(10)
def test_an_ignore_file_that_is_a_fifo_or_a_folder_is_passed_over(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / ".ignore").mkdir()
    make_tree(tmp_path, {"a.py": ""})
    assert list(Walk(tmp_path)) == ["a.py"]


def test_lines_past_the_size_bound_are_not_applied(tmp_path: Path) -> None:
    padding = "# padding\n" * (MAX_IGNORE_FILE // 10)
    make_tree(tmp_path, {".gitignore": "early.txt\n" + padding + "late.txt\n"})
    make_tree(tmp_path, {"early.txt": "", "late.txt": ""})
    assert "late.txt" in list(Walk(tmp_path)) and "early.txt" not in list(Walk(tmp_path))


def test_lines_that_need_the_wildcard_matcher_are_capped_per_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 100,000-line .gitignore of `name7*x*y*z` lines took glob 44 s (pathspec and one huge
    # regex): past MAX_WILDCARD_LINES such lines, the rest are not applied.
    monkeypatch.setattr(ignore_file_module, "MAX_WILDCARD_LINES", 10)
    lines = [f"line{n}-*x" for n in range(20)]
    rules = IgnoreFile(lines)
    assert rules.verdict("line9-a.x", False) is True
    assert rules.verdict("line10-a.x", False) is None
    assert rules.skipped == 10


def test_names_and_extensions_are_never_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A long list of plain names (generated, say) is a set of names: each line costs a lookup.
    monkeypatch.setattr(ignore_file_module, "MAX_WILDCARD_LINES", 10)
    lines = [f"file{n}.txt" for n in range(50_000)] + ["*.log", "!keep.log", "build/", "x*y"]
    rules = IgnoreFile(lines)
    assert rules.verdict("a/file49999.txt", False) and rules.verdict("b/c.log", False)
    assert rules.verdict("keep.log", False) is False and rules.verdict("build", True)
    assert rules.verdict("build", False) is None and rules.verdict("xzy", False)
    assert rules.skipped == 0


@pytest.mark.parametrize(
    "line",
    [
        *["x.py", "!x.py", "build/", "!build/", "*.log", "!*.log", "*.log/", " x.py", "!!x"],
        *["x.", "/build", "a/x.py", "/a/build/", "!a/b.log", "x*", "[xb]*", "*.l?g", "x?py"],
    ],
)
def test_lines_looked_up_mean_what_the_wildcard_says(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Names, extensions and plain paths are dict lookups: the same verdicts as the matcher's.
    paths = ["x.py", "a/x.py", " x.py", "build", "a/build", "b.log", "a/b.log", "!x", "x.", "x"]
    fast = IgnoreFile([line])
    monkeypatch.setattr(ignore_file_module, "_shape", lambda line: ("wildcard", line.wildcard))
    slow = IgnoreFile([line])
    for path in paths:
        for is_dir in (False, True):
            assert fast.verdict(path, is_dir) is slow.verdict(path, is_dir), path


def test_ignore_files_in_force_are_bounded_in_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Forty nested folders, each with a 1 MiB .gitignore of names: glob held 930 MB (and took
    # 478 s before names skipped pathspec). Past MAX_RULES_BYTES along one folder's chain, a
    # file is not applied, and the result says so.
    monkeypatch.setattr(ignore_module, "MAX_RULES_BYTES", 30)
    make_tree(
        tmp_path,
        {
            ".gitignore": "a.log\n",
            "sub/.gitignore": "#" * 40 + "\nb.log\n",
            "sub/a.log": "",
            "sub/b.log": "",
            "sub/c.txt": "",
        },
    )
    assert glob(tmp_path, "**/*").split("\n") == [
        ".gitignore",
        "sub/.gitignore",
        "sub/b.log",
        "sub/c.txt",
        "(1 path hidden by .gitignore)",
        "(some ignore files were too large to apply in full: paths they hide may be listed)",
    ]
    assert "too large" not in glob(tmp_path, "*")  # the root's own file fits


def test_a_visibility_past_its_deadline_refuses_new_folders(tmp_path: Path) -> None:
    make_tree(tmp_path, {"sub/.gitignore": "x\n", "sub/a.py": ""})
    visible = Visibility(tmp_path, deadline=0.0)
    with pytest.raises(TimeoutError):
        visible("sub/a.py")


@needs_rg
def test_grep_whose_ignore_files_take_the_time_left_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rg has time left; reading the ignore files of sub/ to check what it found has none.
    make_tree(tmp_path, {"sub/.gitignore": "x\n", "sub/a.py": "hit\n"})
    spent = lambda root, deadline=None: Visibility(root, deadline=0.0)  # noqa: E731
    monkeypatch.setattr(search_module, "Visibility", spent)
    result = run_grep(GrepArgs(pattern="hit", glob="*.py"), ToolContext(tmp_path))
    assert result.meta["stopped"] is True and "search stopped after 10 s" in result.content


# -- ripgrep as the referee ---------------------------------------------------------------------

FOLDERS = ["a", "b", "build", ".hidden", "sub", "keep", "venv"]
NAMES = ["x.py", "y.txt", ".env", "keep.log", "a.log", "build", "z.md"]
LINES = [
    "*.log",
    "!keep.log",
    "build/",
    "build",
    "!build/",
    "/x.py",
    "sub/*.txt",
    "**/y.txt",
    "a/**",
    "!a/keep.log",
    "a/**/",
    ".*",
    "!.env",
    "*",
    "!*/",
    "!*.py",
    "*/",
    "/a",
    "keep/",
    "!keep/",
    "**/sub",
    "sub/**/x.py",
    "*.py[cod]",
    "b*/",
    "!b*",
    "?.md",
    "!/sub",
    "*.txt   ",
    "# a comment",
    "",
]
KINDS = [".gitignore", ".ignore", ".git/info/exclude", ".rgignore"]


@st.composite
def trees(
    draw: st.DrawFn, folder_names: list[str] = FOLDERS, file_names: list[str] = NAMES
) -> dict[str, str]:
    """Up to 8 folders, 15 files and 4 ignore files of up to 4 lines each, all small."""
    folders = [""]
    for _ in range(draw(st.integers(1, 8))):
        parent, name = draw(st.sampled_from(folders)), draw(st.sampled_from(folder_names))
        folders.append(f"{parent}/{name}" if parent else name)
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 15))):
        folder, name = draw(st.sampled_from(folders)), draw(st.sampled_from(file_names))
        files[f"{folder}/{name}" if folder else name] = "x\n"
    for _ in range(draw(st.integers(1, 4))):
        folder, kind = draw(st.sampled_from(folders)), draw(st.sampled_from(KINDS))
        lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=4))
        files[f"{folder}/{kind}" if folder else kind] = "\n".join(lines) + "\n"
    # A name cannot be both a file and a folder: drop files that other paths pass through.
    passed = {path.rsplit("/", depth)[0] for path in files for depth in range(1, 10)}
    return {path: text for path, text in files.items() if path not in passed}


@needs_rg
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=trees())
def test_glob_lists_exactly_what_ripgrep_lists(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, str]
) -> None:
    root = make_tree(tmp_path_factory.mktemp("tree"), files)
    expected = rg_files(root)
    assert listed(glob(root, "**/*")) == expected
    visible = Visibility(root.resolve())
    assert [path for path in files if visible(path)] == [p for p in files if p in expected]


# Names where glob and grep once parted: folders named like key files (rg's exclusion of .env
# skips a folder .env/), names of skipped folders given to files, other cases of them.
AGREE_FOLDERS = ["a", "B", ".hidden", ".env", "certs.pem", "Dist", "NODE_MODULES", "build", "sub"]
AGREE_NAMES = ["x.py", ".env", ".ENV.local", "site.key", "dist", "node_modules", "a.log", "y.txt"]


@needs_rg
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=trees(AGREE_FOLDERS, AGREE_NAMES), links=st.lists(st.integers(0, 20), max_size=3))
def test_grep_searches_exactly_what_glob_lists(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, str], links: list[int]
) -> None:
    root = make_tree(tmp_path_factory.mktemp("tree"), files)
    for number, pick in enumerate(links if files else []):  # rg never follows symlinks
        (root / f"link{number}.txt").symlink_to(sorted(files)[pick % len(files)])
    listed_paths = listed(glob(root, "**/*"))
    content = run_grep(GrepArgs(pattern="^", limit=500), ToolContext(root)).content
    lines = [] if content.startswith("no matches") else content.split("\n")
    paths = [line.rsplit(":", 2)[0] for line in lines if line[:1] != "("]
    searched = list(dict.fromkeys(paths))
    assert searched == [path for path in listed_paths if not is_key_file(path)]


def test_the_tree_strategy_reaches_the_interesting_cases(tmp_path: Path) -> None:
    # One fixed tree of the strategy's vocabulary, so the referee test is known to be able to
    # see hidden files, negations and nested rules at all.
    files = {
        ".gitignore": "*.log\nbuild/\n",
        "sub/.ignore": "!keep.log\n",
        "sub/keep.log": "",
        "sub/a.log": "",
        "build/x.py": "",
        ".git/info/exclude": "z.md\n",
        "z.md": "",
        "a/z.md": "",
    }
    root = make_tree(tmp_path, files)
    content = glob(root, "**/*")
    assert content.split("\n") == [
        ".gitignore",
        "sub/.ignore",
        "sub/keep.log",
        "(2 paths hidden by .gitignore, 2 by .git/info/exclude)",
    ]
    if RG is not None:
        assert listed(content) == rg_files(root)


# -- done when: a copy of a real Python project -------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Python project as it sits on a laptop: a package, tests, a .venv with a few hundred
    files, __pycache__ folders, build output, and a .gitignore that names some of it."""
    root = tmp_path / "project"
    files = {
        ".gitignore": "__pycache__/\n*.py[cod]\nbuild/\n*.egg-info/\n.env\n",
        ".git/info/exclude": "notes.py\n",
        ".github/workflows/ci.yml": "on: push\n",
        ".env": "KEY=1\n",
        "pyproject.toml": "[project]\nname = 'calc'\n",
        "src/calc/__init__.py": "from .ops import divide\n",
        "src/calc/ops.py": "def divide(a, b):\n    return a // b\n",
        "src/calc/__pycache__/ops.cpython-311.pyc": "\0",
        "src/calc.egg-info/SOURCES.txt": "src/calc/ops.py\n",
        "tests/test_ops.py": "from calc import divide\n\ndef test_divide():\n    divide(7, 2)\n",
        "tests/__pycache__/test_ops.cpython-311.pyc": "\0",
        "build/lib/calc/ops.py": "def divide(a, b):\n    return a // b\n",
        ".venv/.gitignore": "*\n",
        ".venv/pyvenv.cfg": "home = /usr/bin\n",
        ".venv/bin/python": "",
    }
    for n in range(300):
        files[f".venv/lib/python3.11/site-packages/pkg{n // 10}/mod{n}.py"] = "import divide\n"
    return make_tree(root, files)


def test_a_python_project_lists_its_own_files_and_none_of_the_venv(project: Path) -> None:
    ours = listed(glob(project, "**/*.py"))
    assert ours == ["src/calc/__init__.py", "src/calc/ops.py", "tests/test_ops.py"]
    if RG is None:
        return
    # As a user would type it: ripgrep's own defaults (.git present, hidden files skipped).
    typed = subprocess.run(
        [RG, "--files", "--no-config", "-g", "*.py"], cwd=project, capture_output=True, text=True
    )
    assert sorted(typed.stdout.split()) == ours
    assert [p for p in rg_files(project) if p.endswith(".py")] == ours


def test_ignored_python_files_stay_hidden_whatever_the_pattern(project: Path) -> None:
    # ripgrep lets a -g glob beat .gitignore ("rg --files -g '*.py'" lists an ignored
    # _version.py); glob and grep keep the ignore files' word, so they agree with each other.
    make_tree(project, {"src/calc/_version.py": "version = 1\n", "notes.py": "version = 2\n"})
    with open(project / ".gitignore", "a") as gitignore:
        gitignore.write("src/calc/_version.py\n")
    (project / ".git/info/exclude").write_text("notes.py\n")
    assert "_version.py" not in glob(project, "**/*.py") and "notes" not in glob(project, "*.py")
    if RG is None:
        return
    typed = subprocess.run(
        [RG, "--files", "--no-config", "-g", "*.py"], cwd=project, capture_output=True, text=True
    )
    assert {"src/calc/_version.py", "notes.py"} <= set(typed.stdout.split())
    for pattern_glob in ["*.py", "**/*.py", "src/**", "**"]:
        args = GrepArgs(pattern="version = ", glob=pattern_glob)
        assert run_grep(args, ToolContext(project)).content.startswith("no matches"), pattern_glob


@needs_rg
def test_grep_searches_what_glob_lists(project: Path) -> None:
    files = set(listed(glob(project, "**/*")))
    assert len(files) == 6 and not [path for path in files if ".venv" in path]
    for pattern_glob in [None, "*.py", "**/*.py", "src/**", "**", ".*"]:
        args = GrepArgs(pattern="divide|home|KEY|push|calc|pycache", glob=pattern_glob, limit=500)
        content = run_grep(args, ToolContext(project)).content
        found = {line.split(":")[0] for line in content.split("\n") if line[:1] != "("}
        assert found and found <= files, pattern_glob
