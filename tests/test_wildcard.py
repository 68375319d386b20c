"""wildcard: what each piece of syntax matches, brace expansion, and hostile patterns that a
backtracking translation took minutes over (they must come back at once; pytest-timeout is the
backstop, the assertions are on results)."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.argument_caps import MAX_FIELD_CHARS
from course_agent.protocol import ToolError
from course_agent.tools.guards.wildcard import (
    MAX_ALTERNATIVES,
    MAX_HELD,
    MAX_STEPS,
    Wildcard,
    expand_braces,
)


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("**/*.js", ["a.js", "src/a.js", "a/b/c.js", ".x.js"], ["a.ts", "a.js/b"]),
        ("*.js", ["a.js", ".a.js"], ["src/a.js"]),
        ("src/**", ["src/a", "src/b/c"], ["src", "lib/src/a"]),
        ("src/**/*.js", ["src/a.js", "src/b/c/d.js"], ["a.js", "srcx/a.js"]),
        ("**", ["a", "a/b/c"], []),
        ("**/**/x", ["x", "a/x", "a/b/c/x"], ["x/a"]),
        ("?.js", ["a.js"], ["ab.js", ".js"]),
        ("a/?/b", ["a/x/b"], ["a/xy/b", "a/b"]),
        ("*.[ch]", ["x.c", "x.h"], ["x.o", "x.ch"]),
        ("[!a]*", ["b", "bar"], ["a", "abc"]),
        ("[^a-c]?", ["dx", "zz"], ["ax", "cx", "d"]),
        ("[]]x", ["]x"], ["x"]),
        ("*[0-9]*[0-9].log", ["a1b2.log", "12.log"], ["a1.log", "ab.log"]),
        ("**/*.{js,ts}", ["a.js", "b/c.ts"], ["a.jsx", "a.rs"]),
        ("{src,test}/*.js", ["src/a.js", "test/b.js"], ["lib/a.js", "src/x/a.js"]),
        ("{a,{b,c}}", ["a", "b", "c"], ["d", "{a,b}"]),
        ("{a/b,c}.js", ["a/b.js", "c.js"], ["a.js"]),
        ("\\*.js", ["*.js"], ["a.js"]),
        ("\\{a,b}", ["{a,b}"], ["a"]),
        ("a**b", ["ab", "axxb"], ["a/b"]),
        ("a,b}", ["a,b}"], ["a"]),
        ("weird(name)+.js", ["weird(name)+.js"], ["weirdname.js"]),
        ("*a*b*", ["ab", "xaybz"], ["ba", "a/b"]),
        ("ab*ba", ["abba", "ab-ba"], ["aba"]),  # the two ends may not overlap
    ],
)
def test_what_matches(pattern: str, matches: list[str], misses: list[str]) -> None:
    wildcard = Wildcard(pattern)
    assert [path for path in matches if not wildcard.match(path)] == [], pattern
    assert [path for path in misses if wildcard.match(path)] == [], pattern


def test_brace_expansion() -> None:
    assert expand_braces("{a,b}{c,d}") == ["ac", "ad", "bc", "bd"]
    assert expand_braces("x{a,{b,c}}y") == ["xay", "xby", "xcy"]
    assert expand_braces("a\\{b,c}") == ["a\\{b,c}"]  # kept escaped for the segment matcher
    assert expand_braces("{,s}") == ["", "s"]


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("*.[ch", "has a [ without a closing ]"),
        ("{a,b", "has a { without a closing }"),
        ("[z-a]", "not a valid wildcard"),
        ("{a,b}" * 7, f"more than {MAX_ALTERNATIVES} alternatives"),
        ("x" * (MAX_FIELD_CHARS + 1), f"at most {MAX_FIELD_CHARS}"),
    ],
)
def test_bad_patterns_are_refused_in_words(pattern: str, words: str) -> None:
    with pytest.raises(ToolError, match=re.escape(words)):
        Wildcard(pattern)


# -- against an independent matcher: fnmatch, one segment at a time ----------------------------


@given(
    segment=st.lists(
        st.sampled_from(["*", "?", "a", "b", "[ab]", "[!a]", ".", "ab"]), max_size=8
    ).map("".join),
    name=st.text(alphabet="ab.c", max_size=10),
)
def test_a_segment_agrees_with_fnmatch(segment: str, name: str) -> None:
    assert Wildcard(segment).match(name) == fnmatch.fnmatchcase(name, segment)


# -- hostile patterns: each took a backtracking regex seconds to minutes -----------------------


@pytest.mark.timeout(30)
def test_many_stars_against_a_long_name() -> None:
    # As a regex, [^/]*a[^/]*a...b against 60 a's: 38 s for eight stars, 5x more per star.
    assert not Wildcard("*a" * 8 + "*b").match("a" * 60)
    assert not Wildcard("*a" * 2000 + "*b").match("a" * 255)
    assert Wildcard("*a" * 8 + "*b").match("a" * 60 + "b")


@pytest.mark.timeout(30)
def test_many_globstars_against_a_deep_path() -> None:
    deep = "/".join(["d"] * 40)
    assert not Wildcard("**/" * 12 + "x").match(f"{deep}/y")
    assert Wildcard("**/" * 12 + "x").match(f"{deep}/x")
    assert not Wildcard("**/d*/" * 12 + "*.x").match(f"{deep}/y")


@pytest.mark.timeout(30)
def test_deeply_nested_braces_are_refused_or_matched_without_recursion() -> None:
    nested = "{" * 2000 + "a" + "}" * 2000
    assert Wildcard(nested).match("a")
    with pytest.raises(ToolError, match="without a closing"):
        Wildcard("{" * MAX_FIELD_CHARS)


def test_directories_are_matched_once_per_directory() -> None:
    wildcard = Wildcard("src/**/*.js")
    for n in range(10):
        assert wildcard.match(f"src/lib/f{n}.js")
    assert not wildcard.match("lib/src/a.js")
    assert {d for d, (_, test) in wildcard._dirs.items() if test} == {"src/lib", "lib/src"}
    assert set(wildcard._dirs) == {"src", "src/lib", "lib", "lib/src"}


def test_globstars_in_a_row_are_one() -> None:
    # "**/**" is "**": 1,000 of them in a row are one step, not 1,000 states per directory.
    wildcard = Wildcard("/".join(["**"] * 1000) + "/b")
    assert len(wildcard.steps) == 3  # **, b, the end
    assert wildcard.match("b") and wildcard.match("a/c/b") and not wildcard.match("a/c")


# A pattern whose states all stay alive down a deep path: "**/*" repeated, 64 times over.
ALIVE = (
    "/".join(["**", "*"] * 1000)[: MAX_FIELD_CHARS - 300]
    + "/{"
    + ",".join(f"q{n}" for n in range(64))
    + "}"
)


def test_too_many_segments_once_expanded_are_refused_in_words() -> None:
    # It kept up to 98,000 states per folder: a 600-deep chain of folders took 13 s and 1.8 GB.
    with pytest.raises(ToolError, match=f"more than {MAX_STEPS} path segments once its"):
        Wildcard(ALIVE)


def test_what_a_wildcard_remembers_is_bounded_down_a_deep_chain() -> None:
    # As many live states as allowed, down a chain of 600 folders: what is remembered stays
    # under its bound (unbounded, it held 600 x 1,000 states), and matching still works.
    wildcard = Wildcard("/".join(["**", "*"] * (MAX_STEPS // 2 - 1)))
    assert len(wildcard.steps) <= MAX_STEPS
    chain = ""
    for _ in range(600):
        chain += "d/"
        wildcard.match(chain + "x.txt")
        assert sum(len(states) + 1 for states, _ in wildcard._dirs.values()) <= MAX_HELD
    assert wildcard.match(chain + "x.txt") and not wildcard.match("x.txt")
