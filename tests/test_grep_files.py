"""grep: ripgrep underneath, sorted path:line:content on top, every dimension bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_agent.protocol import ToolCall, ToolContext, ToolError
from course_agent.registry import default_registry
from course_agent.safety import redaction
from course_agent.tools import grep_files
from course_agent.tools.grep_files import GrepArgs, find_rg, run_grep
from course_agent.tools.guards import ripgrep, search

pytestmark = pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def grep(root: Path, pattern: str, glob: str | None = None, limit: int = 50) -> str:
    args = GrepArgs(pattern=pattern, glob=glob, limit=limit)
    return run_grep(args, ToolContext(root)).content


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            "src/calc.js": "export function divide(a, b) {\n  return Math.floor(a / b)\n}\n",
            "src/report.js": "import { divide } from './calc.js'\nconst x = divide(1, 2)\n",
            "src/types.ts": "export type Divide = (a: number) => number\n",
            "test/calc.test.js": "test('divide', () => divide(7, 2))\n",
            ".eslintrc": "DIVIDE_MODE=floor\n",
            "node_modules/x/index.js": "divide()\n",
            "dist/bundle.js": "divide()\n",
            "src/.git/hooks.js": "divide()\n",
            "logo.png": b"\x89PNG\0\0divide\n",
        },
    )


def test_matches_are_sorted_path_line_content(tree: Path) -> None:
    assert grep(tree, "divide").split("\n") == [
        "src/calc.js:1:export function divide(a, b) {",
        "src/report.js:1:import { divide } from './calc.js'",
        "src/report.js:2:const x = divide(1, 2)",
        "test/calc.test.js:1:test('divide', () => divide(7, 2))",
    ]


def test_dotfiles_are_searched_and_case_is_respected(tree: Path) -> None:
    assert grep(tree, "DIVIDE") == ".eslintrc:1:DIVIDE_MODE=floor"
    assert grep(tree, "(?i)divide_mode") == ".eslintrc:1:DIVIDE_MODE=floor"


KEY_FILES = [".env", "sub/.env.local", "certs/site.pem", "tls.key", "id_rsa", ".netrc", ".PYPIRC"]


@pytest.mark.parametrize("glob", [None, "*", ".env", "**/.env*", "*.pem", "id_rsa", ".pypirc"])
def test_key_files_are_never_searched(tmp_path: Path, glob: str | None) -> None:
    make_tree(tmp_path, {name: "API_KEY=sk-live-123\n" for name in KEY_FILES})
    make_tree(tmp_path, {"config.py": "API_KEY = os.environ['API_KEY']\n"})
    content = grep(tmp_path, "API_KEY", glob=glob)
    assert "sk-live" not in content
    if glob in (None, "*"):
        assert content == "config.py:1:API_KEY = os.environ['API_KEY']"


def test_names_read_file_refuses_are_never_searched_either(tmp_path: Path) -> None:
    # rg's --iglob folds ASCII case only: "a.\u212aey" (a Kelvin sign, "k" once case-folded)
    # and "id_r\u017fa" (a long s) slipped past it, while read_file refuses them, as a
    # case-insensitive disk (APFS) may open them as a.key and id_rsa.
    names = ["a.\u212aey", "id_r\u017fa", "x.PEM/y.txt", ".eNv.local"]
    make_tree(tmp_path, {name: "API_KEY=sk-live-123\n" for name in names})
    make_tree(tmp_path, {"config.py": "API_KEY = 1\n" * 60})
    assert "sk-live" not in grep(tmp_path, "API_KEY")
    assert "sk-live" not in grep(tmp_path, "API_KEY", limit=1)  # the counting pass too
    assert "(59 more matches withheld" in grep(tmp_path, "API_KEY", limit=1)


@pytest.mark.parametrize(
    ("glob", "paths"),
    [
        ("*.js", ["src/calc.js", "src/report.js", "src/report.js", "test/calc.test.js"]),
        ("*.ts", ["src/types.ts"]),
        ("src/**/*.ts", ["src/types.ts"]),
        ("test/**", ["test/calc.test.js"]),
        ("node_modules/**", []),  # the skipped directories stay skipped
        ("*.png", []),  # binary files are skipped
    ],
)
def test_glob_narrows_the_files(tree: Path, glob: str, paths: list[str]) -> None:
    content = grep(tree, "(?i)divide", glob=glob)
    if paths:
        assert [line.split(":")[0] for line in content.split("\n")] == paths
    else:
        assert content == f"no matches for (?i)divide in files matching {glob}"


def test_no_match_says_so(tree: Path) -> None:
    assert grep(tree, "multiply") == "no matches for multiply"


def test_withheld_count_is_exact_across_files(tmp_path: Path) -> None:
    make_tree(tmp_path, {f"f{n}.txt": "hit\n" * 30 for n in range(10)})
    lines = grep(tmp_path, "hit", limit=45).split("\n")
    assert lines[:2] == ["f0.txt:1:hit", "f0.txt:2:hit"]
    assert lines[44] == "f1.txt:15:hit"
    assert lines[45:] == ["(255 more matches withheld; narrow with glob or a stricter pattern)"]


def test_withheld_count_is_exact_within_one_file(tmp_path: Path) -> None:
    # More than `limit` matches in one file: rg stops at --max-count, a counting pass fills in.
    make_tree(tmp_path, {"a.txt": "hit\n" * 1000, "b.txt": "hit\n" * 3})
    lines = grep(tmp_path, "hit", limit=5).split("\n")
    assert lines[:5] == [f"a.txt:{n}:hit" for n in range(1, 6)]
    assert lines[5] == "(998 more matches withheld; narrow with glob or a stricter pattern)"


def test_lines_are_cut_at_120_characters(tmp_path: Path) -> None:
    make_tree(tmp_path, {"min.js": "x" * 200 + " needle " + "y" * 1000 + "\n"})
    line = grep(tmp_path, "needle")
    assert line == "min.js:1:" + "x" * 120 + "…"


def test_crlf_and_invalid_utf8(tmp_path: Path) -> None:
    make_tree(tmp_path, {"w.txt": b"one\r\ntwo caf\xe9\r\n"})
    assert grep(tmp_path, "two") == "w.txt:2:two caf\ufffd"


def test_a_pattern_starting_with_a_dash_is_a_pattern(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.txt": "--force\n"})
    assert grep(tmp_path, "--force") == "a.txt:1:--force"


@pytest.mark.parametrize(
    ("pattern", "glob", "words"),
    [
        ("(", None, "regex parse error"),
        ("a{2,1}", None, "regex parse error"),
        ("a\nb", None, "literal"),
        ("x", "[", "error parsing glob"),
    ],
)
def test_invalid_regex_or_glob_quotes_ripgrep(
    tree: Path, pattern: str, glob: str, words: str
) -> None:
    with pytest.raises(ToolError, match=f"grep failed: .*{words}"):
        grep(tree, pattern, glob=glob)


@pytest.mark.parametrize(("pattern", "glob"), [("", None), ("a\0b", None), ("a", "*\0")])
def test_empty_or_nul_is_refused(tree: Path, pattern: str, glob: str | None) -> None:
    with pytest.raises(ToolError):
        grep(tree, pattern, glob=glob)


@pytest.mark.timeout(60)
def test_catastrophic_pattern_comes_back(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.txt": "a" * 100_000 + "!\n" + "a" * 30 + "\n"})
    assert grep(tmp_path, "(a+)+$") == "a.txt:2:" + "a" * 30
    assert grep(tmp_path, "(a|aa)+b") == "no matches for (a|aa)+b"


def test_a_spent_time_budget_stops_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.txt": "hit\n" * 10_000})
    monkeypatch.setattr(grep_files, "TIME_BUDGET_S", 0.0)
    result = run_grep(GrepArgs(pattern="hit"), ToolContext(tmp_path))
    assert result.meta["stopped"] is True
    assert "(search stopped after 0 s with" in result.content


def test_missing_ripgrep_says_how_to_install_it(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_files, "find_rg", lambda: None)
    with pytest.raises(ToolError, match="pip install ripgrep"):
        grep(tree, "divide")


def test_meta_carries_the_counts(tree: Path) -> None:
    result = run_grep(GrepArgs(pattern="divide", limit=2), ToolContext(tree))
    assert result.meta == {
        "matches": 4,
        "shown": 2,
        "stopped": False,
        "exact": True,
        "big_files_left": False,
    }


def test_withheld_count_is_exact_when_only_some_folders_are_capped(tmp_path: Path) -> None:
    # The counting pass recounts only folders where a file hit the cap: the rest must still add up.
    files = {
        "a/many.txt": "hit\n" * 30,
        "a/few.txt": "hit\n" * 2,
        "a/sub/x.txt": "hit\n" * 3,
        "b/few.txt": "hit\n",
        "top.txt": "hit\n" * 12,
    }
    make_tree(tmp_path, files)
    result = run_grep(GrepArgs(pattern="hit", limit=10), ToolContext(tmp_path))
    assert result.meta["matches"] == 48
    assert "(38 more matches withheld" in result.content


# -- ignore files: grep searches what glob lists ------------------------------------------------


@pytest.fixture
def ignoring(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n.env\n",
            "src/a.py": "hit\n",
            "src/gen.log": "hit\n",
            "build/b.py": "hit\n",
            ".env": "hit\n",
            ".venv/lib/c.py": "hit\n",
            "pkg/__pycache__/m.pyc": "hit\n",
            ".github/ci.yml": "hit\n",
        },
    )


@pytest.mark.parametrize(
    ("glob", "paths"),
    [
        (None, [".github/ci.yml", "src/a.py"]),
        ("*.py", ["src/a.py"]),
        ("**", [".github/ci.yml", "src/a.py"]),  # "**" matches build/ too: rg enters it
        ("build/**", []),
        ("*.log", []),  # a glob does not bring back what .gitignore hides
    ],
)
def test_ignored_files_are_not_searched(ignoring: Path, glob: str | None, paths: list[str]) -> None:
    content = grep(ignoring, "hit", glob=glob)
    if paths:
        assert [line.split(":")[0] for line in content.split("\n")] == paths
    else:
        assert content.startswith("no matches for hit")


def test_no_match_says_where_ignore_files_hid_matches(ignoring: Path) -> None:
    # Told by the one counting pass: rg reads no ignore file, so it counts the hidden files'
    # matches too, and the rules then leave them out. No walk after rg.
    assert grep(ignoring, "hit", glob="build/**") == (
        "no matches for hit in files matching build/**\n"
        "(not shown: 1 matching file hidden by .gitignore)"
    )
    assert grep(ignoring, "miss") == "no matches for miss"  # nothing hidden holds it either


def test_a_recount_of_one_folder_keeps_the_ignore_files_above_it(tmp_path: Path) -> None:
    # The counting pass names folders to rg, which then reads no ignore file above them.
    make_tree(tmp_path, {".gitignore": "*.log\n", "a/many.txt": "hit\n" * 30, "a/x.log": "hit\n"})
    result = run_grep(GrepArgs(pattern="hit", limit=10), ToolContext(tmp_path))
    assert result.meta["matches"] == 30
    assert "(20 more matches withheld;" in result.content


# -- counts within a budget ----------------------------------------------------------------------


def test_past_the_count_budget_the_count_is_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.txt": "hit\n" * 500, "b.txt": "hit\n" * 500})
    monkeypatch.setattr(ripgrep, "COUNT_BUDGET", 100)
    monkeypatch.setattr(search, "COUNT_BUDGET", 100)
    result = run_grep(GrepArgs(pattern="hit", limit=5), ToolContext(tmp_path))
    assert result.content.split("\n")[:5] == [f"a.txt:{n}:hit" for n in range(1, 6)]
    assert result.content.split("\n")[5] == (
        "(at least 197 more matches withheld: counting stopped past 100 matches in one file; "
        "narrow with glob or a stricter pattern)"
    )
    assert result.meta["exact"] is False and result.meta["stopped"] is False


# -- a configured key is redacted before the line is cut ------------------------------------------

KEY = "sk-proj-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 3  # 116 characters


@pytest.fixture
def known_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """KEY is a key this process read (as settings register one), for this test only."""
    monkeypatch.setattr(redaction, "_KNOWN", set())
    redaction.remember_secrets([KEY])
    return KEY


def grep_with_key(root: Path, pattern: str) -> str:
    return run_grep(GrepArgs(pattern=pattern), ToolContext(root)).content


WITHHELD = "(1 file withheld: each holds a configured key, so none is searched)"


def test_a_file_holding_the_key_is_withheld_not_cut(tmp_path: Path, known_key: str) -> None:
    # Cut first, the excerpt ended in "sk-proj-ABCDEFG…"; then a holder was searched redacted
    # (and a 10 MB one left out unsaid). Now no line of a holder is shown at all (issue 30).
    make_tree(tmp_path, {"conf.py": "token = '" + "x" * 100 + KEY + "'\n", "a.py": "token\n"})
    assert grep_with_key(tmp_path, "token") == "a.py:1:token\n" + WITHHELD
    make_tree(tmp_path, {"keys.txt": "needle " + f"{KEY} " * 5 + "\n"})
    assert grep_with_key(tmp_path, "needle") == "no matches for needle\n" + WITHHELD.replace(
        "1 file", "2 files"
    )


def test_ripgreps_complaint_quoting_a_key_keeps_no_part_of_it(
    tmp_path: Path, known_key: str
) -> None:
    # rg quotes a pattern it cannot parse; its complaint is cut at 400 characters.
    registry = default_registry()
    pattern = "(" + "x" * 340 + KEY
    call = ToolCall("1", "grep", json.dumps({"pattern": pattern}))
    result = registry.execute(call, ToolContext(tmp_path))
    assert result.ok is False and "regex parse error" in result.content
    assert "sk-p" not in result.content


# -- holes: an oracle on keys, ignore files that blind or hang, a folder swapped mid-search --------

ORACLE_KEY = "sk-test-" + "q7Rm2ZxK9pLw4Vn8Bt3Yc6Hd"


@pytest.fixture
def bashrc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(redaction, "_KNOWN", set())
    redaction.remember_secrets([ORACLE_KEY])
    make_tree(tmp_path, {".bashrc": f"alias ll='ls -l'\nexport OPENAI_API_KEY={ORACLE_KEY}\n"})
    return tmp_path


def guess_next(root: Path, known: str) -> str | None:
    """The attack: one call per candidate character, the one that matches is the next one."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for char in alphabet:
        result = run_grep(GrepArgs(pattern=f"OPENAI_API_KEY={known}{char}"), ToolContext(root))
        if result.meta["matches"] or not result.content.startswith("no matches"):
            return char
    return None


