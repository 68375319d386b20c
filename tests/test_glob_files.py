"""glob: the walk (walk.py is glob's helper), the tool's output, and its matching against an
independent oracle (the matcher itself, wildcard.py, has its own tests)."""

from __future__ import annotations

import contextlib
import fnmatch
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext, ToolError
from course_agent.safety import redaction
from course_agent.tools import glob_files as glob_module
from course_agent.tools.glob_files import GlobArgs, run_glob
from course_agent.tools.guards import walk as walk_module
from course_agent.tools.guards.walk import SKIP_DIRS, Walk, show_path


def make_tree(root: Path, files: list[str]) -> Path:
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{relative}\n")
    return root


def glob(root: Path, pattern: str, limit: int = 200) -> str:
    return run_glob(GlobArgs(pattern=pattern, limit=limit), ToolContext(root)).content


SANDBOX = [
    "README.md",
    "package.json",
    ".env",
    "src/calc.js",
    "src/report.js",
    "src/types.ts",
    "src/lib/deep/util.js",
    "test/calc.test.js",
    "node_modules/left-pad/index.js",
    "src/node_modules/inner/index.js",
    "dist/bundle.js",
    "pkg/dist/out.js",
    ".git/config",
    ".github/workflows/ci.yml",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path, SANDBOX)


# -- the walk ----------------------------------------------------------------------------------


def test_walk_skips_the_noise_at_any_depth(tree: Path) -> None:
    walk = Walk(tree)
    found = list(walk)
    assert "src/calc.js" in found and ".env" in found and ".github/workflows/ci.yml" in found
    assert not [path for path in found if SKIP_DIRS & set(path.split("/"))]
    assert len(found) == 9 and walk.complete and not walk.hidden
    assert found == sorted(found)  # the walk itself is in sorted order


def test_walk_from_a_subdirectory_with_a_depth_bound(tree: Path) -> None:
    assert sorted(Walk(tree, "src", max_depth=0)) == ["calc.js", "report.js", "types.ts"]
    assert "lib/deep/util.js" in set(Walk(tree, "src"))
    assert list(Walk(tree, "node_modules")) == []  # skipped even when asked for
    assert list(Walk(tree, "missing")) == []


def test_walk_never_enters_symlinked_directories(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "root", ["a.js", "sub/b.js"])
    make_tree(tmp_path / "outside", ["secret.js"])
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "again").symlink_to(root / "sub")  # inside, but a second way round
    (root / "loop").symlink_to(root)
    (root / "secret.js").symlink_to(tmp_path / "outside" / "secret.js")
    (root / "alias.js").symlink_to("a.js")
    (root / "dangling.js").symlink_to("nowhere.js")
    (root / "spin").symlink_to("spin")
    (root / "sneaky.js").symlink_to("spin/../out/secret.js")  # through a loop, then out
    # Symlinked files are not listed either, even inside (alias.js): ripgrep never searches
    # them, so grep would never find what glob listed. Their targets are listed as themselves.
    assert sorted(Walk(root.resolve())) == ["a.js", "sub/b.js"]


@pytest.mark.parametrize(
    "pattern", ["pkg/*.js", "pkg/**", "pkg/", "./pkg/*.js", "a/../pkg/*.js", "deep/link/*.js"]
)
def test_a_symlinked_folder_named_in_the_prefix_is_not_entered(
    tmp_path: Path, pattern: str
) -> None:
    # With pkg -> lib, `glob pkg/*.js` listed lib/c.js (and pkg/** too), while `**` through the
    # same link finds nothing and grep with that glob finds nothing: symlinks are not entered.
    root = make_tree(tmp_path, ["lib/c.js", "a/x.txt", "deep/real/d.js"])
    (root / "pkg").symlink_to("lib")
    (root / "deep" / "link").symlink_to("real")
    result = run_glob(GlobArgs(pattern=pattern), ToolContext(root))
    link = "deep/link" if pattern.startswith("deep") else "pkg"
    assert result.content == (
        f"no files match {pattern} ({link} is a symlink: glob neither enters nor lists "
        "symlinks; name the folder it points to)"
    )
    assert glob(root, "lib/*.js") == "lib/c.js" and glob(root, "**/c.js") == "lib/c.js"


