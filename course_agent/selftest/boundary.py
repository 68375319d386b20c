"""Extension check 3: a student's is_inside(root, path) agrees with paths.resolve_inside.

The cases are built in a temporary folder at check time, under names drawn from the seed: the
sibling-prefix trap (/r vs /r2), `..` out and back in, absolute paths, `~`, symlinks out, in and
back in, a symlink loop, and a root given through a symlink. Deliberately not handled: what
resolve_inside refuses for other reasons (an empty path, a NUL byte, a path over 4096 characters).
"""

from __future__ import annotations

import random
import string
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_agent.paths import resolve_inside
from course_agent.protocol import ToolError
from course_agent.selftest.judge import Part, caught, first_of, said

__all__ = ["BOUNDARY", "CASES", "BoundaryCase", "build_tree"]

RESOLVE = "resolve the path first (Path.resolve()), then compare"
HINTS = {
    "inside": "an ordinary path inside",
    "dots": f"a `..` can climb out: {RESOLVE}",
    "back in": "a `..` that comes back in is inside: resolve, don't scan for '..'",
    "sibling": "compare with the root plus a separator: a string prefix is not a parent",
    "absolute": "root / an absolute path is that absolute path: judge where it points",
    "tilde": "nothing expands ~: `~notes.txt` is a name in the root (an Office lock file is "
    "`~$report.docx`); only the resolved path decides",
    "link out": f"a symlink leads where it points: {RESOLVE}, which follows symlinks",
    "link in": "a symlink that stays inside is inside: compare its resolved target, not its name",
    "loop": "a symlink loop resolves nowhere: Path.resolve() raises RuntimeError (or OSError); "
    "catch it and say outside",
    "alias": "the root was given through a symlink: resolve the root too",
}


@dataclass(frozen=True)
class BoundaryCase:
    label: str  # what a student reads: "the sibling-prefix trap"
    hint: str  # a key of HINTS
    path: str  # "{base}" stands for the temporary folder, "{root}"/"{sibling}" for the names
    inside: bool  # what resolve_inside says: the test suite keeps the two in agreement


CASES = [
    BoundaryCase("a file inside", "inside", "src/a.txt", True),
    BoundaryCase("a file not created yet, inside", "inside", "src/new/deeper.txt", True),
    BoundaryCase("the root itself", "inside", ".", True),
    BoundaryCase("a .. that stays inside", "inside", "src/../docs/guide.md", True),
    BoundaryCase("a .. out and back in", "back in", "docs/../../{root}/src/a.txt", True),
    BoundaryCase("climbing out with ..", "dots", "../outside.txt", False),
    BoundaryCase("climbing out from a subfolder", "dots", "src/../../outside.txt", False),
    BoundaryCase("the sibling-prefix trap", "sibling", "../{sibling}/secret.txt", False),
    BoundaryCase(
        "the sibling-prefix trap, absolute", "sibling", "{base}/{sibling}/secret.txt", False
    ),
    BoundaryCase("the sibling folder itself, absolute", "sibling", "{base}/{sibling}", False),
    BoundaryCase("an absolute path inside", "absolute", "{base}/{root}/src/a.txt", True),
    BoundaryCase("an absolute path outside", "absolute", "{base}/outside.txt", False),
    BoundaryCase("the filesystem's root", "absolute", "/", False),
    BoundaryCase("a name starting with ~", "tilde", "~$report.docx", True),
    BoundaryCase("a folder named ~, inside", "tilde", "~/.ssh/id_rsa", True),
    BoundaryCase("a symlink out", "link out", "link-out", False),
    BoundaryCase("through a symlink to the sibling", "link out", "link-sibling/secret.txt", False),
    BoundaryCase("a symlink in", "link in", "link-in", True),
    BoundaryCase("through a symlink up to the root", "link in", "src/up/docs/guide.md", True),
    BoundaryCase("a symlink outside leading back in", "link in", "../{sibling}/back/a.txt", True),
    BoundaryCase("a symlink loop", "loop", "loop-a", False),
    BoundaryCase("through a symlink loop", "loop", "loop-a/x.txt", False),
]