def test_grep_is_no_oracle_on_a_known_key(bashrc: Path) -> None:
    # Hole 1: every line shown was redacted, but whether a call matched told one bit: 138 calls
    # recovered the whole key. A file holding a key is now withheld from every search.
    assert guess_next(bashrc, "sk-test-") is None
    assert guess_next(bashrc, "") is None  # not even the vendor prefix
    for pattern in [f"KEY=sk-test-.{{{n}}}[a-m]" for n in range(3)] + ["q7Rm", "sk-test"]:
        result = run_grep(GrepArgs(pattern=pattern), ToolContext(bashrc))
        assert result.content.startswith("no matches") and result.meta["matches"] == 0
    # The file holding it is withheld whole, whatever the pattern, and the result says so.
    result = run_grep(GrepArgs(pattern="OPENAI_API_KEY|alias", limit=1), ToolContext(bashrc))
    assert result.content == "no matches for OPENAI_API_KEY|alias\n" + WITHHELD


def test_a_key_split_over_two_lines_is_not_cut(bashrc: Path) -> None:
    # Decided: not handled. A real file holds a key on one line (a PEM block is a key file,
    # never searched); cutting halves would cut every line that starts like a key's end.
    make_tree(bashrc, {"split.txt": f"{ORACLE_KEY[:14]}\n{ORACLE_KEY[14:]}\n"})
    assert run_grep(GrepArgs(pattern="^sk-test-"), ToolContext(bashrc)).meta["matches"] == 1