def test_a_symlink_to_an_ignored_file_is_not_listed(tmp_path: Path) -> None:
    # config.js -> build/config.js: listed, glob would name a file whose content grep never
    # searches (build/ is ignored, and rg does not follow symlinks).
    root = make_tree(tmp_path, ["build/config.js", "a.js"])
    (root / ".gitignore").write_text("build/\n")
    (root / "config.js").symlink_to("build/config.js")
    assert glob(root, "*.js").split("\n") == ["a.js", "(1 path hidden by .gitignore)"]


@pytest.mark.parametrize(
    "folder", [".env", ".ENV", ".env.d", "certs.pem", "deploy.key", "id_rsa.d"]
)
def test_a_folder_named_like_a_key_file_is_never_listed(tmp_path: Path, folder: str) -> None:
    # grep never searches below it (its name is a key file's), so glob does not list it: a
    # virtualenv made with `python -m venv .env` is noise anyway.
    key_file = [] if folder == ".env" else [".env"]  # a key file's name stays listed
    root = make_tree(
        tmp_path, [f"{folder}/bin/activate", f"{folder}/pyvenv.cfg", "a.py", *key_file]
    )
    assert glob(root, "**/*").split("\n") == [*key_file, "a.py"]
    content = glob(root, f"{folder}/*")
    assert content.startswith(f"no files match {folder}/* ({folder}/ is never listed: its name")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("src/a.js", "src/a.js"),
        ("données/é.txt", "données/é.txt"),
        ("new\nline.txt", "new\\nline.txt"),
        ("tab\there", "tab\\there"),
        ("bell\x07", "bell\\x07"),
        ("bad\udcffname", "bad\\xffname"),  # the byte 0xff as os.fsdecode hands it over
    ],
)
def test_show_path_keeps_one_printable_line(name: str, shown: str) -> None:
    assert show_path(name) == shown
    assert "\n" not in show_path(name)


# -- the tool ----------------------------------------------------------------------------------


def test_lists_sorted_relative_paths_one_per_line(tree: Path) -> None:
    assert glob(tree, "**/*.js") == "src/calc.js\nsrc/lib/deep/util.js\nsrc/report.js\n" + (
        "test/calc.test.js"
    )


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*", [".env", "README.md", "package.json"]),  # dotfiles match
        ("src/*.{js,ts}", ["src/calc.js", "src/report.js", "src/types.ts"]),
        ("./src/*.ts", ["src/types.ts"]),
        ("src/", ["src/calc.js", "src/lib/deep/util.js", "src/report.js", "src/types.ts"]),
        ("**/ci.yml", [".github/workflows/ci.yml"]),
        ("src/calc.js", ["src/calc.js"]),
        ("src/../README.md", ["README.md"]),  # .. before any wildcard, still inside
        ("**/index.js", []),  # every index.js lives under a node_modules
    ],
)
def test_patterns(tree: Path, pattern: str, expected: list[str]) -> None:
    content = glob(tree, pattern)
    if expected:
        assert content.split("\n") == expected
    else:
        assert content.startswith(f"no files match {pattern}")


def test_an_absolute_pattern_inside_the_root_is_fine(tree: Path) -> None:
    assert glob(tree, f"{tree.resolve()}/src/*.ts") == "src/types.ts"


def test_withheld_count_is_exact(tmp_path: Path) -> None:
    make_tree(tmp_path, [f"f{n:03d}.txt" for n in range(237)])
    lines = glob(tmp_path, "*.txt").split("\n")
    assert lines[:2] == ["f000.txt", "f001.txt"] and lines[199] == "f199.txt"
    assert lines[200:] == ["(37 more withheld; narrow the pattern or raise limit)"]
    assert glob(tmp_path, "*.txt", limit=237).count("\n") == 236