def build_tree(base: Path, root: str, sibling: str) -> None:
    """base/{root} with files and symlinks, base/{sibling} beside it, base/outside.txt, and
    base/alias, a symlink to the root."""
    inside = base / root
    for name in ["src/a.txt", "docs/guide.md"]:
        (inside / name).parent.mkdir(parents=True, exist_ok=True)
        (inside / name).write_text("inside\n")
    (base / sibling).mkdir()
    (base / sibling / "secret.txt").write_text("secret\n")
    (base / "outside.txt").write_text("outside\n")
    links = {
        inside / "link-out": "../outside.txt",
        inside / "link-sibling": f"../{sibling}",
        inside / "link-in": "src/a.txt",
        inside / "src" / "up": "..",
        inside / "loop-a": "loop-b",
        inside / "loop-b": "loop-a",
        base / sibling / "back": f"../{root}/src",
        base / "alias": root,
    }
    for link, target in links.items():
        link.symlink_to(target)


def _names(rng: random.Random) -> tuple[str, str]:
    """A root's name and a sibling's that starts with it: app and app2, or r and r-secrets."""
    root = rng.choice(["r", "app", "work", "repo"]) + "".join(rng.choices(string.digits, k=2))
    return root, root + rng.choice(["2", "-secrets", "_old", "x"])


def _expected(root: Path, path: str) -> bool:
    try:
        resolve_inside(root, path)
    except ToolError:
        return False
    return True


def _ask(base: Path, rng: random.Random) -> list[dict[str, Any]]:
    root_name, sibling = _names(rng)
    build_tree(base, root_name, sibling)
    cases = []
    for case in rng.sample(CASES, len(CASES)):
        alias = rng.random() < 0.5
        root = base / ("alias" if alias else root_name)
        path = case.path.format(base=base, root=root_name, sibling=sibling)
        ask = {"root": root_name, "sibling": sibling, "alias": alias, "path": case.path}
        want = _expected(root, path)
        shown_path = case.path.format(base="<tmp>", root=root_name, sibling=sibling)
        where = f"{case.label} ({shown_path!r}, root <tmp>/{root.name})"
        cases.append({"ask": ask, "where": where, "hint": case.hint, "want": want})
    return cases


def cases_boundary(rng: random.Random) -> list[dict[str, Any]]:
    """Every case, in a drawn order, half asked of the root through its alias; the grader's
    verdicts come from resolve_inside on its own copy of the tree."""
    with tempfile.TemporaryDirectory(prefix="course-agent-boundary-") as tmp:
        return _ask(Path(tmp), rng)


def answer_boundary(asks: list[Any], functions: Mapping[str, Any]) -> list[Any]:
    """In the kernel: the tree built afresh, the student's verdict on each path (and, for a root
    given through the alias, on the resolved root too)."""
    is_inside, answers = functions["is_inside"], []
    with tempfile.TemporaryDirectory(prefix="course-agent-boundary-") as tmp:
        base = Path(tmp)
        build_tree(base, asks[0]["root"], asks[0]["sibling"])
        for ask in asks:
            root = base / ("alias" if ask["alias"] else ask["root"])
            path = ask["path"].format(base=base, root=ask["root"], sibling=ask["sibling"])
            answer: dict[str, Any] = {}
            for key, given in [("got", root), ("resolved", root.resolve())]:
                try:
                    value = is_inside(given, path)
                    answer[key] = value if type(value) is bool else {"bad": repr(value)[:80]}
                except Exception as exc:
                    answer[key] = caught(exc)
            answers.append(answer)
    return answers


def judge_boundary(cases: list[dict[str, Any]], answers: list[Any]) -> str:
    """In the grader: each verdict against resolve_inside's."""
    failures = []
    for case, answer in zip(cases, answers, strict=True):
        got, where, want = answer["got"], case["where"], case["want"]
        if isinstance(got, dict) and "raised" in got:
            failures.append(f"{where}: {said(got, 'is_inside')}; return True or False")
        elif not isinstance(got, bool):
            failures.append(f"{where}: is_inside returned {got['bad']}; return True or False")
        elif got != want:
            fooled = case["ask"]["alias"] and answer["resolved"] is want
            hint = HINTS["alias"] if fooled else HINTS[case["hint"]]
            failures.append(f"{where}: you said {'inside' if got else 'outside'}; {hint}")
    first_of(failures, len(cases), "paths")
    return (
        f"{len(cases)} paths judged as resolve_inside judges them: the sibling prefix, .., "
        "absolute, ~, symlinks out and in, a loop"
    )


BOUNDARY = Part("path boundary", ("is_inside",), cases_boundary, answer_boundary, judge_boundary)