def test_an_ignore_file_symlinked_to_dev_zero_does_not_blind_grep(tmp_path: Path) -> None:
    # Hole 8: rg read /dev/zero as .gitignore until its memory cap, then "no matches".
    make_tree(tmp_path, {"src/a.py": "needle\n"})
    (tmp_path / ".gitignore").symlink_to("/dev/zero")
    (tmp_path / "src" / ".ignore").symlink_to("/dev/zero")
    result = run_grep(GrepArgs(pattern="needle"), ToolContext(tmp_path))
    assert result.content == "src/a.py:1:needle"


def test_an_ignore_file_symlinked_outside_is_not_applied(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "root", {"a.py": "needle\n", "b.txt": "needle\n"})
    make_tree(tmp_path, {"outside/rules": "*.py\n"})
    (root / ".gitignore").symlink_to(tmp_path / "outside" / "rules")
    assert grep(root, "needle") == "a.py:1:needle\nb.txt:1:needle"


@pytest.mark.timeout(30)
def test_a_fifo_ignore_file_does_not_hold_grep(tmp_path: Path) -> None:
    # Hole 7: rg opened a FIFO .rgignore and waited its whole 10 s budget, every call.
    make_tree(tmp_path, {"a.py": "needle\n"})
    os.mkfifo(tmp_path / ".rgignore")
    result = run_grep(GrepArgs(pattern="needle"), ToolContext(tmp_path))
    assert result.content == "a.py:1:needle" and result.meta["stopped"] is False


