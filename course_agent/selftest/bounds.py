"""Extension checks 4-5: a student's page_paths and page_matches bound results as glob and grep do.

Each case is a tree generated in a temporary folder; the expected text is what the package's own
run_glob or run_grep answers on it, so the student's function is graded against the tools
themselves: the 200-path page and its withheld line, the total count when nothing matches, the
50-match cap and the 120-character cut. Deliberately not handled: the tools' other notes (ignore
files, time budgets, unreadable files); no generated tree provokes them.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_agent.protocol import ToolContext
from course_agent.selftest.judge import Part, caught, difference, first_of, said, shown
from course_agent.tools.glob_files import GlobArgs, run_glob
from course_agent.tools.grep_files import MAX_LINE_CHARS, GrepArgs, run_grep

__all__ = ["GLOB_PAGE", "GREP_PAGE", "glob_cases", "grep_cases"]

NEEDLE = "needle"
WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta"]  # no "needle"
# (label, matching files, other files, limit, pattern); None draws a number in the case's range.
GLOB_CASES = [
    ("nothing matches", 0, (3, 12), 200, "**/*.py"),
    ("nothing matches in a one-file tree", 0, 1, 200, "**/*.py"),
    ("an empty working directory", 0, 0, 200, "**/*.js"),
    ("a few matches", (1, 9), (0, 5), 200, "**/*.js"),
    ("exactly the limit", 7, 3, 7, "**/*.js"),
    ("one over the limit", 8, 3, 7, "**/*.js"),
    ("over the default 200", (201, 212), (0, 4), 200, "**/*.js"),
    ("a limit of 1", (2, 12), 2, 1, "*.md"),
]
# (label, matches, limit, line lengths drawn from)
GREP_CASES = [
    ("no match", 0, 50, [30]),
    ("short lines", (1, 9), 50, [20, 60]),
    ("lines around the 120-character cut", 6, 50, [119, 120, 121, 122]),
    ("long lines", (3, 8), 50, [200, 600]),
    ("exactly the default 50", 50, 50, [40, 130]),
    ("over the default 50", (51, 90), 50, [40, 130]),
    ("a limit of 5 in one busy file", (6, 30), 5, [50]),
]


@dataclass(frozen=True)
class GlobCase:
    label: str  # "over the default 200 (237 matches, limit 200)"
    matches: list[str]  # every matching path, in glob's order
    limit: int
    pattern: str
    total_files: int
    want: str  # what run_glob answers


@dataclass(frozen=True)
class GrepCase:
    label: str
    matches: list[tuple[str, int, str]]  # every (path, line number, line), sorted
    limit: int
    pattern: str
    want: str  # what run_grep answers


def _draw(rng: random.Random, value: int | tuple[int, int]) -> int:
    return rng.randint(*value) if isinstance(value, tuple) else value


def _glob_tree(folder: Path, rng: random.Random, matching: int, others: int, pattern: str) -> None:
    where = ["", "src/", "src/lib/", "test/"]
    suffix = ".md" if pattern == "*.md" else ".js"
    for number in range(matching):
        place = "" if suffix == ".md" else rng.choice(where)
        (folder / f"{place}f{number:03d}{suffix}").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{place}f{number:03d}{suffix}").write_text("x\n")
    for number in range(others):
        # Never a match: .txt files, or .md files below the top when the pattern is *.md.
        place = rng.choice(["docs/", "src/"]) if suffix == ".md" else rng.choice([*where, "docs/"])
        (folder / f"{place}n{number:03d}.txt").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{place}n{number:03d}.txt").write_text("x\n")


def glob_cases(base: Path, rng: random.Random) -> list[GlobCase]:
    """One tree per line of GLOB_CASES under `base`, and what run_glob says of each."""
    cases = []
    for number, (label, matching, others, limit, pattern) in enumerate(GLOB_CASES):
        folder = base / f"glob-{number}"
        folder.mkdir()
        matching, others = _draw(rng, matching), _draw(rng, others)
        _glob_tree(folder, rng, matching, others, pattern)
        ctx = ToolContext(folder)
        everything = run_glob(GlobArgs(pattern=pattern, limit=2000), ctx)
        matches = everything.content.splitlines() if everything.meta["matches"] else []
        want = run_glob(GlobArgs(pattern=pattern, limit=limit), ctx).content
        total = matching + others
        files = f"{total} file" if total == 1 else f"{total} files"
        label = f"{label} ({pattern}, {matching} matches of {files}, limit {limit})"
        cases.append(GlobCase(label, matches, limit, pattern, total, want))
    return cases


def _filler(rng: random.Random, length: int) -> str:
    text = ""
    while len(text) < length:
        text += rng.choice(WORDS) + " "
    return text[:length]


def _line(rng: random.Random, length: int, needle: bool) -> str:
    """A line of exactly `length` characters, with the needle somewhere in it if `needle`."""
    if not needle:
        return _filler(rng, length)
    at = rng.randint(0, max(0, length - len(NEEDLE)))
    return _filler(rng, at) + NEEDLE + _filler(rng, length - at - len(NEEDLE))


def grep_cases(base: Path, rng: random.Random) -> list[GrepCase]:
    """One tree per line of GREP_CASES under `base`, and what run_grep says of each."""
    cases = []
    for number, (label, count, limit, lengths) in enumerate(GREP_CASES):
        folder = base / f"grep-{number}"
        count = _draw(rng, count)
        files = ["a.txt"] if limit < 50 else rng.sample(["a.txt", "docs/b.md", "src/c.js"], 2)
        lines: dict[str, list[str]] = {name: [] for name in files}
        for _ in range(count):
            lines[rng.choice(files)].append(_line(rng, rng.choice(lengths), needle=True))
        for name in files:  # lines without the needle between the matches
            lines[name] += [_line(rng, 30, needle=False) for _ in range(rng.randint(1, 4))]
            rng.shuffle(lines[name])
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("\n".join(lines[name]) + "\n")
        matches = sorted(
            (name, index, text)
            for name in files
            for index, text in enumerate(lines[name], 1)
            if NEEDLE in text
        )
        want = run_grep(GrepArgs(pattern=NEEDLE, limit=limit), ToolContext(folder)).content
        label = f"{label} ({count} matches, limit {limit})"
        cases.append(GrepCase(label, matches, limit, NEEDLE, want))
    return cases


def _difference(got: object, want: str, hint: Callable[[str, str], str]) -> str:
    """The first line that differs, and what to do about it."""
    if not isinstance(got, str):
        return f"returned {shown(got)}; return the text, lines joined by newlines"
    mine, theirs = got.split("\n"), want.split("\n")
    for number, (line, right) in enumerate(zip(mine, theirs, strict=False), 1):
        if line != right:
            return f"line {number} differs {difference(line, right)}; {hint(line, right)}"
    count = f"{len(mine)} lines, expected {len(theirs)}"
    if len(mine) > len(theirs):
        return f"{count}: {shown(mine[len(theirs)], 60)} is one too many"
    return f"{count}: {shown(theirs[len(mine)], 60)} is missing"


def _glob_hint(line: str, right: str) -> str:
    if right.startswith("no files match"):
        return "say how many files the working directory holds (1 file, 2 files)"
    if right.startswith("("):
        return "after the page, say how many matches were withheld, not how many files there are"
    return "the page is the first `limit` matches, in the order given"


def _grep_hint(line: str, right: str) -> str:
    if right.endswith("…"):
        return (
            f"a line over {MAX_LINE_CHARS} characters keeps its first {MAX_LINE_CHARS} and gets …"
        )
    if right.startswith("("):
        return "after the page, say how many matches were withheld"
    if right.startswith("no matches"):
        return "say that nothing matched, and the pattern"
    return "each match is path:line:text, the first `limit` of them"


def cases_glob(rng: random.Random) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="course-agent-glob-") as tmp:
        cases = glob_cases(Path(tmp), rng)
    return [
        {
            "ask": [list(case.matches), case.limit, case.pattern, case.total_files],
            "label": case.label,
            "want": case.want,
        }
        for case in cases
    ]


def cases_grep(rng: random.Random) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="course-agent-grep-") as tmp:
        cases = grep_cases(Path(tmp), rng)
    return [
        {
            "ask": [[list(match) for match in case.matches], case.limit, case.pattern],
            "label": case.label,
            "want": case.want,
        }
        for case in cases
    ]


def _answers(key: str) -> Callable[[list[Any], Mapping[str, Any]], list[Any]]:
    """In the kernel: the student's page function on each case's arguments, its text as data."""

    def answer(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
        answers = []
        for ask in asks:
            args = ask if key == "page_paths" else [[tuple(m) for m in ask[0]], *ask[1:]]
            try:
                got = functions[key](*args)
                answers.append({"text": got} if isinstance(got, str) else {"bad": repr(got)[:80]})
            except Exception as exc:
                answers.append(caught(exc))
        return answers

    return answer


def _judges(key: str, hint: Callable[[str, str], str], tool: str) -> Callable[..., str]:
    """In the grader: each text against the tool's own, the first different line named."""

    def judge(cases: list[dict[str, Any]], answers: list[Any]) -> str:
        failures = []
        for case, got in zip(cases, answers, strict=True):
            if "raised" in got:
                failures.append(f"{case['label']}: {said(got, key)}")
            elif "bad" in got:
                failures.append(f"{case['label']}: returned {got['bad']}; return the text")
            elif got["text"] != case["want"]:
                failures.append(f"{case['label']}: {_difference(got['text'], case['want'], hint)}")
        first_of(failures, len(cases), "trees")
        if tool == "glob":
            return (
                f"{len(cases)} trees paged as glob pages them: at most the limit, the withheld "
                "count, the total when nothing matches"
            )
        return (
            f"{len(cases)} trees paged as grep pages them: at most the limit, the withheld count, "
            f"lines cut at {MAX_LINE_CHARS} characters"
        )

    return judge


GLOB_PAGE = Part(
    "glob's page",
    ("page_paths",),
    cases_glob,
    _answers("page_paths"),
    _judges("page_paths", _glob_hint, "glob"),
)
GREP_PAGE = Part(
    "grep's page",
    ("page_matches",),
    cases_grep,
    _answers("page_matches"),
    _judges("page_matches", _grep_hint, "grep"),
)