def test_empty_result_states_how_many_files_there_are(tree: Path) -> None:
    assert glob(tree, "**/*.py") == "no files match **/*.py (the working directory holds 9 files)"
    assert glob(tree, "lib/*.js") == (
        "no files match lib/*.js (lib/ is not a directory; the working directory holds 9 files)"
    )
    assert ".git, dist and node_modules are never listed" in glob(tree, "node_modules/**")


@pytest.mark.parametrize(
    "pattern", ["../*", "../../**", "/etc/*", "/*", "~/../../*", "src/../../*"]
)
def test_patterns_that_climb_out_are_refused(tree: Path, pattern: str) -> None:
    with pytest.raises(ToolError, match="outside the working directory"):
        glob(tree, pattern)


@pytest.mark.parametrize(("pattern", "words"), [("", "empty"), ("a\0b", "NUL"), ("*/../x", "..")])
def test_bad_patterns_get_specific_messages(tree: Path, pattern: str, words: str) -> None:
    with pytest.raises(ToolError, match=words):
        glob(tree, pattern)


def test_a_reversed_range_is_a_refusal_not_a_crash(tree: Path) -> None:
    with pytest.raises(ToolError, match="not a valid wildcard"):
        glob(tree, "[z-a]")


# -- an independent oracle: whole-segment matching with fnmatch, braces expanded ---------------


def expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [x for alt in match.group(1).split(",") for x in expand_braces(head + alt + tail)]


def segments_match(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    if pattern == ["**"]:
        return bool(path)  # a trailing ** is everything below, not the directory itself
    if pattern[0] == "**":
        return any(segments_match(pattern[1:], path[i:]) for i in range(len(path) + 1))
    return (
        bool(path)
        and fnmatch.fnmatchcase(path[0], pattern[0])
        and (segments_match(pattern[1:], path[1:]))
    )


def oracle(files: list[str], pattern: str) -> list[str]:
    alternatives = [alt.split("/") for alt in expand_braces(pattern)]
    visible = [f for f in files if not SKIP_DIRS & set(f.split("/")[:-1])]
    return sorted(f for f in visible if any(segments_match(a, f.split("/")) for a in alternatives))


NAMES = ["a", "b", "ab.js", ".h", "src", "x.ts", "dist"]
SEGMENTS = ["**", "*", "a*", "*.js", "?", "[ab]*", "{a,src}", "src", ".*", "*.{js,ts}", "b"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join),
        min_size=1,
        max_size=12,
    ),
    pattern=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join),
)
def test_glob_agrees_with_a_segment_by_segment_oracle(
    tmp_path_factory: pytest.TempPathFactory, files: list[str], pattern: str
) -> None:
    root = tmp_path_factory.mktemp("oracle")
    # A name cannot be both a file and a directory: keep the files no other file lives under.
    files = [f for f in dict.fromkeys(files) if not any(g.startswith(f + "/") for g in files)]
    make_tree(root, files)
    expected = oracle(files, pattern)
    content = glob(root, pattern, limit=2000)
    assert content.split("\n") == expected if expected else content.startswith("no files match")


def test_oracle_itself_on_known_cases() -> None:
    files = ["a.js", "src/a.js", "src/b/c.js", "dist/x.js"]
    assert oracle(files, "**/*.js") == ["a.js", "src/a.js", "src/b/c.js"]
    assert oracle(files, "{a,src}/*") == ["src/a.js"]
    assert list(itertools.chain(expand_braces("{a,b}{c,d}"))) == ["ac", "ad", "bc", "bd"]


# -- hostile patterns: linear matching, whatever the pattern -----------------------------------


@pytest.mark.timeout(60)
def test_many_stars_against_a_long_name(tmp_path: Path) -> None:
    # A backtracking regex took 38 s over this one file name; the answer is immediate now.
    make_tree(tmp_path, ["a" * 60, "a" * 59 + "b"])
    assert glob(tmp_path, "*a" * 8 + "*b") == "a" * 59 + "b"