SWAPPER = """
import os, sys
root = sys.argv[1]
sub, real, out = os.path.join(root, "sub"), os.path.join(root, "sub.real"), sys.argv[2]
print("ready", flush=True)
while True:
    os.rename(sub, real)
    os.symlink(out, sub)
    os.unlink(sub)
    os.rename(real, sub)
"""


@pytest.mark.timeout(300)
def test_a_folder_swapped_in_a_loop_never_shows_a_line_from_outside(tmp_path: Path) -> None:
    # Hole 4: a folder swapped for a symlink to ../outside while rg walked: 5 to 11 of 400
    # calls showed the outside file's line. Lines are now read through descriptors checked
    # inside the root.
    root = make_tree(tmp_path / "root", {f"sub/f{n}.txt": "needle inside\n" for n in range(200)})
    make_tree(tmp_path, {f"outside/f{n}.txt": "needle OUTSIDE-SECRET\n" for n in range(200)})
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(tmp_path / "outside")],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: list[str] = []
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        for _ in range(400):
            outcomes.append(grep(root, "needle"))
        assert swapper.poll() is None  # it swapped all along
    finally:
        swapper.kill()
        swapper.wait()
    assert not [text for text in outcomes if "OUTSIDE-SECRET" in text]
    assert any("needle inside" in text for text in outcomes)


def test_a_folder_swapped_between_the_count_and_the_page_shows_nothing_from_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same race made certain: the folder becomes a symlink leading out after rg counted.
    root = make_tree(tmp_path / "root", {"sub/f.txt": "needle inside\n", "top.txt": "needle\n"})
    make_tree(tmp_path, {"outside/f.txt": "needle OUTSIDE-SECRET\n"})
    page = search._page

    def swap_then_page(*args: object, **kwargs: object) -> object:
        os.rename(root / "sub", root / "sub.real")
        (root / "sub").symlink_to(tmp_path / "outside")
        return page(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "_page", swap_then_page)
    content = grep(root, "needle")
    assert "OUTSIDE" not in content
    assert content.startswith("top.txt:1:needle")