@pytest.mark.timeout(60)
def test_many_globstars_over_a_deep_tree(tmp_path: Path) -> None:
    deep = "/".join(f"d{n}" for n in range(30))
    make_tree(tmp_path, [f"{deep}/a.txt", f"{deep}/x", "x"])
    assert glob(tmp_path, "**/" * 12 + "x") == f"{deep}/x\nx"
    assert glob(tmp_path, "**/" * 12 + "*.py").startswith("no files match")


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("{" * 4000, "without a closing }"),  # 100,000 of them ended in RecursionError
        ("{a,b}" * 7, "more than 64 alternatives"),
    ],
)
def test_pathological_braces_are_refused_in_words(tree: Path, pattern: str, words: str) -> None:
    with pytest.raises(ToolError, match=re.escape(words)):
        glob(tree, pattern)


def test_a_refusal_names_the_pattern_as_written(tree: Path) -> None:
    with pytest.raises(ToolError, match=re.escape("pattern src/lib/*.[ch has a [ without")):
        glob(tree, "src/lib/*.[ch")


# -- ignore files and the Python skips ----------------------------------------------------------


def test_ignored_paths_are_left_out_and_counted(tmp_path: Path) -> None:
    make_tree(tmp_path, ["src/a.py", "src/gen.py", "build/b.py", ".venv/lib/c.py", "x.log"])
    (tmp_path / ".gitignore").write_text("build/\ngen.py\n*.log\n")
    assert glob(tmp_path, "**/*.py") == "src/a.py\n(3 paths hidden by .gitignore)"
    assert glob(tmp_path, "src/*.py") == "src/a.py\n(1 path hidden by .gitignore)"
    assert glob(tmp_path, "build/**") == (
        "no files match build/** (build/ is hidden by .gitignore; "
        "the working directory holds 2 files; 3 paths hidden by .gitignore)"
    )
    assert glob(tmp_path, ".venv/**") == (
        "no files match .venv/** (the working directory holds 2 files; "
        "3 paths hidden by .gitignore; .venv is never listed)"
    )


# -- counts within a budget ----------------------------------------------------------------------


def many(root: Path, count: int) -> list[str]:
    files = [f"d{n // 10:02d}/f{n:03d}.txt" for n in range(count)]
    make_tree(root, files)
    return sorted(files)


def test_past_the_budget_the_withheld_count_is_a_bound(tmp_path: Path) -> None:
    files = many(tmp_path, 300)
    result = run_glob(GlobArgs(pattern="**/*.txt", limit=5), ToolContext(tmp_path), budget=40)
    lines = result.content.split("\n")
    assert lines[:5] == files[:5]  # the page is the true first page, in sorted order
    assert lines[5] == (
        "(at least 31 more withheld; counting stopped after 40 entries walked; "
        "narrow the pattern or raise limit)"
    )
    assert result.meta == {"matches": 36, "shown": 5, "exact": False, "stopped": False}
    exact = run_glob(GlobArgs(pattern="**/*.txt", limit=5), ToolContext(tmp_path), budget=400)
    assert exact.meta == {"matches": 300, "shown": 5, "exact": True, "stopped": False}
    assert exact.content.endswith("(295 more withheld; narrow the pattern or raise limit)")


def test_a_page_that_fills_late_is_still_whole(tmp_path: Path) -> None:
    files = many(tmp_path, 300)
    result = run_glob(GlobArgs(pattern="d2*/*", limit=3), ToolContext(tmp_path), budget=10)
    assert result.content.split("\n") == [
        *files[200:203],
        "(more may be withheld; counting stopped after 224 entries walked; "
        "narrow the pattern or raise limit)",
    ]


def test_an_empty_result_counts_what_its_one_walk_saw(tmp_path: Path) -> None:
    # One walk, counting while it matches: the old second walk over the whole tree cost as much
    # again. A pattern held to the top level says what the top level holds, and where else to look.
    many(tmp_path, 300)
    assert glob(tmp_path, "**/*.md") == (
        "no files match **/*.md (the working directory holds 300 files)"
    )
    assert glob(tmp_path, "*.md") == (
        "no files match *.md (the working directory holds 0 files at its top level, and 30 "
        "folders below: a pattern starting with **/ looks in them too)"
    )
    assert (
        glob(tmp_path, "d01/*.md")
        == "no files match d01/*.md (d01/ holds 10 files at its top level)"
    )
    assert glob(tmp_path, "*/x/*.md") == (
        "no files match */x/*.md (the working directory holds 300 files in its top 3 levels)"
    )
    # Where the walk looked nowhere, the whole working directory is counted, within the budget.
    small = run_glob(GlobArgs(pattern="nothere/*.md"), ToolContext(tmp_path), budget=50)
    assert small.content == (
        "no files match nothere/*.md (nothere/ is not a directory; the working directory holds "
        "at least 45 files)"
    )


def test_one_walk_lists_each_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many(tmp_path, 300)
    listed: list[object] = []
    listing = walk_module._listing
    monkeypatch.setattr(
        walk_module, "_listing", lambda folder: listed.append(folder) or listing(folder)
    )
    assert glob(tmp_path, "**/*.zq9").endswith("holds 300 files)")
    assert len(listed) == 31  # the root and its 30 folders, each once


def test_the_default_budget_stops_a_count_at_5000_entries(tmp_path: Path) -> None:
    # 51 folders of 100 files: 5,151 entries, past the default budget, which the README states.
    make_tree(tmp_path, [f"d{n // 100:02d}/f{n % 100:02d}.txt" for n in range(5100)])
    assert glob_module.WALK_BUDGET == 5_000
    result = run_glob(GlobArgs(pattern="**/*.txt"), ToolContext(tmp_path))
    assert result.meta["exact"] is False and result.meta["shown"] == 200
    assert result.content.split("\n")[-1] == (
        f"(at least {result.meta['matches'] - 200} more withheld; counting stopped after 5000 "
        "entries walked; narrow the pattern or raise limit)"
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join),
        min_size=1,
        max_size=20,
    ),
    pattern=st.sampled_from(["**", "**/*.js", "*", "a/**", "**/b", "*/*"]),
    limit=st.integers(1, 6),
    budget=st.integers(0, 30),
)
def test_within_any_budget_the_page_is_right_and_the_count_a_true_bound(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[str],
    pattern: str,
    limit: int,
    budget: int,
) -> None:
    root = tmp_path_factory.mktemp("budget")
    files = [f for f in dict.fromkeys(files) if not any(g.startswith(f + "/") for g in files)]
    make_tree(root, files)
    expected = oracle(files, pattern)
    result = run_glob(GlobArgs(pattern=pattern, limit=limit), ToolContext(root), budget=budget)
    assert result.meta["shown"] == min(limit, len(expected))
    if expected:
        assert result.content.split("\n")[: result.meta["shown"]] == expected[:limit]
    if result.meta["exact"]:
        assert result.meta["matches"] == len(expected)
    else:
        assert limit <= result.meta["matches"] <= len(expected)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_a_walk_stopped_or_abandoned_keeps_no_folder_open(tmp_path: Path) -> None:
    # Each level of a walk holds its folder open while it walks below it: a walk cut short by
    # a budget, or dropped half-way by its caller, must close them all.
    make_tree(tmp_path, [f"a/b/c/d/f{n}.txt" for n in range(5)] + ["z.txt"])
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(50):
        walk = Walk(tmp_path.resolve())
        walk.budget = 5
        list(walk)
        dropped = iter(Walk(tmp_path.resolve()))
        next(dropped)
        del dropped
    assert len(list(Path("/proc/self/fd").iterdir())) == before


# -- a time budget for the whole call -------------------------------------------------------------


def test_a_spent_time_budget_stops_the_walk_and_says_so(tree: Path) -> None:
    # A pattern that matches nothing walked every file, with no bound in time: a home folder
    # of millions of files, or ignore files that take long to read, kept the kernel busy.
    args = GlobArgs(pattern="**/*.nothing")
    result = run_glob(args, ToolContext(tree), seconds=0)
    assert result.meta["stopped"] is True
    assert result.content == (
        "no files match **/*.nothing in the 0 entries walked before the time budget ran out; "
        "narrow the pattern, e.g. start it with a folder such as src/"
    )


def test_a_page_cut_by_the_time_budget_says_it_may_miss_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, [f"f{n:03}.txt" for n in range(200)])
    # The clock reads 0 when the budget is set, 1 at the walk's first check, and 100 at its
    # second, 16 entries in.
    clock = iter([0, 1] + [100] * 10)
    monkeypatch.setattr(glob_module.time, "monotonic", lambda: next(clock))
    result = run_glob(GlobArgs(pattern="**/*"), ToolContext(tmp_path), seconds=3)
    lines = result.content.split("\n")
    assert result.meta["stopped"] is True and lines[:-1] == [f"f{n:03}.txt" for n in range(16)]
    assert lines[-1].startswith("(listing stopped after 3 s and 16 ")
    assert lines[-1].endswith(
        " entries walked: more files may match; narrow the pattern, e.g. start it with a folder)"
    )


# -- what a walk cannot see, it says; what it shows is one printable line -------------------------


@contextlib.contextmanager
def deep_chain(root: Path, levels: int) -> Iterator[None]:
    """root/d/d/.../d/leaf.txt, `levels` folders deep, for the `with` block. Built and removed
    by changing into each folder in turn: its path is far longer than one path may be."""
    home = os.getcwd()
    try:
        os.chdir(root)
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        Path("leaf.txt").touch()
        os.chdir(root)
        yield
    finally:
        os.chdir(root)
        for _ in range(levels):
            os.chdir("d")
        with contextlib.suppress(FileNotFoundError):
            os.unlink("leaf.txt")
        for _ in range(levels):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(home)


@pytest.mark.timeout(120)
def test_a_tree_deeper_than_a_path_can_name_is_not_said_to_be_empty(tmp_path: Path) -> None:
    # Hole: 10,000 folders deep, the walk could not open the deep folders and said "holds 0
    # files". What it could not read, it now says.
    levels = 3000  # 6,000 characters of "d/": past the 4,096 a Linux path may have
    with deep_chain(tmp_path, levels):
        content = glob(tmp_path, "**/*.zq9")
    assert content.startswith("no files match **/*.zq9 (the working directory holds at least 0 ")
    assert "1 folder could not be read (no permission, or too deep to open)" in content


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("invoice\u202egpj.exe", "invoice\\u202egpj.exe"),  # right-to-left override
        ("a\u2066b\u2069.txt", "a\\u2066b\\u2069.txt"),  # isolates
        ("line\u2028break.txt", "line\\u2028break.txt"),
        ("zero\u200bwidth.txt", "zero\\u200bwidth.txt"),
    ],
)
def test_bidi_and_other_invisible_characters_are_escaped(
    tmp_path: Path, name: str, shown: str
) -> None:
    # Hole: U+202E stayed in glob results sent to the model, turning the name around on screen.
    (tmp_path / name).write_text("x\n")
    assert glob(tmp_path, "**") == shown


@pytest.fixture
def known_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = "sk-test-RED0123456789abcdefTEAM"
    monkeypatch.setattr(redaction, "_KNOWN", set())
    redaction.remember_secrets([key])
    return key


def test_a_name_holding_a_known_key_is_listed_and_matched_without_it(
    tmp_path: Path, known_key: str
) -> None:
    make_tree(tmp_path, [f"notes/{known_key}.txt", "notes/plain.txt"])
    assert glob(tmp_path, "notes/*") == "notes/plain.txt\nnotes/[redacted].txt"  # sorted as named
    # Matched as shown: a pattern spelling the key's next character tells nothing.
    assert glob(tmp_path, "notes/sk-test-R*").startswith("no files match")
    assert glob(tmp_path, "**/sk-test-*").startswith("no files match")
